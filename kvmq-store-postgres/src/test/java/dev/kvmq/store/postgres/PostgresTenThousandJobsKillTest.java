package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.JobRecordPeek;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash test: two worker processes ({@link QueueNodeMain}) share one PostgreSQL; each
 * pushes 5,000 jobs while its worker runs; once a third of the jobs are done, one of them is killed
 * with SIGKILL while it holds leases (from then on its handler keeps the jobs it starts, so that it
 * surely holds some); the other finishes everything.
 *
 * <p>What was committed is known exactly: {@link JournalingStore} writes a journal entry in the
 * same atomic operation as every push, claim and completion. The test then checks that every pushed
 * job was completed exactly once (at least once is the contract; more than one completion would
 * mean a completion by a stale lease holder, since a completion deletes the job), that each
 * completion carried the fencing token of the job's latest claim, that the killed node's leases
 * were taken over with greater tokens, and that nothing is left.
 */
@PostgresTest
class PostgresTenThousandJobsKillTest {

  private static final int JOBS_PER_NODE = 5_000;
  private static final int JOBS = 2 * JOBS_PER_NODE;
  private static final Duration WAIT = Duration.ofSeconds(90);

  private TestDatabase db;

  @Test
  void tenThousandJobsFromTwoNodesAllCompleteOnceWhenOneNodeIsKilled(
      TestSchema fresh, @TempDir Path dir) throws Exception {
    db = fresh.db();
    String schema = fresh.name();
    Process victim = null;
    Process survivor = null;
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      store.count(KeyRange.all()); // create the schema before the nodes start
      long started = System.nanoTime();
      Path stall = dir.resolve("stall");
      victim = startNode(schema, "victim", dir.resolve("victim.out"), stall.toString());
      survivor = startNode(schema, "survivor", dir.resolve("survivor.out"), "-");
      ChildJvm.awaitLine(victim, dir.resolve("victim.out"), "PUSHED", WAIT);
      ChildJvm.awaitLine(survivor, dir.resolve("survivor.out"), "PUSHED", WAIT);

      TestDatabase.await(
          "a third of the jobs done",
          WAIT,
          () -> store.count(KeyRange.prefix(JournalingStore.DONE)) >= JOBS / 3);
      Files.createFile(stall);
      TestDatabase.await("the victim holds a lease", WAIT, () -> holdsLease(store, "victim"));
      victim.destroyForcibly(); // SIGKILL
      assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
      long doneAtKill = store.count(KeyRange.prefix(JournalingStore.DONE));

      Process alive = survivor;
      TestDatabase.await(
          "every job done",
          WAIT,
          () -> {
            assertThat(alive.isAlive()).as("the survivor runs").isTrue();
            return store.count(KeyRange.prefix(JournalingStore.DONE)) >= JOBS;
          });
      Queue<String> queue = Queue.builder(store, JournalingStore.QUEUE, Codecs.utf8()).build();
      TestDatabase.await(
          "the queue is empty", WAIT, () -> queue.counts().equals(new QueueCounts(0, 0, 0, 0)));
      double seconds = (System.nanoTime() - started) / 1e9;

      Map<String, String> pushed = new HashMap<>();
      for (KvEntry e : store.list(KeyRange.prefix(JournalingStore.PUSHED))) {
        pushed.put(JournalingStore.idOf(e.key()), node(e));
      }
      Map<String, TreeMap<Long, String>> claims = new HashMap<>();
      for (KvEntry e : store.list(KeyRange.prefix(JournalingStore.CLAIMED))) {
        claims
            .computeIfAbsent(e.key().getString(2), id -> new TreeMap<>())
            .put(e.key().getLong(3), node(e));
      }
      Map<String, List<Long>> done = new HashMap<>();
      Map<String, String> doneBy = new HashMap<>();
      for (KvEntry e : store.list(KeyRange.prefix(JournalingStore.DONE))) {
        done.computeIfAbsent(e.key().getString(2), id -> new ArrayList<>()).add(e.key().getLong(3));
        doneBy.put(e.key().getString(2), node(e));
      }

      assertThat(pushed).as("jobs pushed").hasSize(JOBS);
      assertThat(pushed.values().stream().filter("victim"::equals).count())
          .isEqualTo(JOBS_PER_NODE);
      assertThat(store.count(KeyRange.prefix(JournalingStore.JOBS)))
          .as("job records left")
          .isZero();
      assertThat(done.keySet())
          .as("every pushed job completed, no other")
          .isEqualTo(pushed.keySet());
      int takenOver = 0;
      for (String id : pushed.keySet()) {
        assertThat(done.get(id)).as("completions of %s", id).hasSize(1);
        TreeMap<Long, String> claimed = claims.get(id);
        assertThat(claimed).as("claims of %s", id).isNotNull();
        assertThat(new ArrayList<>(claimed.keySet()))
            .as("tokens of %s: one per claim, 1, 2, ...", id)
            .isEqualTo(java.util.stream.LongStream.rangeClosed(1, claimed.size()).boxed().toList());
        assertThat(done.get(id).get(0))
            .as("the completion of %s carries its latest claim's token", id)
            .isEqualTo(claimed.lastKey());
        assertThat(doneBy.get(id))
            .as("completed by the holder of the latest claim")
            .isEqualTo(claimed.lastEntry().getValue());
        if (claimed.size() > 1 && claimed.containsValue("victim")) {
          assertThat(claimed.lastEntry().getValue()).isEqualTo("survivor");
          takenOver++;
        }
      }
      assertThat(takenOver)
          .as("jobs the victim held when killed, then run by the survivor")
          .isPositive();
      long victimDone = doneBy.values().stream().filter("victim"::equals).count();
      System.out.printf(
          "kill test: %d jobs in %.1f s; %d done at the kill; victim completed %d, survivor %d;"
              + " %d taken over from the victim%n",
          JOBS, seconds, doneAtKill, victimDone, JOBS - victimDone, takenOver);
      survivor.destroy();
      assertThat(survivor.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      for (Process p : new Process[] {victim, survivor}) {
        if (p != null) {
          p.destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  /** True if a job is leased now, and its latest claim (by token) is {@code node}'s. */
  private static boolean holdsLease(PostgresKvStore store, String node) {
    for (KvEntry leased :
        store.list(KeyRange.prefix(Key.of("kvmq", JournalingStore.QUEUE, "leased")), 64, false)) {
      String id = JournalingStore.idOf(leased.key());
      Optional<KvEntry> record = store.get(JournalingStore.JOBS.append(id));
      if (record.isPresent()) {
        long token = JobRecordPeek.token(record.get().value());
        Optional<KvEntry> claim = store.get(JournalingStore.CLAIMED.append(id, token));
        if (claim.isPresent() && node(claim.get()).equals(node)) {
          return true;
        }
      }
    }
    return false;
  }

  private static String node(KvEntry e) {
    return new String(e.value(), StandardCharsets.UTF_8);
  }

  private Process startNode(String schema, String name, Path output, String stall)
      throws IOException {
    return ChildJvm.start(
        output,
        List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
        QueueNodeMain.class,
        db.jdbcUrl(),
        schema,
        name,
        Integer.toString(JOBS_PER_NODE),
        stall);
  }
}
