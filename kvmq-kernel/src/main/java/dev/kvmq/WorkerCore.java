package dev.kvmq;

import dev.kvmq.store.KvStore;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the parts of one {@link Worker} share: its queue, options and executor, its phase, the
 * leases it holds, and the count of work that stopping waits for.
 *
 * <p>Locking: none of its own. {@code phase} is written by {@link Worker} under its lifecycle lock
 * and read here without one (volatile); {@code active} is a concurrent map; {@code inFlight} is
 * atomic. Whoever brings {@code inFlight} to zero while the worker is stopping calls {@code
 * whenDrained}, which finishes the stop.
 *
 * @param <S> the state type
 */
final class WorkerCore<S> {

  /** Where the worker is in its life. */
  enum Phase {
    NEW,
    RUNNING,
    STOPPING,
    STOPPED
  }

  final Queue<S> queue;
  final QueueKeys keys;
  final KvStore store;
  final WorkerOptions options;
  final ScheduledExecutorService executor;
  final long leaseMillis;
  final Reporter<S> reporter;

  /** The jobs this worker holds: running, claimed ahead, or finished and not yet settled. */
  final Map<String, Lease<S>> active = new ConcurrentHashMap<>();

  /** Work that stopping waits for: a pass under way, and claimed jobs not yet settled. */
  private final AtomicInteger inFlight = new AtomicInteger();

  /** Jobs this worker has finished with; ends the pruner's busy gaps early (Pruner). */
  private final AtomicLong finished = new AtomicLong();

  private final Runnable whenDrained;
  private final Runnable stopWorker;
  volatile Phase phase = Phase.NEW;

  WorkerCore(
      Queue<S> queue,
      WorkerOptions options,
      ScheduledExecutorService executor,
      Runnable stopWorker,
      Runnable whenDrained) {
    this.queue = queue;
    this.keys = queue.keys;
    this.store = queue.store;
    this.options = options;
    this.executor = executor;
    this.leaseMillis = options.leaseDuration().toMillis();
    this.reporter =
        new Reporter<>(queue, options, () -> phase == Phase.STOPPING || phase == Phase.STOPPED);
    this.stopWorker = stopWorker;
    this.whenDrained = whenDrained;
  }

  boolean running() {
    return phase == Phase.RUNNING;
  }

  long now() {
    return queue.clock.millis();
  }

  /** A job was claimed: it is held, and stopping waits until it is settled. */
  Lease<S> hold(JobRecord record, long versionstamp) {
    Lease<S> lease = new Lease<>(this, record, versionstamp);
    active.put(lease.id, lease);
    inFlight.incrementAndGet();
    return lease;
  }

  /** The job's outcome is recorded (or given up): the worker no longer holds it. */
  void settled(Lease<S> lease) {
    if (active.remove(lease.id, lease)) {
      finished.incrementAndGet();
    }
    leave();
  }

  /** How many jobs this worker has finished with (outcome recorded or given up) so far. */
  long finishedJobs() {
    return finished.get();
  }

  /** Work that stopping waits for begins. */
  void enter() {
    inFlight.incrementAndGet();
  }

  /** Work that stopping waits for ends. */
  void leave() {
    if (inFlight.decrementAndGet() == 0 && phase == Phase.STOPPING) {
      whenDrained.run();
    }
  }

  boolean drained() {
    return inFlight.get() == 0;
  }

  /**
   * A task for the executor that says what it is ({@code toString}): a test's {@link
   * dev.kvmq.testkit.ManualScheduler} names it when a run goes on too long, an executor in its
   * rejection messages.
   */
  static Runnable named(String what, Runnable task) {
    return new Runnable() {
      @Override
      public void run() {
        task.run();
      }

      @Override
      public String toString() {
        return what;
      }
    };
  }

  /** A handler asked the worker to stop ({@link JobContext#stopProcessing()}). */
  void stopWorker() {
    stopWorker.run();
  }
}
