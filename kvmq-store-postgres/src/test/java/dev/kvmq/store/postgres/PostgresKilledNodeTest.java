package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node is killed with SIGKILL ({@link Process#destroyForcibly()}) while it runs a job and commits
 * as fast as it can: the database rolls back whatever it had open, the other node keeps committing,
 * reclaims the job when its lease expires, and runs it to completion.
 */
@PostgresTest
class PostgresKilledNodeTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private TestDatabase db;

  @Test
  void aKilledNodesJobIsReclaimedAndCompletedByTheOtherNode(TestSchema fresh, @TempDir Path dir)
      throws Exception {
    db = fresh.db();
    String schema = fresh.name();
    Path output = dir.resolve("child.out");
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    Process child = null;
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      Queue<String> queue = Queue.builder(store, "jobs", Codecs.utf8()).build();
      store.count(KeyRange.all()); // create the schema before the child starts

      child = startChild(schema, output);
      ChildJvm.awaitLine(child, output, "READY", WAIT);
      queue.push("victim");
      String running = ChildJvm.awaitLine(child, output, "RUNNING victim", WAIT);
      long childToken = Long.parseLong(running.substring(running.lastIndexOf(' ') + 1));

      child.destroyForcibly();
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

      // Whatever the child had open is rolled back: commits do not stall on its locks.
      TestDatabase.await(
          "a commit after the kill",
          WAIT,
          () ->
              store
                  .commit(
                      AtomicOperation.builder()
                          .set(Key.of("after", "kill"), new byte[] {1})
                          .build())
                  .ok());

      Map<String, Long> ranWithToken = new ConcurrentHashMap<>();
      Worker<String> survivor =
          queue.worker(
              (job, ctx) -> ranWithToken.put(job.state(), ctx.token()),
              WorkerOptions.defaults()
                  .lease(Duration.ofSeconds(2), Duration.ofMillis(300))
                  .pollInterval(Duration.ofMillis(200)),
              executor);
      survivor.start();
      TestDatabase.await(
          "the survivor runs the victim", WAIT, () -> ranWithToken.containsKey("victim"));
      TestDatabase.await(
          "the queue is empty", WAIT, () -> queue.counts().equals(new QueueCounts(0, 0, 0, 0)));
      assertThat(ranWithToken.get("victim"))
          .as("a new claim, with a greater fencing token")
          .isGreaterThan(childToken);
      assertThat(survivor.stop(Duration.ofSeconds(10))).isTrue();
    } finally {
      if (child != null) {
        child.destroyForcibly();
      }
      executor.shutdownNow();
    }
  }

  private Process startChild(String schema, Path output) throws IOException {
    return ChildJvm.start(output, List.of("-Xmx256m"), KilledNodeMain.class, db.jdbcUrl(), schema);
  }
}
