package dev.kvmq;

import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Processes a queue's jobs with a {@link JobHandler}. The seed's {@code Worker}, with its defects
 * fixed: claims read a bounded index range instead of scanning the queue; idle workers wait for the
 * store's change notification (polling only as a fallback); a worker whose lease was taken over
 * cannot complete, fail or update the job; stopping tells the running handlers.
 *
 * <p>Threads and time come from outside: every task runs on the given executor (in a Jakarta EE
 * server, the container's managed one), and time is the queue's clock. The worker:
 *
 * <ul>
 *   <li>claims up to {@code concurrency} due jobs at a time, in queue order, in one commit, plus up
 *       to {@code prefetch} more that wait, leased, for a free handler slot: a handler thread that
 *       finishes takes the next of those at once;
 *   <li>with {@link WorkerOptions#handoff()}, takes a job pushed through its queue object while a
 *       handler slot is idle in the push's own commit ({@link Handoff}), with no claim;
 *   <li>promotes delayed jobs whose time has come and reclaims jobs whose lease expired;
 *   <li>renews the leases of running jobs every {@code renewInterval}, in one commit;
 *   <li>records completions and failures through a group committer: many handler threads' outcomes
 *       share one commit, and a handler thread does not wait for it; while a pass runs, they wait
 *       for its claim and share its commit;
 *   <li>reports {@link JobEvent}s to its listeners after the commit that made them true.
 * </ul>
 *
 * <p>Thread-safe. Start once; stop once (later calls return the same future).
 *
 * <p>Inside, one class per concern: {@link Pass} decides when to claim (and promotes and reclaims),
 * {@link Slots} runs handlers on their slots and keeps the jobs claimed ahead, {@link Renewer}
 * renews leases, {@link Settler} records outcomes through a {@link GroupCommitter}, {@link
 * Reporter} tells listeners and the log, {@link Lease} is one held job, {@link Handoff} takes the
 * jobs a push hands it; {@link WorkerCore} is what they share. This class is the lifecycle: start,
 * stop, drain. Its lock ({@code lifecycle}) guards the phase changes, the renewal task and the
 * subscription; it is never held while calling the store or a handler.
 *
 * @param <S> the state type
 */
public final class Worker<S> {

  private final Queue<S> queue;
  private final WorkerCore<S> core;
  private final Slots<S> slots;
  private final Pass<S> pass;
  final Renewer<S> renewer; // package-private: tests race a renewal with a job's end
  private final Handoff<S> handoff;
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private final Object lifecycle = new Object();
  // guarded by lifecycle
  private ScheduledFuture<?> renewal;
  private KvStore.Subscription subscription;

  Worker(
      Queue<S> queue,
      JobHandler<S> handler,
      WorkerOptions options,
      ScheduledExecutorService executor) {
    this.queue = Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(executor, "executor");
    this.core = new WorkerCore<>(queue, options, executor, this::stopQuietly, this::finishStop);
    this.renewer = new Renewer<>(core);
    GroupCommitter committer = new GroupCommitter(core.store);
    this.slots = new Slots<>(core, handler, new Settler<>(core, committer), renewer);
    this.pass = new Pass<>(core, slots, committer);
    slots.attach(pass);
    this.handoff = new Handoff<>(core, slots, pass);
  }

  // ---- public API

  /**
   * Adds a listener for completions, failures, snoozes and lost leases. Listeners run after the
   * commit, on the thread that committed; they must be quick and must not throw (what they throw is
   * logged and ignored).
   *
   * @param listener the listener
   * @return this worker
   * @throws NullPointerException if {@code listener} is null
   */
  public Worker<S> addListener(Consumer<? super JobEvent<S>> listener) {
    core.reporter.addListener(listener);
    return this;
  }

  /**
   * Starts processing: subscribes to the store's changes, schedules lease renewal, and claims the
   * first jobs. The seed's {@code processJobs}.
   *
   * @throws IllegalStateException if the worker was already started, or stopped
   * @throws RejectedExecutionException if the executor refuses the worker's tasks
   */
  public void start() {
    synchronized (lifecycle) {
      if (core.phase != WorkerCore.Phase.NEW) {
        throw new IllegalStateException(
            "worker for queue "
                + queue.name()
                + (core.phase == WorkerCore.Phase.RUNNING
                    ? " was already started"
                    : " was stopped (a worker starts once)")
                + "; make a new one");
      }
      core.phase = WorkerCore.Phase.RUNNING;
      if (core.options.handoff()) {
        // no handoff before the first pass has looked (Pass.takesHandoffs); none once stopping
        queue.takers.add(handoff);
      }
      long renewMillis = core.options.renewInterval().toMillis();
      renewal =
          core.executor.scheduleAtFixedRate(
              WorkerCore.named(
                  "the lease renewal of a worker of queue " + queue.name(), renewer::renewAll),
              renewMillis,
              renewMillis,
              TimeUnit.MILLISECONDS);
    }
    KvStore store = core.store;
    if (store.notifiesChanges()) {
      // Only what can give this worker work: a ready job, a delayed one (its wake may be
      // earlier than the one scheduled), a pause or resume. Renewals and completions on
      // other nodes wake nobody.
      List<KvStore.Subscription> subs = new ArrayList<>();
      subs.add(store.subscribe(core.keys.readyIndex(), pass::request));
      subs.add(store.subscribe(core.keys.delayedIndex(), pass::delayedChanged));
      subs.add(store.subscribe(core.keys.paused, pass::pausedChanged));
      // a schedule defined, resumed or replaced may be due before the planned wake
      subs.add(store.subscribe(core.keys.dueIndex(), pass::delayedChanged));
      // a job this worker runs may have been cancelled: its handler is told at once
      subs.add(store.subscribe(core.keys.cancelledIndex(), renewer::cancelsChanged));
      KvStore.Subscription all = () -> subs.forEach(KvStore.Subscription::close);
      boolean stoppedMeanwhile;
      synchronized (lifecycle) {
        stoppedMeanwhile = !core.running();
        subscription = stoppedMeanwhile ? null : all;
      }
      if (stoppedMeanwhile) {
        all.close();
      }
    }
    pass.request();
  }

  /**
   * Stops claiming jobs and tells running handlers ({@link
   * JobContext.CancelReason#WORKER_STOPPING}). Their leases are renewed until they finish; jobs
   * claimed ahead and not started are given back. Does not wait. The seed's {@code stopProcessing},
   * which gave handlers no signal.
   *
   * @return a future that completes when every running handler has finished and its outcome is
   *     recorded
   */
  public CompletableFuture<Void> stop() {
    List<Lease<S>> toCancel;
    KvStore.Subscription subs;
    synchronized (lifecycle) {
      if (core.phase == WorkerCore.Phase.NEW) {
        core.phase = WorkerCore.Phase.STOPPED;
        stopped.complete(null);
        return stopped.copy();
      }
      if (core.phase != WorkerCore.Phase.RUNNING) {
        return stopped.copy();
      }
      core.phase = WorkerCore.Phase.STOPPING;
      queue.takers.remove(handoff);
      toCancel = new ArrayList<>(core.active.values());
      subs = subscription;
    }
    pass.cancelWake();
    if (subs != null) {
      subs.close();
    }
    for (Lease<S> l : toCancel) {
      l.cancel(JobContext.CancelReason.WORKER_STOPPING);
    }
    slots.releaseWaiting();
    if (core.drained()) {
      finishStop();
    }
    return stopped.copy();
  }

  private void stopQuietly() {
    stop();
  }

  /**
   * Stops and waits up to {@code timeout} for running handlers to finish. A handler still running
   * after that keeps its lease until it finishes; if the process ends first, the lease expires and
   * the job runs again.
   *
   * <p>Do not call it from a thread of this worker's executor if that executor has one thread: the
   * handlers it waits for would never run.
   *
   * @param timeout the longest wait
   * @return true if everything finished in time
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalStateException if stopping failed (a bug)
   */
  public boolean stop(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    try {
      stop()
          .get(
              timeout.compareTo(Duration.ofMillis(Long.MAX_VALUE)) > 0
                  ? Long.MAX_VALUE
                  : timeout.toMillis(),
              TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("stopping failed. Indicates a bug.", e);
    }
  }

  private void finishStop() {
    synchronized (lifecycle) {
      if (core.phase == WorkerCore.Phase.STOPPED || !core.drained()) {
        return;
      }
      core.phase = WorkerCore.Phase.STOPPED;
      if (renewal != null) {
        renewal.cancel(false);
      }
    }
    stopped.complete(null);
  }

  /**
   * Tells whether the worker is claiming jobs (started and not stopped).
   *
   * @return true while running
   */
  public boolean isProcessing() {
    return core.running();
  }

  /**
   * Returns the ids of the jobs this worker holds now: running, claimed ahead and waiting for a
   * handler slot, or finished with their outcome not yet committed.
   *
   * @return a snapshot of the ids
   */
  public Set<String> activeJobs() {
    return Set.copyOf(core.active.keySet());
  }

  /**
   * Returns the worker's options.
   *
   * @return the options
   */
  public WorkerOptions options() {
    return core.options;
  }

  /**
   * Returns the worker's queue.
   *
   * @return the queue
   */
  public Queue<S> queue() {
    return queue;
  }
}
