package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel's queue on two {@link PostgresKvStore} nodes sharing one database: workers on both
 * drain jobs pushed from both, each job once; an idle worker is woken by a push on the other node
 * (its poll interval is far too long to find the job in time by polling); a node that stalls past
 * its leases has its jobs taken over, and its stale outcomes are refused.
 */
@PostgresTest
class PostgresQueueTwoNodesTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** So long that only a notification can wake an idle worker within the test. */
  private static final Duration NO_POLLING = Duration.ofMinutes(10);

  /** The lease of the stalled-node test: short, so that it expires within the test. */
  private static final Duration LEASE = Duration.ofSeconds(1);

  private static final Duration RENEW_EVERY = Duration.ofMillis(200);

  /** How many of node A's handler calls stall, one at a time, in the stalled-node test. */
  private static final int STALLS = 2;

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

  /**
   * A node that stalls (a long GC pause, a frozen VM) while it runs jobs, on real threads and a
   * real PostgreSQL: the kernel's simulation stalls handlers on one thread ({@code Stalls}); this
   * is the same fault with two nodes' threads racing. Node A's worker runs on an executor whose
   * tasks wait at a gate while A stalls, so its lease renewals stop; A's first handler calls (up to
   * {@link #STALLS}, one at a time) each close the gate until node B has run their job again, and
   * then return. Node B's worker takes the stalled jobs over once their leases expire, and holds a
   * job it took over from a run of A's until A has tried to record that run's outcome, so that A's
   * stale outcome meets B's live lease. Every job is completed once, by one node; a job B took over
   * from a run of A's is completed by B, and A reports that run's lease lost (not as a cancel); B,
   * which never stalls, loses no lease. With the token check taken out of both {@code
   * Lease.refresh} and {@code Transitions.holds}, A's stale completion was accepted over B's live
   * lease and this test failed.
   */
  @Test
  void aStalledNodesJobsAreTakenOverAndItsStaleOutcomesRefused() {
    Queue<String> onA = Queue.builder(a, "stall", Codecs.utf8()).build();
    Queue<String> onB = Queue.builder(b, "stall", Codecs.utf8()).build();
    Gated gateOfA = new Gated(3);
    executors.add(gateOfA);
    Map<String, Long> ranOnA = new ConcurrentHashMap<>(); // job id -> token of A's run
    Map<String, Long> ranOnB = new ConcurrentHashMap<>(); // job id -> token of B's run
    Map<String, List<String>> completedBy = new ConcurrentHashMap<>(); // job id -> nodes
    Map<String, List<JobEvent.LeaseLost<String>>> lost = new ConcurrentHashMap<>(); // node ->
    Set<String> settledOnA = ConcurrentHashMap.newKeySet(); // A reported the outcome of its run
    AtomicInteger stallsLeft = new AtomicInteger(STALLS);
    AtomicBoolean stalling = new AtomicBoolean();

    Worker<String> workerA =
        onA.worker(
            (job, ctx) -> {
              ranOnA.put(job.id(), ctx.token());
              if (stallsLeft.get() > 0 && stalling.compareAndSet(false, true)) {
                try {
                  stallsLeft.decrementAndGet();
                  // the process freezes, no renewal runs, until B has run the job again
                  gateOfA.stallUntil(() -> ranOnB.getOrDefault(job.id(), 0L) > ctx.token(), WAIT);
                } finally {
                  stalling.set(false);
                }
              }
            },
            options(),
            gateOfA);
    ScheduledExecutorService executorB = new ScheduledThreadPoolExecutor(3);
    executors.add(executorB);
    Worker<String> workerB =
        onB.worker(
            (job, ctx) -> {
              ranOnB.put(job.id(), ctx.token());
              if (ranOnA.containsKey(job.id())) {
                // taken over from A's stalled run: hold the lease until A, awake again, has
                // tried to record that run's outcome, so that A's attempt meets B's live lease
                TestDatabase.await(
                    "A's outcome of " + job.id(), WAIT, () -> settledOnA.contains(job.id()));
              }
            },
            options(),
            executorB);
    record Node(String name, Worker<String> worker) {}
    for (Node n : List.of(new Node("A", workerA), new Node("B", workerB))) {
      lost.put(n.name(), new CopyOnWriteArrayList<>());
      n.worker()
          .addListener(
              e -> {
                if (e instanceof JobEvent.Completed<String> c) {
                  completedBy
                      .computeIfAbsent(c.job().id(), x -> new CopyOnWriteArrayList<>())
                      .add(n.name());
                }
                if (e instanceof JobEvent.LeaseLost<String> l) {
                  lost.get(n.name()).add(l);
                }
                if (n.worker() == workerA) {
                  settledOnA.add(e.job().id());
                }
              });
      workers.add(n.worker());
    }
    workerA.start();

    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      ids.add(onA.push("a-" + i).id());
      ids.add(onB.push("b-" + i).id());
    }
    // B starts once A has stalled, so that A holds jobs when it does
    TestDatabase.await("node A stalls", WAIT, stalling::get);
    workerB.start();

    TestDatabase.await(
        "every job completed, and A, no longer stalled, reported the outcome of every run",
        WAIT,
        () ->
            completedBy.keySet().containsAll(ids)
                && !stalling.get()
                && settledOnA.containsAll(ranOnA.keySet()));
    TestDatabase.await(
        "the queue is empty", WAIT, () -> onA.counts().equals(new QueueCounts(0, 0, 0, 0)));

    assertThat(completedBy.keySet()).as("the jobs completed").hasSameElementsAs(ids);
    for (String id : ids) {
      assertThat(completedBy.get(id)).as("the nodes that completed %s", id).hasSize(1);
    }
    // a run of A's whose job B ran again under a newer lease: A's outcome was refused
    List<String> takenOver =
        ranOnA.keySet().stream()
            .filter(id -> ranOnB.getOrDefault(id, 0L) > ranOnA.get(id))
            .toList();
    assertThat(takenOver).as("runs of A's stalled node that B took over").isNotEmpty();
    for (String id : takenOver) {
      assertThat(completedBy.get(id)).as("%s, taken over by B", id).containsExactly("B");
      assertThat(lost.get("A"))
          .as("A's lost leases")
          .anySatisfy(
              l -> {
                assertThat(l.job().id()).isEqualTo(id);
                assertThat(l.job().token()).isEqualTo(ranOnA.get(id));
              });
    }
    assertThat(lost.get("A")).allSatisfy(l -> assertThat(l.cancelled()).isFalse());
    assertThat(lost.get("B")).as("B, which never stalled, lost no lease").isEmpty();
  }

  private static WorkerOptions options() {
    return WorkerOptions.defaults()
        .concurrency(2)
        .lease(LEASE, RENEW_EVERY)
        .pollInterval(Duration.ofMillis(50));
  }

  /**
   * An executor whose tasks wait at a gate while {@link #stallUntil} runs: the worker's renewals,
   * claims and handler starts on this node stop, as in a frozen process; a task already running
   * goes on.
   */
  private static final class Gated extends ScheduledThreadPoolExecutor {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition open = lock.newCondition();
    private boolean closed;

    Gated(int threads) {
      super(threads);
    }

    /**
     * Closes the gate until {@code over} holds, polled on the calling thread, or until {@code
     * atMost} has passed (then the test's assertions say what did not happen); then opens it.
     */
    void stallUntil(BooleanSupplier over, Duration atMost) {
      lock.lock();
      try {
        closed = true;
      } finally {
        lock.unlock();
      }
      try {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (!over.getAsBoolean() && System.nanoTime() < deadline) {
          LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
      } finally {
        lock.lock();
        try {
          closed = false;
          open.signalAll();
        } finally {
          lock.unlock();
        }
      }
    }

    @Override
    protected void beforeExecute(Thread t, Runnable r) {
      lock.lock();
      try {
        while (closed) {
          open.awaitUninterruptibly();
        }
      } finally {
        lock.unlock();
      }
      super.beforeExecute(t, r);
    }
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
