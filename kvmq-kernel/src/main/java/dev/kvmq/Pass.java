package dev.kvmq;

import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker's pass, the one place that decides when the worker claims: it reads whether the queue is
 * paused, promotes due delayed jobs, reclaims expired leases, claims as many ready jobs as there is
 * room for ({@link Slots#toClaim()}: at once for an idle slot, in halves of the prefetch while
 * busy), hands them to the slots, and schedules its next wake (docs/semantics.md, "A worker's
 * pass"). A pass is asked for ({@link #request()}) when the worker starts, when the store announces
 * a change of the ready or delayed index or the paused key, when a handler finishes (or has used
 * half the jobs claimed ahead), and at a scheduled wake.
 *
 * <p>Locking: one pass at a time, without a lock: {@code requests} counts the requests, and the
 * thread that raises it from zero runs passes until it falls back to zero, so the pass-only fields
 * are confined to one thread at a time. The flags the store's notifications set are volatile. The
 * wake ({@code wake}, {@code wakeAt}, {@code wakePending}, {@code wakeGeneration}) is guarded by
 * this object's monitor; no other lock is taken while holding it.
 *
 * @param <S> the state type
 */
final class Pass<S> {

  private final WorkerCore<S> core;
  private final Claimer claimer;
  private final ScheduleFirer firer;
  private final HeldResolver heldResolver;
  private final Pruner pruner;
  private final Slots<S> slots;

  /**
   * The ranges whose first entries tell when the worker must look again: the claimer's, then the
   * schedule firer's, then the held resolver's, read together in one {@link
   * dev.kvmq.store.KvStore#firstEntries} call.
   */
  private final List<KeyRange> horizon;

  /** Where the firer's ranges, then the held resolver's, start in {@link #horizon}. */
  private final int firerFrom;

  private final int heldFrom;

  private final AtomicInteger requests = new AtomicInteger();

  /**
   * How many threads are in {@link #loop()} (one, but for the moment a loop that has seen its last
   * request overlaps the next one): while any is, outcomes wait in the committer for a claim.
   */
  private final AtomicInteger looping = new AtomicInteger();

  private final GroupCommitter committer;
  private final Runnable loop;

  /**
   * The queue is paused (or concurrency is 0), as the last pass read it, or a change of the paused
   * key was heard since: handler threads start no job claimed ahead while it is set.
   */
  private volatile boolean pausedSeen;

  /** Set when the store announces a change of the paused key: the pass reads the key again. */
  private volatile boolean pausedChanged = true;

  /** Set when the store announces a change of the delayed index: a pass must look at it. */
  private volatile boolean delayedChanged = true;

  /**
   * Pass only: whether this worker has admitted the parked jobs its limits leave room for ({@link
   * Claimer#admitFreeSlots()}), once, before its first claim.
   */
  private boolean freeSlotsAdmitted;

  /** Pass only: when the paused key must be read again at the latest. */
  private long pausedCheckAt;

  /**
   * Pass only: the earliest time at which promoting or reclaiming may find something (the first
   * delayUntil or leaseUntil last read, or the next poll).
   */
  private long maintenanceAt;

  // guarded by this
  private ScheduledFuture<?> wake;
  private long wakeAt;

  /** True from scheduling a wake until its task starts: only then may a later wake be skipped. */
  private boolean wakePending;

  private long wakeGeneration;

  /**
   * A pass of the worker {@code core} that hands what it claims to {@code slots}; on a store that
   * commits one at a time ({@link dev.kvmq.store.KvStore#commitsOneAtATime()}), its claims carry
   * the outcomes waiting in {@code committer} (docs/semantics.md, "The group committer").
   */
  Pass(WorkerCore<S> core, Slots<S> slots, GroupCommitter committer) {
    this.core = core;
    this.committer = committer;
    this.claimer =
        new Claimer(
                core.keys,
                core.store,
                Claimer.MAINTENANCE_BATCH,
                core.queue.maxLeaseExpiries,
                core.queue.node())
            .flow(
                core.queue.groupLimits(),
                core.queue.rateLimit().orElse(null),
                core.queue.groupRates());
    if (core.store.commitsOneAtATime()) {
      claimer.rides(committer);
      committer.rideWith(() -> looping.get() > 0);
    }
    this.firer = new ScheduleFirer(core.keys, core.store, core.queue::nextId);
    this.heldResolver =
        new HeldResolver(core.keys, core.store, core.queue.heldTimeout())
            .limits(core.queue.groupLimits());
    this.pruner =
        new Pruner(
            core.keys,
            core.store,
            core.queue.retention(),
            core.options.pollInterval().toMillis(),
            core::finishedJobs);
    this.slots = slots;
    List<KeyRange> ranges = new ArrayList<>(claimer.horizon());
    this.firerFrom = ranges.size();
    ranges.addAll(firer.horizon());
    this.heldFrom = ranges.size();
    ranges.addAll(heldResolver.horizon());
    this.horizon = List.copyOf(ranges);
    this.loop = WorkerCore.named("the pass of a worker of queue " + core.queue.name(), this::loop);
  }

  boolean pausedSeen() {
    return pausedSeen;
  }

  /**
   * Whether this worker may take a job a push hands off: its store notifies changes (else jobs
   * other nodes push are unknown to it until it polls), no pass is under way or asked for (the last
   * one found no ready job it could take: it asks for another when it may have left some), no
   * change of the paused key or the delayed index waits for one, the queue was not paused, and the
   * claimer knows of no pause of the queue's starts.
   */
  boolean takesHandoffs() {
    return core.store.notifiesChanges()
        && requests.get() == 0
        && !pausedSeen
        && !pausedChanged
        && !delayedChanged
        && claimer.startsKnownUnpaused();
  }

  /**
   * The store announced a change of the delayed index: a job may be due before the planned wake.
   */
  void delayedChanged() {
    delayedChanged = true;
    request();
  }

  /**
   * The store announced a change of the paused key: handler threads start or claim no more at once,
   * on this node even before pause() returns; the pass then reads which it was.
   */
  void pausedChanged() {
    pausedSeen = true;
    pausedChanged = true;
    request();
  }

  /** Asks for a pass: runs one on the executor unless one is under way (which then runs again). */
  void request() {
    if (requests.getAndIncrement() == 0) {
      try {
        core.executor.execute(loop);
      } catch (RejectedExecutionException e) {
        requests.set(0);
        core.reporter.refused(e);
      }
    }
  }

  private void loop() {
    looping.incrementAndGet();
    try {
      int seen;
      do {
        seen = requests.get();
        boolean claimed;
        core.enter();
        try {
          claimed = once();
        } finally {
          core.leave();
        }
        if (!claimed) {
          // An outcome waits for a claim at most until the end of the next pass that makes none.
          committer.drain();
        }
      } while (requests.addAndGet(-seen) != 0);
    } finally {
      looping.decrementAndGet();
      committer.drain(); // after the decrement: what waited for this loop's claims
    }
  }

  /**
   * Runs one pass; tells whether its claim went to the store (and so took the outcomes waiting till
   * then): if not, the loop commits them.
   */
  private boolean once() {
    if (!core.running()) {
      return false;
    }
    long now = core.now();
    long poll = core.options.pollInterval().toMillis();
    boolean notifies = core.store.notifiesChanges();
    boolean tookRiders = false;
    try {
      if (!notifies || pausedChanged || now >= pausedCheckAt) {
        pausedChanged = false; // before the read: a change announced during it reads again
        pausedSeen =
            core.options.concurrency() == 0 || core.store.get(core.keys.paused).isPresent();
        pausedCheckAt = now + poll;
      }
      if (pausedSeen) {
        slots.releaseWaiting();
        scheduleWake(now + poll);
        return false;
      }
      slots.dispatch(); // jobs claimed ahead that waited while a pause was in doubt
      if (!freeSlotsAdmitted) { // a limit raised since the jobs parked (docs/flow-control.md)
        claimer.admitFreeSlots();
        freeSlotsAdmitted = true;
      }
      boolean more = false;
      boolean nextChangeRead = false; // maintenanceAt was read in this pass, after the moves
      if (!notifies || delayedChanged || now >= maintenanceAt) {
        delayedChanged = false;
        boolean moreToMove = firer.fireDue(now); // due slots push their jobs first
        moreToMove |= claimer.moveDue(now);
        moreToMove |= heldResolver.resolveDue(now); // held past the policy's timeout
        nextChangeRead = !moreToMove;
        maintenanceAt = moreToMove ? now : nextChange(now + poll);
        more = moreToMove;
      }
      // Claim only once every due job is in the ready index: one left in the delayed or
      // leased index may come first in queue order. A pass that skipped the moves knows
      // nothing is due before maintenanceAt (a new earlier one is announced).
      int wanted = more ? 0 : slots.toClaim();
      boolean claimed = false;
      if (wanted > 0) {
        Claimer.Batch batch = claim(wanted, now);
        tookRiders = claimer.reachedStore();
        claimed = !batch.claimed().isEmpty();
        more |= batch.more();
        nextChangeRead &= batch.claimed().isEmpty(); // new leases may end before it
        if (claimer.blockedUntil() > 0) { // starts paused or rate limited: look again then
          maintenanceAt = Math.min(maintenanceAt, claimer.blockedUntil());
        }
      }
      // Pruning comes after the claim, in one bounded batch. While the worker is busy (it just
      // claimed, or every slot is taken) it prunes at most a batch per Pruner.BUSY_GAP_MILLIS
      // or per half a batch of jobs finished,
      // so that a drain's passes are not spent removing history; idle, more to prune asks for
      // another pass, which claims first again.
      if (pruner.pruneDue(now, claimed || slots.wanted() <= 0)) {
        more = true;
      }
      core.reporter.recovered();
      if (more) {
        request();
      } else {
        if (!nextChangeRead) {
          maintenanceAt = nextChange(now + poll);
        }
        scheduleWake(Math.max(now, maintenanceAt));
      }
    } catch (RuntimeException e) {
      pausedChanged = true;
      delayedChanged = true;
      core.reporter.failing(e);
      scheduleWake(now + poll); // tookRiders stays false: what waits is committed now
    }
    return tookRiders;
  }

  /**
   * The earliest of {@code at}, the first delayed job's due time, the first lease's end, the first
   * group's waking time, the first schedule's next slot and the first held job's timeout: when this
   * worker must look again at the latest. One read of the store, whatever the number of ranges.
   */
  private long nextChange(long at) {
    List<Optional<KvEntry>> firsts = core.store.firstEntries(horizon);
    at = claimer.nextChange(at, firsts.subList(0, firerFrom));
    at = firer.nextChange(at, firsts.subList(firerFrom, heldFrom));
    return heldResolver.nextChange(at, firsts.subList(heldFrom, firsts.size()));
  }

  /**
   * Claims up to {@code wanted} ready jobs, queues them for handler slots and starts as many as
   * there are free slots.
   */
  private Claimer.Batch claim(int wanted, long now) {
    try {
      Claimer.Batch batch = claimer.claim(wanted, now, core.leaseMillis);
      for (Claimer.Claimed c : batch.claimed()) {
        slots.offer(core.hold(c.record(), c.versionstamp()));
      }
      // stop() sets the phase, then releases what is queued: whichever of the two looks last
      // sees both the phase and the leases just queued
      if (core.running()) {
        slots.dispatch();
      } else {
        slots.releaseWaiting();
      }
      return batch;
    } finally {
      claimer.settleRiders(); // after the dispatch: the claimed jobs start first
    }
  }

  /** Schedules the next pass at {@code at}, unless one is due as early already. */
  synchronized void scheduleWake(long at) {
    if (!core.running()) {
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
    Runnable task =
        WorkerCore.named(
            "the wake of a worker of queue " + core.queue.name(),
            () -> {
              synchronized (this) {
                if (wakeGeneration == generation) {
                  wakePending = false;
                }
              }
              request();
            });
    try {
      wake = core.executor.schedule(task, Math.max(0, at - core.now()), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      wakePending = false;
      core.reporter.refused(e);
    }
  }

  /** The worker stops: no more wakes (one under way finds the worker not running). */
  synchronized void cancelWake() {
    if (wake != null) {
      wake.cancel(false);
    }
  }
}
