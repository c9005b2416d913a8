package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Instant;

/**
 * The queue's state machine: pure functions from the current record (and its versionstamp)
 * and the time to the one atomic operation that makes the next state true.
 *
 * <p>No clock, no I/O, no randomness that is not passed in. Every operation checks the
 * versionstamp of the record it was planned from, so a plan made from a stale read fails
 * its commit instead of overwriting a newer state; lease-holder operations (renew, update,
 * complete, fail) also require the caller's fencing token, so a worker whose lease was
 * taken over is refused even if it read the newest record.
 *
 * <pre>
 *   push      -> READY | DELAYED
 *   DELAYED   -promote (due)-------> READY
 *   READY     -claim---------------> LEASED (token + 1, attempt + 1)
 *   LEASED    -reclaim (expired)---> READY
 *   LEASED    -release (not run)---> READY (attempt - 1)
 *   LEASED    -renew / update------> LEASED
 *   LEASED    -complete------------> gone (+ a new job if it repeats)
 *   LEASED    -fail----------------> READY | DELAYED (retry) | DEAD
 *   DEAD      -replay--------------> READY
 *   any but a live LEASED -delete--> gone
 * </pre>
 */
final class Transitions {

  private Transitions() {}

  /** Why a transition was not planned. */
  enum Refusal {
    /** The job does not exist (any more). */
    NOT_FOUND,
    /** The caller's lease is gone: another claim, a reclaim, or a delete came first. */
    LEASE_LOST,
    /** The job is being processed under a live lease. */
    PROCESSING,
    /** The job is not in a state this transition applies to. */
    WRONG_STATE
  }

  /** The plan of a transition: the operation to commit, or why there is none. */
  record Plan(AtomicOperation operation, JobRecord after, JobRecord spawned, Refusal refusal) {
    static Plan of(AtomicOperation op, JobRecord after) {
      return new Plan(op, after, null, null);
    }

    static Plan refused(Refusal why) {
      return new Plan(null, null, null, why);
    }

    boolean refused() {
      return refusal != null;
    }
  }

