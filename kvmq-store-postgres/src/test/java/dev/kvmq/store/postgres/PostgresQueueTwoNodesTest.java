package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel's queue on two {@link PostgresKvStore} nodes sharing one database: workers on both
 * drain jobs pushed from both, each job once, and an idle worker is woken by a push on the other
 * node (its poll interval is far too long to find the job in time by polling).
 */
@PostgresTest
class PostgresQueueTwoNodesTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** So long that only a notification can wake an idle worker within the test. */
  private static final Duration NO_POLLING = Duration.ofMinutes(10);

  private TestDatabase db;
  private String schema;
  private PostgresKvStore a;
  private PostgresKvStore b;
  private final List<ScheduledExecutorService> executors = new ArrayList<>();
  private final List<Worker<String>> workers = new ArrayList<>();

  @BeforeEach
  void openTwoNodes(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    a = PostgresKvStore.builder(db.pool()).schema(schema).build();
    b = PostgresKvStore.builder(db.pool()).schema(schema).build();
  }

  @AfterEach
  void closeNodes() throws InterruptedException {
    for (Worker<String> w : workers) {
      w.stop(Duration.ofSeconds(10));
    }
    executors.forEach(ScheduledExecutorService::shutdownNow);
    a.close();
    b.close();
  }

  @Test
  void workersOnTwoNodesDrainJobsPushedFromBothEachOnce() {
    Queue<String> onA = Queue.builder(a, "jobs", Codecs.utf8()).build();
    Queue<String> onB = Queue.builder(b, "jobs", Codecs.utf8()).build();
    Map<String, String> ranOn = new ConcurrentHashMap<>();
    AtomicInteger runs = new AtomicInteger();
    start(onA, "a", ranOn, runs);
    start(onB, "b", ranOn, runs);

    int perNode = 40;
    List<String> pushed = new ArrayList<>();
    for (int i = 0; i < perNode; i++) {
      onA.push("a-" + i);
      onB.push("b-" + i);
      pushed.add("a-" + i);
      pushed.add("b-" + i);
    }

    TestDatabase.await("every job ran", WAIT, () -> ranOn.size() == pushed.size());
    TestDatabase.await(
        "the queue is empty", WAIT, () -> onA.counts().equals(new QueueCounts(0, 0, 0, 0)));
    assertThat(ranOn.keySet()).containsExactlyInAnyOrderElementsOf(pushed);
    assertThat(runs.get()).as("no job ran twice").isEqualTo(pushed.size());
  }

  @Test
  void anIdleWorkerIsWokenByAPushOnTheOtherNode() {
    Queue<String> onA = Queue.builder(a, "jobs", Codecs.utf8()).build();
    Queue<String> onB = Queue.builder(b, "jobs", Codecs.utf8()).build();
    Map<String, String> ranOn = new ConcurrentHashMap<>();
    start(onB, "b", ranOn, new AtomicInteger());
    TestDatabase.await("b listens", WAIT, b::isListening);

    onA.push("wake up", JobOptions.defaults());

    TestDatabase.await(
        "b ran the job pushed on a", Duration.ofSeconds(20), () -> ranOn.containsKey("wake up"));
    assertThat(ranOn).containsEntry("wake up", "b");
  }

  private void start(
      Queue<String> queue, String node, Map<String, String> ranOn, AtomicInteger runs) {
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    executors.add(executor);
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              runs.incrementAndGet();
              ranOn.merge(job.state(), node, (x, y) -> x + "," + y);
            },
            WorkerOptions.defaults().concurrency(2).pollInterval(NO_POLLING),
            executor);
    workers.add(worker);
    worker.start();
  }
}
