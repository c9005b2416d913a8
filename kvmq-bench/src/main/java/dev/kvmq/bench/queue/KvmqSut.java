package dev.kvmq.bench.queue;

import dev.kvmq.Codec;
import dev.kvmq.JobEvent;
import dev.kvmq.JobFilter;
import dev.kvmq.JobOptions;
import dev.kvmq.JobPage;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.Retention;
import dev.kvmq.UniqueKey;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * kvmq on one store: a queue, and per processing phase a worker on its own executor.
 *
 * <p>The queue keeps no finished job ({@link Retention#none()}): a completion deletes its job in
 * its own commit, as db-scheduler deletes a finished one-time execution and Quartz a fired trigger.
 * kvmq's default keeps completed jobs for their history, which costs a record update and an index
 * entry per completion and the pruning after; the prune scenario measures that cost.
 */
@SuppressWarnings("try") // close() may be interrupted while the system stops; callers pass it on
final class KvmqSut implements Sut {

  /** A job's state: one int, 4 bytes. */
  static final Codec<Integer> INT =
      new Codec<>() {
        @Override
        public byte[] encode(Integer value) {
          return ByteBuffer.allocate(4).putInt(value).array();
        }

        @Override
        public Integer decode(byte[] bytes) {
          return ByteBuffer.wrap(bytes).getInt();
        }
      };

  private final KvStore store;

  /** Threads beyond the handler slots, for the worker's passes and lease renewals. */
  static final int WORKER_TASK_THREADS = 2;

  private final String settings;
  private final AutoCloseable onClose;
  private Queue<Integer> queue;

  /** What the settings say of the queue's retention. */
  private String retention = "none";

  /** Jobs claimed ahead; negative: three times the concurrency. */
  private final int prefetch;

  /** Whether the worker takes handoffs (WorkerOptions.handoff). */
  private final boolean handoff;

  KvmqSut(KvStore store, String settings, int prefetch, boolean handoff, AutoCloseable onClose) {
    this.store = store;
    this.settings = settings;
    this.prefetch = prefetch;
    this.handoff = handoff;
    this.onClose = onClose;
    this.queue = Queue.builder(store, "bench", INT).retention(Retention.none()).build();
  }

  /**
   * The queue's retention from now on (the prune scenario): the same queue on the same store, made
   * again with {@code retention}; call it while no worker runs.
   */
  void retention(Retention retention) {
    this.queue = Queue.builder(store, "bench", INT).retention(retention).build();
    this.retention = retention.toString();
  }

  /** How many completed jobs the queue keeps now. */
  long completedKept() {
    return queue.count(JobFilter.status(JobStatus.COMPLETED));
  }

  /**
   * Whether any job is still to run (the nodes scenario): waiting, delayed or processing, in the
   * store, whichever JVM pushed or claimed it. Three reads of at most one job each, so that the
   * JVMs that poll it while they drain add little to the database's load (counting would read every
   * job still queued, on every poll of every JVM).
   */
  boolean anyPending() {
    for (JobStatus s : List.of(JobStatus.WAITING, JobStatus.DELAYED, JobStatus.PROCESSING)) {
      JobPage<Integer> page = queue.list(JobFilter.status(s), null, 1);
      // an empty page with a cursor: the entry read first had moved on (another JVM claimed
      // or completed it) before its record was read; more may follow
      if (!page.jobs().isEmpty() || page.next().isPresent()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String settings() {
    return settings + " retention=" + retention;
  }

  @Override
  public void pushOne(int id) {
    queue.push(id, JobOptions.defaults());
  }

  /** A key per job, taken while it waits or runs: released by its completion's commit. */
  @Override
  public void pushOneUnique(int id) {
    if (!queue
        .offer(id, JobOptions.defaults().unique(UniqueKey.whileWaitingOrRunning("job-" + id)))
        .created()) {
      throw new IllegalStateException("job " + id + ": its unique key was taken");
    }
  }

  @Override
  public void pushBatch(List<Integer> ids) {
    queue.pushAll(ids, JobOptions.defaults());
  }

  @Override
  public void pushDelayed(List<Integer> ids, Duration delay) {
    queue.pushAll(ids, JobOptions.defaults().delay(delay));
  }

  @Override
  public AutoCloseable start(int threads) {
    // `threads` handler slots, plus threads for the worker's own tasks (its passes and lease
    // renewals), which run on the same executor: kvmq-jakarta sizes its pool the same way, and
    // the peers run their schedulers on threads of their own beside their handler threads.
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(threads + WORKER_TASK_THREADS);
    // A handler thread may ask for one more pass just as the worker stops; once the executor
    // shuts down that request is moot: drop it quietly.
    executor.setRejectedExecutionHandler(new ThreadPoolExecutor.DiscardPolicy());
    Worker<Integer> worker =
        queue.worker(
            (job, ctx) -> Probe.started(job.state()),
            WorkerOptions.defaults()
                .concurrency(threads)
                .prefetch(prefetch < 0 ? 3 * threads : prefetch)
                .handoff(handoff),
            executor);
    worker.addListener(
        e -> {
          if (e instanceof JobEvent.Completed<Integer> c) {
            Probe.finished(c.job().state());
          }
        });
    worker.start();
    return () -> {
      worker.stop(Duration.ofSeconds(30));
      executor.shutdown();
      executor.awaitTermination(30, TimeUnit.SECONDS);
    };
  }

  @Override
  public void close() throws Exception {
    store.close();
    if (onClose != null) {
      onClose.close();
    }
  }

  /**
   * Runs the store's background storage work to the end, where it has any: EclipseStore's
   * housekeeping cycle (a garbage collection, then a file check), which writing a large backlog
   * starts and which otherwise runs in slices between the next commits. The claim scenario calls it
   * after building each backlog, as it checkpoints PostgreSQL there.
   *
   * @return the milliseconds it took, or -1 if the store has no such work
   */
  double settle() {
    if (!(store instanceof EclipseStoreKvStore es)) {
      return -1;
    }
    long t0 = System.nanoTime();
    es.compact();
    return (System.nanoTime() - t0) / 1e6;
  }
}
