package dev.kvmq;

/**
 * A worker's side of a handoff ({@link WorkerOptions#handoff()}, docs/semantics.md, "Handoff"): a
 * push through the worker's {@link Queue} object asks it for an idle handler slot ({@link
 * #reserve}), commits the job already leased to this worker ({@link Transitions#pushClaimed}), and
 * gives it the job ({@link #take}) or, if the commit refused or failed, the slot back ({@link
 * #cancel}). Exactly one of the two follows every reserve that returned true.
 *
 * <p>What decides is the commit, not this class: the operation checks the job's record absent and
 * the queue and its starts unpaused, like a claim, and leases the job under token 1. This class
 * only keeps the worker from being promised more jobs than it has idle slots, and from taking a job
 * a pass would have passed over for one it has not claimed yet.
 *
 * <p>Locking: none of its own. A reservation counts as work that stopping waits for ({@link
 * WorkerCore#enter}), so a worker that stops while a push hands it a job gives that job back
 * ({@link Slots#releaseWaiting}) before its stop completes.
 *
 * @param <S> the state type
 */
final class Handoff<S> {

  private final WorkerCore<S> core;
  private final Slots<S> slots;
  private final Pass<S> pass;

  /**
   * Set once the worker's executor refused a job handed to it: it is shut down (a process on its
   * way out, an application undeployed before its worker stopped), so every later job handed to it
   * would wait for its lease to expire. Such a worker takes no more handoffs.
   */
  private volatile boolean executorRefused;

  Handoff(WorkerCore<S> core, Slots<S> slots, Pass<S> pass) {
    this.core = core;
    this.slots = slots;
    this.pass = pass;
  }

  /**
   * Promises an idle handler slot to a job being pushed: true if the worker runs, its executor has
   * not refused a job, it takes handoffs now ({@link Pass#takesHandoffs}) and it has a slot with
   * nothing running on it, waiting for it or promised to it. Then the caller must call {@link
   * #take} or {@link #cancel}.
   */
  boolean reserve() {
    if (!core.running() || executorRefused || !pass.takesHandoffs() || !slots.reserve()) {
      return false;
    }
    core.enter();
    if (!core.running()) {
      cancel();
      return false;
    }
    return true;
  }

  /** The lease the handed-off job's claim takes, in milliseconds. */
  long leaseMillis() {
    return core.leaseMillis;
  }

  /**
   * The push committed the job leased to this worker ({@code record} at {@code versionstamp}): it
   * runs on the promised slot, or, if the worker stopped meanwhile, is given back.
   */
  void take(JobRecord record, long versionstamp) {
    try {
      try {
        slots.offer(core.hold(record, versionstamp));
      } finally {
        slots.unreserve(); // after the offer: passes never see the slot free in between
      }
      // stop() sets the phase, then releases what is queued: whichever of the two looks last
      // sees both the phase and the job just queued (as Pass.claim)
      if (core.running()) {
        executorRefused |= !slots.dispatch();
      } else {
        slots.releaseWaiting();
      }
    } finally {
      core.leave();
    }
  }

  /** The push did not hand the job to this worker: the promised slot is free again. */
  void cancel() {
    slots.unreserve();
    core.leave();
  }
}
