package dev.kvmq;

import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Processes a queue's jobs with a {@link JobHandler}. The seed's {@code Worker}, with its
 * defects fixed: claims read a bounded index range instead of scanning the queue; idle
 * workers wait for the store's change notification (polling only as a fallback); a worker
 * whose lease was taken over cannot complete, fail or update the job; stopping tells the
 * running handlers.
 *
 * <p>Threads and time come from outside: every task runs on the given executor (in a
 * Jakarta EE server, the container's managed one), and time is the queue's clock. The
 * worker:
 * <ul>
 *   <li>claims up to {@code concurrency} due jobs at a time, in queue order, in one commit,
 *       plus up to {@code prefetch} more that wait, leased, for a free handler slot: a handler
 *       thread that finishes takes the next of those at once;</li>
 *   <li>promotes delayed jobs whose time has come and reclaims jobs whose lease expired;</li>
 *   <li>renews the leases of running jobs every {@code renewInterval}, in one commit;</li>
 *   <li>records completions and failures through a group committer: many handler threads'
 *       outcomes share one commit, and a handler thread does not wait for it;</li>
 *   <li>reports {@link JobEvent}s to its listeners after the commit that made them true.</li>
 * </ul>
 *
 * <p>Thread-safe. Start once; stop once (later calls return the same future).
 *
 * @param <S> the state type
 */
public final class Worker<S> {

  private static final System.Logger LOG = System.getLogger(Worker.class.getName());
  private static final int SETTLE_RETRIES = 5;

  private enum Phase { NEW, RUNNING, STOPPING, STOPPED }

  private final Queue<S> queue;
  private final QueueKeys keys;
  private final KvStore store;
  private final JobHandler<S> handler;
  private final WorkerOptions options;
  private final ScheduledExecutorService executor;
  private final GroupCommitter committer;
  private final Claimer claimer;
  private final long leaseMillis;

  private final Map<String, Lease> active = new ConcurrentHashMap<>();
  /** Handler slots taken. */
  private final AtomicInteger running = new AtomicInteger();
  /** Jobs claimed ahead, in queue order, waiting for a handler slot; also in {@link #active}. */
  private final ConcurrentLinkedQueue<Lease> prefetched = new ConcurrentLinkedQueue<>();
  /** The size of {@link #prefetched} (whose own size() counts its nodes). */
  private final AtomicInteger prefetchedCount = new AtomicInteger();
  /**
   * The queue is paused (or concurrency is 0), as the last pass read it, or a change of the
   * paused key was heard since: handler threads start no job claimed ahead while it is set.
   */
  private volatile boolean pausedSeen;
  /**
   * Set when the store announces a change of the paused key; a pass reads the key only then,
   * at least every pollInterval, or always if the store can't notify.
   */
  private volatile boolean pausedChanged = true;
  /** Set when the store announces a change of the delayed index: a pass must look at it. */
  private volatile boolean delayedChanged = true;
  /** Pump only: when the paused key must be read again at the latest. */
  private long pausedCheckAt;
  /**
   * Pump only: the earliest time at which promoting or reclaiming may find something (the
   * first delayUntil or leaseUntil last read, or the next poll).
   */
  private long maintenanceAt;
  /** Pump only: how many jobs the pass's claim took. */
  private int lastClaimed;
  /** Work that stop() waits for: a pump under way, and claimed jobs not yet settled. */
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger pumpRequests = new AtomicInteger();
  private final List<Consumer<? super JobEvent<S>>> listeners = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();

  private final Object lifecycle = new Object();
  private volatile Phase phase = Phase.NEW;
  private ScheduledFuture<?> wake;
  private long wakeAt;
  /** True from scheduling a wake until its task starts: only then may a later wake be skipped. */
  private boolean wakePending;
  private long wakeGeneration;
  private ScheduledFuture<?> renewer;
  private KvStore.Subscription subscription;
  private volatile boolean storeFailing;
  private volatile boolean executorRefused;

  Worker(Queue<S> queue, JobHandler<S> handler, WorkerOptions options, ScheduledExecutorService executor) {
    this.queue = Objects.requireNonNull(queue, "queue");
    this.handler = Objects.requireNonNull(handler, "handler");
    this.options = Objects.requireNonNull(options, "options");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.keys = queue.keys;
    this.store = queue.store;
    this.committer = new GroupCommitter(store);
    this.claimer = new Claimer(keys, store);
    this.leaseMillis = options.leaseDuration().toMillis();
  }

  // ---- public API

  /**
   * Adds a listener for completions, failures and lost leases. Listeners run after the
   * commit, on the thread that committed; they must be quick and must not throw (what they
   * throw is logged and ignored).
   *
   * @param listener the listener
   * @return this worker
   * @throws NullPointerException if {@code listener} is null
   */
  public Worker<S> addListener(Consumer<? super JobEvent<S>> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /**
   * Starts processing: subscribes to the store's changes, schedules lease renewal, and
   * claims the first jobs. The seed's {@code processJobs}.
   *
   * @throws IllegalStateException if the worker was already started
   * @throws RejectedExecutionException if the executor refuses the worker's tasks
   */
  public void start() {
    synchronized (lifecycle) {
      if (phase != Phase.NEW) {
        throw new IllegalStateException("worker for queue " + queue.name() + " was already started; make a new one");
      }
      phase = Phase.RUNNING;
      long renewMillis = options.renewInterval().toMillis();
      renewer = executor.scheduleAtFixedRate(this::renewAll, renewMillis, renewMillis, TimeUnit.MILLISECONDS);
    }
    if (store.notifiesChanges()) {
      // Only what can give this worker work: a ready job, a delayed one (its wake may be
      // earlier than the one scheduled), a pause or resume. Renewals and completions on
      // other nodes wake nobody.
      List<KvStore.Subscription> subs = new ArrayList<>();
      subs.add(store.subscribe(keys.readyIndex(), this::requestPump));
      // a delayed job may be due before the next maintenance the pump planned
      subs.add(store.subscribe(keys.delayedIndex(), () -> {
        delayedChanged = true;
        requestPump();
      }));
      // A pause (or resume) stops handler threads from starting or claiming more at once,
      // on this node even before pause() returns; the pass then reads which it was.
      subs.add(store.subscribe(keys.paused, () -> {
        pausedSeen = true;
        pausedChanged = true;
        requestPump();
      }));
      subscription = () -> subs.forEach(KvStore.Subscription::close);
    }
    requestPump();
  }

  /**
   * Stops claiming jobs and tells running handlers ({@link JobContext.CancelReason#WORKER_STOPPING}).
   * Their leases are renewed until they finish. Does not wait. The seed's
   * {@code stopProcessing}, which gave handlers no signal.
   *
   * @return a future that completes when every running handler has finished and its outcome
   *     is recorded
   */
  public CompletableFuture<Void> stop() {
    List<Lease> toCancel;
    synchronized (lifecycle) {
      if (phase == Phase.NEW) {
        phase = Phase.STOPPED;
        stopped.complete(null);
        return stopped.copy();
      }
      if (phase != Phase.RUNNING) {
        return stopped.copy();
      }
      phase = Phase.STOPPING;
      if (wake != null) {
        wake.cancel(false);
      }
      toCancel = new ArrayList<>(active.values());
    }
    if (subscription != null) {
      subscription.close();
    }
    for (Lease l : toCancel) {
      l.cancel(JobContext.CancelReason.WORKER_STOPPING);
    }
    releasePrefetched();
    if (inFlight.get() == 0) {
      finishStop();
    }
    return stopped.copy();
  }

  /**
   * Stops and waits up to {@code timeout} for running handlers to finish. A handler still
   * running after that keeps its lease until it finishes; if the process ends first, the
   * lease expires and the job runs again.
   *
   * <p>Do not call it from a thread of this worker's executor if that executor has one
   * thread: the handlers it waits for would never run.
   *
   * @param timeout the longest wait
   * @return true if everything finished in time
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   */
  public boolean stop(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    try {
      stop().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("stopping failed. Indicates a bug.", e);
    }
  }

  /**
   * Tells whether the worker is claiming jobs (started and not stopped).
   *
   * @return true while running
   */
  public boolean isProcessing() {
    return phase == Phase.RUNNING;
  }

  /**
   * Returns the ids of the jobs this worker holds now: running, claimed ahead and waiting
   * for a handler slot, or finished with their outcome not yet committed.
   *
   * @return a snapshot of the ids
   */
  public Set<String> activeJobs() {
    return Set.copyOf(active.keySet());
  }

  /**
   * Returns the worker's options.
   *
   * @return the options
   */
  public WorkerOptions options() {
    return options;
  }

  /**
   * Returns the worker's queue.
   *
   * @return the queue
   */
  public Queue<S> queue() {
    return queue;
  }

  // ---- the pump: promote, reclaim, claim

  private void requestPump() {
    if (pumpRequests.getAndIncrement() == 0) {
      try {
        executor.execute(this::pumpLoop);
      } catch (RejectedExecutionException e) {
        pumpRequests.set(0);
        refused(e);
      }
    }
  }

  private void pumpLoop() {
    int seen;
    do {
      seen = pumpRequests.get();
      inFlight.incrementAndGet();
      try {
        pumpOnce();
      } finally {
        release();
      }
    } while (pumpRequests.addAndGet(-seen) != 0);
  }

  private void pumpOnce() {
    if (phase != Phase.RUNNING) {
      return;
    }
    long now = queue.clock.millis();
    long poll = options.pollInterval().toMillis();
    boolean notifies = store.notifiesChanges();
    try {
      if (!notifies || pausedChanged || now >= pausedCheckAt) {
        pausedChanged = false; // before the read: a change announced during it reads again
        pausedSeen = options.concurrency() == 0 || store.get(keys.paused).isPresent();
        pausedCheckAt = now + poll;
      }
      if (pausedSeen) {
        releasePrefetched();
        scheduleWake(now + poll);
        return;
      }
      dispatch(); // jobs claimed ahead that waited while a pause was in doubt
      boolean more = false;
      boolean nextChangeRead = false; // maintenanceAt was read in this pass, after the moves
      if (!notifies || delayedChanged || now >= maintenanceAt) {
        delayedChanged = false;
        boolean moreToMove = claimer.promoteDue(now);
        moreToMove |= claimer.reclaimExpired(now);
        nextChangeRead = !moreToMove;
        maintenanceAt = moreToMove ? now : claimer.nextChange(now + poll);
        more = moreToMove;
      }
      int wanted = options.concurrency() + options.prefetch() - running.get() - prefetchedCount.get();
      if (wanted > 0) {
        more |= claim(wanted, now);
        nextChangeRead &= lastClaimed == 0; // new leases may end before it
      }
      recovered();
      if (more) {
        requestPump();
      } else {
        if (!nextChangeRead) {
          maintenanceAt = claimer.nextChange(now + poll);
        }
        scheduleWake(Math.max(now, maintenanceAt));
      }
    } catch (RuntimeException e) {
      pausedChanged = true;
      delayedChanged = true;
      failing(e);
      scheduleWake(now + poll);
    }
  }

  /**
   * Claims up to {@code wanted} ready jobs, queues them for handler slots and starts as many
   * as there are free slots; true if there may be more.
   */
  private boolean claim(int wanted, long now) {
    boolean[] more = new boolean[1];
    List<Claimer.Claimed> claimed = claimer.claim(wanted, now, leaseMillis, more);
    lastClaimed = claimed.size();
    for (Claimer.Claimed c : claimed) {
      Lease lease = new Lease(c.record(), c.versionstamp());
      active.put(lease.id, lease);
      inFlight.incrementAndGet();
      prefetched.add(lease);
      prefetchedCount.incrementAndGet();
    }
    // stop() sets the phase, then releases what is queued: whichever of the two looks last
    // sees both the phase and the leases just queued
    if (phase == Phase.RUNNING) {
      dispatch();
    } else {
      releasePrefetched();
    }
    return more[0];
  }

  /** Starts queued jobs on the executor while handler slots are free. */
  private void dispatch() {
    while (phase == Phase.RUNNING && !pausedSeen) {
      int taken = running.get();
      if (taken >= options.concurrency() || prefetchedCount.get() == 0) {
        return;
      }
      if (!running.compareAndSet(taken, taken + 1)) {
        continue;
      }
      Lease lease = takePrefetched();
      if (lease == null) {
        // another thread took it; give the slot back and look again, so that a job queued
        // while this thread held the slot is not left waiting
        running.decrementAndGet();
        continue;
      }
      try {
        executor.execute(() -> run(lease));
      } catch (RejectedExecutionException e) {
        LOG.log(System.Logger.Level.WARNING, "executor refused job " + lease.id + " of queue " + queue.name()
            + "; it runs again when its lease expires", e);
        running.decrementAndGet();
        settled(lease);
        return;
      }
    }
  }

  private Lease takePrefetched() {
    Lease lease = prefetched.poll();
    if (lease != null) {
      prefetchedCount.decrementAndGet();
    }
    return lease;
  }

  /**
   * Gives back the jobs claimed ahead and not started (the worker is stopping, or the queue
   * is paused): ready again, in their place, with the attempt not counted. A release that
   * fails leaves the job to expire and be reclaimed, as after a crash.
   */
  private void releasePrefetched() {
    Lease lease;
    while ((lease = takePrefetched()) != null) {
      Transitions.Plan plan;
      synchronized (lease) {
        lease.finishing = true; // no more renewals
        plan = lease.lost ? null : Transitions.release(keys, lease.holding());
      }
      if (!(plan instanceof Transitions.Applied applied)) {
        settled(lease);
        continue;
      }
      Lease released = lease;
      committer.submit(applied.operation(), (result, error) -> {
        if (error != null || !result.ok()) {
          LOG.log(System.Logger.Level.DEBUG, () -> "could not put back job " + released.id + " of queue "
              + queue.name() + "; it runs again when its lease expires");
        }
        settled(released);
      });
    }
  }

  private void scheduleWake(long at) {
    synchronized (lifecycle) {
      if (phase != Phase.RUNNING) {
        return;
      }
      if (wakePending && wakeAt <= at) {
        return;
      }
      if (wake != null) {
        wake.cancel(false);
      }
      wakeAt = at;
      wakePending = true;
      long generation = ++wakeGeneration;
      Runnable task = () -> {
        synchronized (lifecycle) {
          if (wakeGeneration == generation) {
            wakePending = false;
          }
        }
        requestPump();
      };
      try {
        wake = executor.schedule(task, Math.max(0, at - queue.clock.millis()), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        wakePending = false;
        refused(e);
      }
    }
  }

  // ---- running and settling a job

  /**
   * Runs a job on the handler slot taken for it, then, while the worker runs, the jobs
   * claimed ahead, one after the other on this thread; gives the slot back when none is left.
   */
  private void run(Lease first) {
    Lease lease = first;
    try {
      while (lease != null) {
        if (!stillHeld(lease)) {
          settled(lease);
        } else {
          Throwable failure = handle(lease);
          settle(lease, failure);
          if (failure instanceof VirtualMachineError e) {
            throw e;
          }
        }
        lease = phase == Phase.RUNNING && !pausedSeen ? takePrefetched() : null;
        if (lease != null && prefetchedCount.get() <= options.prefetch() / 2) {
          requestPump(); // refill once half the prefetch is used, not after every job
        }
      }
    } finally {
      slotFreed();
    }
  }

  /**
   * Whether this worker still holds a job it is about to run. A job claimed ahead may have
   * waited long: if its renewal was refused, or its lease ran out (renewals failing) and
   * another worker took it, it is not run.
   */
  private boolean stillHeld(Lease lease) {
    long now = queue.clock.millis();
    synchronized (lease) {
      if (lease.lost) {
        return false;
      }
      if (lease.record.leaseUntil > now) {
        return true;
      }
    }
    try {
      if (!lease.refresh()) {
        leaseLost(lease, "start");
        return false;
      }
      renewNow(lease, now);
    } catch (RuntimeException e) {
      // the store is failing: run it anyway; its outcome is refused if someone else has it
      failing(e);
      return true;
    }
    synchronized (lease) {
      return !lease.lost;
    }
  }

  private Throwable handle(Lease lease) {
    try {
      JobRecord r = lease.record();
      S state = queue.codec.decode(r.payload.clone());
      handler.handle(Job.of(queue.name(), r, state, queue.clock.millis()), lease);
      return null;
    } catch (Throwable t) {
      return t;
    }
  }

  private void slotFreed() {
    running.decrementAndGet();
    if (phase == Phase.RUNNING) {
      dispatch(); // a job queued while this thread held the slot
      requestPump();
    }
  }

  private void settle(Lease lease, Throwable failure) {
    Transitions.Plan plan;
    synchronized (lease) {
      lease.finishing = true;
      if (lease.lost) {
        settled(lease); // already reported; another worker owns the job now
        return;
      }
      try {
        plan = plan(lease, failure);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "could not record the outcome of job " + lease.id + " of queue "
            + queue.name() + "; it runs again when its lease expires", e);
        settled(lease);
        return;
      }
    }
    if (!(plan instanceof Transitions.Applied applied)) {
      leaseLost(lease, failure == null ? "complete" : "fail");
      settled(lease);
      return;
    }
    committer.submit(applied.operation(), (result, error) -> settledCommit(lease, failure, applied, result, error, 0));
  }

  private Transitions.Plan plan(Lease lease, Throwable failure) {
    long now = queue.clock.millis();
    JobRecord r = lease.record;
    if (failure == null) {
      String nextId = r.repeatCount != 0 ? queue.nextId(now) : null;
      return Transitions.complete(keys, lease.holding(), now, nextId);
    }
    JobError error = new JobError(failure.getClass().getName(), Objects.toString(failure.getMessage(), ""),
        Instant.ofEpochMilli(now));
    return Transitions.fail(keys, lease.holding(), now, error, queue.random.nextDouble());
  }

  private void settledCommit(Lease lease, Throwable failure, Transitions.Applied plan, CommitResult result,
      RuntimeException error, int retries) {
    if (error != null) {
      failing(error);
      LOG.log(System.Logger.Level.WARNING, "could not record the outcome of job " + lease.id + " of queue "
          + queue.name() + "; it runs again when its lease expires", error);
      settled(lease);
      return;
    }
    if (result.ok()) {
      recovered();
      long now = queue.clock.millis();
      if (failure == null) {
        Optional<Job<S>> next = plan.spawned().map(r -> queue.toJob(r, now));
        emit(new JobEvent.Completed<>(queue.toJob(lease.record(), now), next));
      } else {
        JobRecord after = plan.record();
        emit(new JobEvent.Failed<>(queue.toJob(after, now), after.error, failure,
            after.state == JobRecord.State.DEAD));
      }
      settled(lease);
      return;
    }
    // The record changed since we planned (a renewal landed, or someone else took the job).
    Transitions.Plan again = null;
    if (retries < SETTLE_RETRIES && lease.refresh()) {
      synchronized (lease) {
        again = plan(lease, failure);
      }
    }
    if (!(again instanceof Transitions.Applied retry)) {
      leaseLost(lease, failure == null ? "complete" : "fail");
      settled(lease);
      return;
    }
    committer.submit(retry.operation(),
        (r, e) -> settledCommit(lease, failure, retry, r, e, retries + 1));
  }

  private void settled(Lease lease) {
    active.remove(lease.id, lease);
    release();
  }

  private void release() {
    if (inFlight.decrementAndGet() == 0 && phase == Phase.STOPPING) {
      finishStop();
    }
  }

  private void finishStop() {
    synchronized (lifecycle) {
      if (phase == Phase.STOPPED || inFlight.get() != 0) {
        return;
      }
      phase = Phase.STOPPED;
      if (renewer != null) {
        renewer.cancel(false);
      }
    }
    stopped.complete(null);
  }

  // ---- leases

  private void renewAll() {
    try {
      renewActive();
    } catch (RuntimeException e) {
      // a repeating task that throws is never run again: renewals must go on
      failing(e);
    }
  }

  private void renewActive() {
    if (phase == Phase.STOPPED || active.isEmpty()) {
      return;
    }
    long now = queue.clock.millis();
    List<Lease> leases = new ArrayList<>();
    List<Transitions.Applied> plans = new ArrayList<>();
    List<Long> plannedAt = new ArrayList<>();
    for (Lease l : active.values()) {
      synchronized (l) {
        if (l.finishing || l.lost) {
          continue;
        }
        if (l.record.leaseUntil <= now) {
          // Not renewed in time (the store was failing?): someone else may run the job now.
          l.cancel(JobContext.CancelReason.LEASE_LOST);
        }
        if (Transitions.renew(keys, l.holding(), now, leaseMillis) instanceof Transitions.Applied plan) {
          leases.add(l);
          plans.add(plan);
          plannedAt.add(l.versionstamp);
        }
      }
    }
    if (plans.isEmpty()) {
      return;
    }
    List<CommitResult> results;
    try {
      results = store.commitAll(plans.stream().map(Transitions.Applied::operation).toList());
      recovered();
    } catch (RuntimeException e) {
      failing(e);
      return;
    }
    for (int i = 0; i < results.size(); i++) {
      Lease l = leases.get(i);
      if (results.get(i).ok()) {
        l.adopt(plans.get(i).record(), plannedAt.get(i), results.get(i).versionstamp());
      } else if (l.refresh()) {
        renewNow(l, now); // the record changed but is still ours: renew it from what we read
      } else {
        leaseLost(l, "renew");
      }
    }
  }

  /** Renews one lease at once (after its record was read again). */
  private void renewNow(Lease l, long now) {
    Transitions.Plan plan;
    long plannedAt;
    synchronized (l) {
      if (l.finishing || l.lost) {
        return;
      }
      plan = Transitions.renew(keys, l.holding(), now, leaseMillis);
      plannedAt = l.versionstamp;
    }
    if (!(plan instanceof Transitions.Applied renewal)) {
      leaseLost(l, "renew");
      return;
    }
    CommitResult result = store.commit(renewal.operation());
    if (result.ok()) {
      l.adopt(renewal.record(), plannedAt, result.versionstamp());
    } else if (!l.refresh()) {
      leaseLost(l, "renew");
    } // else: changed again under us; the next round renews it
  }

  private void leaseLost(Lease lease, String outcome) {
    boolean first;
    synchronized (lease) {
      first = !lease.lost;
      lease.lost = true;
    }
    lease.cancel(JobContext.CancelReason.LEASE_LOST);
    if (first) {
      LOG.log(System.Logger.Level.WARNING, "lost the lease on job " + lease.id + " of queue " + queue.name()
          + " (token " + lease.token + "); its " + outcome + " was refused");
      emit(new JobEvent.LeaseLost<>(queue.toJob(lease.record(), queue.clock.millis()), outcome));
    }
  }

  private void emit(JobEvent<S> event) {
    for (Consumer<? super JobEvent<S>> l : listeners) {
      try {
        l.accept(event);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "a job listener of queue " + queue.name() + " failed; ignored", e);
      }
    }
  }

  /** The executor refuses work (it was shut down): said once, not on every wake-up. */
  private void refused(RejectedExecutionException e) {
    if (!executorRefused) {
      executorRefused = true;
      LOG.log(System.Logger.Level.WARNING, "the executor refuses the worker of queue " + queue.name()
          + "; it processes nothing until the executor accepts work again (stop the worker before its executor)", e);
    }
  }

  private void failing(RuntimeException e) {
    if (!storeFailing) {
      storeFailing = true;
      LOG.log(System.Logger.Level.WARNING, "the store of queue " + queue.name()
          + " is failing; the worker keeps trying every " + options.pollInterval(), e);
    }
  }

  private void recovered() {
    if (storeFailing) {
      storeFailing = false;
      LOG.log(System.Logger.Level.INFO, "the store of queue " + queue.name() + " works again");
    }
  }

  /** A claimed job: the lease this worker holds, and the handler's view of it. */
  private final class Lease implements JobContext<S> {
    final String id;
    final long token;
    final int attempt;
    // guarded by this
    JobRecord record;
    long versionstamp;
    boolean finishing;
    boolean lost;

    private final CountDownLatch cancelled = new CountDownLatch(1);
    private volatile CancelReason reason;
    private final List<Runnable> onCancel = new CopyOnWriteArrayList<>();

    Lease(JobRecord record, long versionstamp) {
      this.id = record.id;
      this.token = record.token;
      this.attempt = record.attempt;
      this.record = record;
      this.versionstamp = versionstamp;
    }

    synchronized JobRecord record() {
      return record;
    }

    /** What this lease holds now, for a holder's transition. */
    synchronized Transitions.Holding holding() {
      return new Transitions.Holding(record, versionstamp, token);
    }

    /** Takes a renewal's result, unless the record was written again since it was planned. */
    synchronized void adopt(JobRecord renewed, long plannedAt, long committedAt) {
      if (versionstamp == plannedAt) {
        record = renewed;
        versionstamp = committedAt;
      }
    }

    /** Reads the job again; true if this lease still holds it (and adopts what was read). */
    boolean refresh() {
      Optional<KvEntry> e = store.get(keys.job(id));
      if (e.isEmpty()) {
        return false;
      }
      JobRecord r = JobRecord.decode(e.get().value());
      if (r.state != JobRecord.State.LEASED || r.token != token) {
        return false;
      }
      synchronized (this) {
        record = r;
        versionstamp = e.get().versionstamp();
      }
      return true;
    }

    void cancel(CancelReason why) {
      synchronized (this) {
        if (reason != null) {
          return;
        }
        reason = why;
      }
      cancelled.countDown();
      for (Runnable r : onCancel) {
        if (onCancel.remove(r)) {
          runQuietly(r);
        }
      }
    }

    @Override
    public long token() {
      return token;
    }

    @Override
    public int attempt() {
      return attempt;
    }

    @Override
    public void update(S state) {
      update(state, JobChange.none());
    }

    @Override
    public void update(S state, JobChange change) {
      Objects.requireNonNull(state, "state");
      Objects.requireNonNull(change, "change");
      byte[] payload = queue.encode(state);
      for (int i = 0; i < SETTLE_RETRIES; i++) {
        synchronized (this) {
          if (lost) {
            throw lostException();
          }
          long now = queue.clock.millis();
          if (Transitions.update(keys, holding(), now, leaseMillis, change, payload)
              instanceof Transitions.Applied plan) {
            CommitResult result = store.commit(plan.operation());
            if (result.ok()) {
              record = plan.record();
              versionstamp = result.versionstamp();
              return;
            }
          }
        }
        if (!refresh()) {
          break;
        }
      }
      leaseLost(this, "update");
      throw lostException();
    }

    private LeaseLostException lostException() {
      return new LeaseLostException("the lease on job " + id + " of queue " + queue.name() + " (token " + token
          + ") is lost: another worker may be running it");
    }

    @Override
    public boolean isCancelled() {
      return reason != null;
    }

    @Override
    public Optional<CancelReason> cancelReason() {
      return Optional.ofNullable(reason);
    }

    @Override
    public boolean awaitCancellation(Duration timeout) throws InterruptedException {
      return cancelled.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void onCancel(Runnable action) {
      Objects.requireNonNull(action, "action");
      onCancel.add(action);
      if (reason != null && onCancel.remove(action)) {
        runQuietly(action);
      }
    }

    @Override
    public void stopProcessing() {
      stop();
    }

    private void runQuietly(Runnable r) {
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "a cancel action of job " + id + " failed; ignored", e);
      }
    }
  }
}