  /** A new job: READY, or DELAYED when it is due later than {@code now}. */
  static Plan push(QueueKeys k, String id, byte[] payload, JobOptions o, long now) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord r = pushInto(op, k, id, payload, o, now);
    return Plan.of(op.build(), r);
  }

  /** Adds a new job to a larger operation (a batch push) and returns its record. */
  static JobRecord pushInto(AtomicOperation.Builder op, QueueKeys k, String id, byte[] payload, JobOptions o,
      long now) {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id = id;
    d.priority = o.priority();
    d.delayUntil = o.dueAt(Instant.ofEpochMilli(now)).toEpochMilli();
    d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
    d.repeatCount = o.repeatCount();
    d.repeatDelay = o.repeatDelay().toMillis();
    d.retriesLeft = o.retryCount();
    d.retryLimit = o.retryCount();
    d.backoff = o.retryBackoff();
    d.payload = payload;
    JobRecord r = d.build();
    Key job = k.job(id);
    op.checkAbsent(job).set(job, r.encode()).set(k.indexOf(r), QueueKeys.EMPTY);
    return r;
  }

  /** A delayed job whose time has come joins the ready index, in its priority place. */
  static Plan promote(QueueKeys k, JobRecord r, long versionstamp, long now) {
    if (r.state != JobRecord.State.DELAYED || r.delayUntil > now) {
      return Plan.refused(Refusal.WRONG_STATE);
    }
    return move(k, r, versionstamp, r.draft().state(JobRecord.State.READY));
  }

  /** A job whose lease expired (its worker died or stalled) returns to the ready index. */
  static Plan reclaim(QueueKeys k, JobRecord r, long versionstamp, long now) {
    if (r.state != JobRecord.State.LEASED || r.leaseUntil > now) {
      return Plan.refused(Refusal.WRONG_STATE);
    }
    return move(k, r, versionstamp, r.draft().state(JobRecord.State.READY).leaseUntil(0));
  }

  /** A ready job is leased until {@code now + lease}, under a new, larger fencing token. */
  static Plan claim(QueueKeys k, JobRecord r, long versionstamp, long now, long leaseMillis) {
    if (r.state != JobRecord.State.READY) {
      return Plan.refused(Refusal.WRONG_STATE);
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.LEASED).leaseUntil(now + leaseMillis);
    d.token = r.token + 1;
    d.attempt = r.attempt + 1;
    return move(k, r, versionstamp, d);
  }

  /**
   * The lease holder gives back a job it claimed ahead but never started (its worker is
   * stopping): ready again, in its place, with the attempt it never made not counted. The
   * token stays, so the next claim's token is still larger than any before it.
   */
  static Plan release(QueueKeys k, JobRecord r, long versionstamp, long token) {
    Refusal no = holderCheck(r, token);
    if (no != null) {
      return Plan.refused(no);
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.READY).leaseUntil(0);
    d.attempt = r.attempt - 1;
    return move(k, r, versionstamp, d);
  }

  /** The lease holder extends its lease to {@code now + lease}. */
  static Plan renew(QueueKeys k, JobRecord r, long versionstamp, long token, long now, long leaseMillis) {
    Refusal no = holderCheck(r, token);
    if (no != null) {
      return Plan.refused(no);
    }
    return move(k, r, versionstamp, r.draft().leaseUntil(Math.max(r.leaseUntil, now + leaseMillis)));
  }

  /** The lease holder changes the job while it runs (the seed's updateJob); renews too. */
  static Plan update(QueueKeys k, JobRecord r, long versionstamp, long token, long now, long leaseMillis,
      JobChange change, byte[] payload) {
    Refusal no = holderCheck(r, token);
    if (no != null) {
      return Plan.refused(no);
    }
    JobRecord.Draft d = r.draft().leaseUntil(Math.max(r.leaseUntil, now + leaseMillis));
    if (payload != null) {
      d.payload = payload;
    }
    change.applyTo(d);
    return move(k, r, versionstamp, d);
  }

  /**
   * The lease holder completes the job: it is gone, and if it repeats, its next run is
   * written in the same operation as a new job {@code nextId} at the back of the queue.
   */
  static Plan complete(QueueKeys k, JobRecord r, long versionstamp, long token, long now, String nextId) {
    Refusal no = holderCheck(r, token);
    if (no != null) {
      return Plan.refused(no);
    }
    Key job = k.job(r.id);
    AtomicOperation.Builder op = AtomicOperation.builder()
        .check(job, versionstamp)
        .delete(job)
        .delete(k.indexOf(r));
    JobRecord spawned = null;
    if (r.repeatCount != 0) {
      JobRecord.Draft d = new JobRecord.Draft();
      d.id = nextId;
      d.priority = r.priority;
      d.delayUntil = now + r.repeatDelay;
      d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
      d.repeatCount = r.repeatCount == JobOptions.REPEAT_FOREVER ? JobOptions.REPEAT_FOREVER : r.repeatCount - 1;
      d.repeatDelay = r.repeatDelay;
      d.retriesLeft = r.retryLimit;
      d.retryLimit = r.retryLimit;
      d.backoff = r.backoff;
      d.payload = r.payload;
      spawned = d.build();
      op.checkAbsent(k.job(nextId)).set(k.job(nextId), spawned.encode()).set(k.indexOf(spawned), QueueKeys.EMPTY);
    }
    return new Plan(op.build(), null, spawned, null);
  }

  /**
   * The lease holder reports a failed attempt: with retries left the job returns, keeping
   * its id and so its place, due after the backoff; with none left it becomes a dead letter.
   *
   * @param random a number in [0, 1) for the backoff's jitter
   */
  static Plan fail(QueueKeys k, JobRecord r, long versionstamp, long token, long now, JobError error,
      double random) {
    Refusal no = holderCheck(r, token);
    if (no != null) {
      return Plan.refused(no);
    }
    JobRecord.Draft d = r.draft().leaseUntil(0);
    d.error = error;
    if (r.retriesLeft > 0) {
      int retry = r.retryLimit - r.retriesLeft + 1;
      d.retriesLeft = r.retriesLeft - 1;
      d.delayUntil = now + r.backoff.delayFor(retry, random).toMillis();
      d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
    } else {
      d.state = JobRecord.State.DEAD;
    }
    return move(k, r, versionstamp, d);
  }

  /** A dead letter goes back to the queue with its retries restored. */
  static Plan replay(QueueKeys k, JobRecord r, long versionstamp) {
    if (r.state != JobRecord.State.DEAD) {
      return Plan.refused(Refusal.WRONG_STATE);
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.READY);
    d.retriesLeft = r.retryLimit;
    d.delayUntil = 0;
    return move(k, r, versionstamp, d);
  }

  /** Removes a job that is not being processed under a live lease. */
  static Plan delete(QueueKeys k, JobRecord r, long versionstamp, long now) {
    if (r.state == JobRecord.State.LEASED && r.leaseUntil > now) {
      return Plan.refused(Refusal.PROCESSING);
    }
    AtomicOperation op = AtomicOperation.builder()
        .check(k.job(r.id), versionstamp)
        .delete(k.job(r.id))
        .delete(k.indexOf(r))
        .build();
    return Plan.of(op, null);
  }

  /** Adds the deletion of {@code r} (planned at {@code versionstamp}) to a larger operation. */
  static void deleteInto(AtomicOperation.Builder op, QueueKeys k, JobRecord r, long versionstamp) {
    op.check(k.job(r.id), versionstamp).delete(k.job(r.id)).delete(k.indexOf(r));
  }

  private static Refusal holderCheck(JobRecord r, long token) {
    if (r.state != JobRecord.State.LEASED || r.token != token) {
      return Refusal.LEASE_LOST;
    }
    return null;
  }

  /** The record moves from one state (or index position) to another. */
  private static Plan move(QueueKeys k, JobRecord before, long versionstamp, JobRecord.Draft d) {
    JobRecord after = d.build();
    Key oldIndex = k.indexOf(before);
    Key newIndex = k.indexOf(after);
    Key job = k.job(before.id);
    AtomicOperation.Builder op = AtomicOperation.builder()
        .check(job, versionstamp)
        .set(job, after.encode());
    if (!oldIndex.equals(newIndex)) {
      op.delete(oldIndex).set(newIndex, QueueKeys.EMPTY);
    }
    return Plan.of(op.build(), after);
  }
}
