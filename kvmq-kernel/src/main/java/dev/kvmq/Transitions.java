package dev.kvmq;

import dev.kvmq.TransitionTable.Event;
import dev.kvmq.TransitionTable.Node;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The queue's state machine: pure functions from what was read (a record and its versionstamp,
 * {@link Read}; for a lease holder also its fencing token, {@link Holding}) and the time to the one
 * atomic operation that makes the next state true, or a {@link Refused refusal} with its reason.
 *
 * <p>No clock, no I/O, no randomness that is not passed in. Every operation checks the versionstamp
 * of the record it was planned from, so a plan made from a stale read fails its commit instead of
 * overwriting a newer state; lease-holder operations (release, renew, update, complete, fail) also
 * require the caller's fencing token, so a worker whose lease was taken over is refused even if it
 * read the newest record.
 *
 * <p>The moves allowed at all are the {@link TransitionTable}; every plan built here is checked
 * against it (a move outside it throws {@link IllegalStateException}: a bug).
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

  /** A job as read: its record and the versionstamp it was read at. */
  record Read(JobRecord record, long versionstamp) {}

  /** A job as its lease holder holds it: the record, its versionstamp, and the holder's token. */
  record Holding(JobRecord record, long versionstamp, long token) {}

  /** The plan of a transition: {@link Applied} or {@link Refused}. */
  sealed interface Plan permits Applied, Refused {}

  /**
   * A planned transition.
   *
   * @param operation what to commit
   * @param after the job's record after the commit; empty when the job is gone
   * @param spawned the next run a completion writes, when the job repeats
   */
  record Applied(AtomicOperation operation, Optional<JobRecord> after, Optional<JobRecord> spawned)
      implements Plan {

    /** The record after the commit, for a transition that keeps the job. */
    JobRecord record() {
      return after.orElseThrow(
          () -> new IllegalStateException("the transition removed the job. Indicates a bug."));
    }
  }

  /**
   * A transition that was not planned.
   *
   * @param refusal why
   */
  record Refused(Refusal refusal) implements Plan {}

  /** Many jobs removed in one operation; {@code count} of them (the operation is empty for 0). */
  record Removal(AtomicOperation operation, int count) {}

  private static final Refused LEASE_LOST = new Refused(Refusal.LEASE_LOST);
  private static final Refused PROCESSING = new Refused(Refusal.PROCESSING);
  private static final Refused WRONG_STATE = new Refused(Refusal.WRONG_STATE);

  /** The error kept when the handler's message would make the record too large to store. */
  static final String MESSAGE_DROPPED = "(message dropped: the job is too large to keep it)";

  /** A new job: READY, or DELAYED when it is due later than {@code now}. */
  static Applied push(QueueKeys k, String id, byte[] payload, JobOptions o, long now) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord r = pushInto(op, k, id, payload, o, now);
    return new Applied(op.build(), Optional.of(r), Optional.empty());
  }

  /** Adds a new job to a larger operation (a batch push) and returns its record. */
  static JobRecord pushInto(
      AtomicOperation.Builder op, QueueKeys k, String id, byte[] payload, JobOptions o, long now) {
    return pushInto(op, k, id, payload, o, now, Map.of());
  }

  /**
   * Adds a new job to a larger operation (a batch push) with its pusher's trace context (kept
   * through retries: {@link JobRecord#draft()} copies it) and returns its record.
   */
  static JobRecord pushInto(
      AtomicOperation.Builder op,
      QueueKeys k,
      String id,
      byte[] payload,
      JobOptions o,
      long now,
      Map<String, String> traceContext) {
    JobRecord.Draft d = newJob(id, payload, o, now, traceContext);
    d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
    return addNew(op, k, d, Event.PUSH);
  }

  /** Adds the new job of {@code d} to {@code op}: checked absent, written with its index entry. */
  private static JobRecord addNew(
      AtomicOperation.Builder op, QueueKeys k, JobRecord.Draft d, Event event) {
    JobRecord r = d.build();
    TransitionTable.check(event, Node.ABSENT, Node.of(r));
    Key job = k.job(r.id);
    op.checkAbsent(job).set(job, r.encode()).set(k.indexOf(r), QueueKeys.EMPTY);
    return r;
  }

  /** The record of a new job from its options: everything but its state. */
  private static JobRecord.Draft newJob(
      String id, byte[] payload, JobOptions o, long now, Map<String, String> traceContext) {
    JobRecord.Draft d = new JobRecord.Draft();
    d.traceContext = traceContext;
    d.id = id;
    d.priority = o.priority();
    d.delayUntil = o.dueAt(Instant.ofEpochMilli(now)).toEpochMilli();
    d.repeatCount = o.repeatCount();
    d.repeatDelay = o.repeatDelay().toMillis();
    d.retriesLeft = o.retryCount();
    d.retryLimit = o.retryCount();
    d.backoff = o.retryBackoff();
    d.payload = payload;
    d.timeoutMillis = o.timeout() == null ? -1 : o.timeout().toMillis();
    d.interruptOnCancel = o.interruptOnCancel();
    return d;
  }

  /** A delayed job whose time has come joins the ready index, in its priority place. */
  static Plan promote(QueueKeys k, Read read, long now) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.DELAYED || r.delayUntil > now) {
      return WRONG_STATE;
    }
    return move(Event.PROMOTE, k, read, r.draft().state(JobRecord.State.READY));
  }

  /**
   * A job whose lease expired (its worker died or stalled) returns to the ready index, with one
   * more lease expiry counted; at the {@link Queue#DEFAULT_MAX_LEASE_EXPIRIES default} limit it
   * becomes a dead letter instead: see {@link #reclaim(QueueKeys, Read, long, int)}.
   */
  static Plan reclaim(QueueKeys k, Read read, long now) {
    return reclaim(k, read, now, Queue.DEFAULT_MAX_LEASE_EXPIRIES);
  }

  /**
   * A job whose lease expired (its worker died or stalled) returns to the ready index, with one
   * more lease expiry counted; a poison job, whose lease has now expired {@code maxExpiries} times,
   * becomes a dead letter instead, with an error of type {@link JobError#LEASE_EXPIRED} that says
   * so.
   *
   * @param maxExpiries the queue's {@link Queue#maxLeaseExpiries()}, 1 or more
   */
  static Plan reclaim(QueueKeys k, Read read, long now, int maxExpiries) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.LEASED || r.leaseUntil > now) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().leaseUntil(0);
    d.attempts = History.ended(r.attempts, now, History.leaseExpired(now));
    d.leaseExpiries = r.leaseExpiries + 1;
    if (d.leaseExpiries >= maxExpiries) {
      d.state = JobRecord.State.DEAD;
      d.error =
          new JobError(
              JobError.LEASE_EXPIRED,
              "the lease expired "
                  + d.leaseExpiries
                  + " times (its worker died or hung each time): a dead letter instead of"
                  + " reclaimed again",
              java.time.Instant.ofEpochMilli(now));
      d.finishedAt = now;
    } else {
      d.state = JobRecord.State.READY;
    }
    return move(Event.RECLAIM, k, read, d);
  }

  /**
   * An operator cancels a job that has not ended (ready, delayed, leased with a live or an expired
   * lease, held): CANCELLED at {@code now}, in the cancelled index, kept. A lease on it is revoked
   * in the same operation: the record is no longer LEASED, so the holder's complete, fail, renew
   * and update are refused ({@link Refusal#LEASE_LOST}), and its planned operations fail their
   * versionstamp check. Dead letters and cancelled jobs have ended: {@link Refusal#WRONG_STATE}.
   */
  static Plan cancel(QueueKeys k, Read read, long now) {
    JobRecord r = read.record();
    if (r.state == JobRecord.State.DEAD || r.state == JobRecord.State.CANCELLED) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.CANCELLED).leaseUntil(0);
    d.cancelledAt = now;
    return move(Event.CANCEL, k, read, d);
  }

  /**
   * The lease holder puts its job back, due {@code delayMillis} after {@code now}, without using a
   * retry: its retries left stay, its attempt count keeps this run, and its place in the ready
   * index is its priority's, as for any due job.
   */
  static Plan snooze(QueueKeys k, Holding h, long now, long delayMillis) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord.Draft d = h.record().draft().leaseUntil(0);
    d.delayUntil = now + delayMillis;
    d.state = delayMillis > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
    return move(Event.SNOOZE, k, read(h), d);
  }

  /**
   * Plans {@link #cancel} of each job of {@code reads} that {@code filter} takes at {@code now} (a
   * bulk cancel's batch): one operation per job, each checking its own record's versionstamp, so
   * that a job changed since it was read is left out without failing the others.
   */
  static List<Applied> cancelMatching(QueueKeys k, List<Read> reads, long now, JobFilter filter) {
    List<Applied> plans = new java.util.ArrayList<>();
    for (Read read : reads) {
      if (filter.matches(read.record(), now) && cancel(k, read, now) instanceof Applied a) {
        plans.add(a);
      }
    }
    return plans;
  }

  /**
   * Plans {@link #delete} of each job of {@code reads} that {@code filter} takes at {@code now} (a
   * bulk delete's batch), as {@link #cancelMatching} does: never a job under a live lease.
   */
  static List<Applied> deleteMatching(QueueKeys k, List<Read> reads, long now, JobFilter filter) {
    List<Applied> plans = new java.util.ArrayList<>();
    for (Read read : reads) {
      if (filter.matches(read.record(), now) && delete(k, read, now) instanceof Applied a) {
        plans.add(a);
      }
    }
    return plans;
  }

  /** A ready job is leased until {@code now + lease}, under a new, larger fencing token. */
  static Plan claim(QueueKeys k, Read read, long now, long leaseMillis) {
    return claim(k, read, now, leaseMillis, "");
  }

  /**
   * A ready job is leased until {@code now + lease}, under a new, larger fencing token, by a worker
   * on {@code node}: a new attempt starts (the record keeps the latest {@link Attempt#KEPT}).
   */
  static Plan claim(QueueKeys k, Read read, long now, long leaseMillis, String node) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.READY) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.LEASED).leaseUntil(now + leaseMillis);
    d.token = r.token + 1;
    d.attempt = r.attempt + 1;
    d.attempts =
        History.started(
            r.attempts,
            new Attempt(
                d.attempt, Instant.ofEpochMilli(now), Optional.empty(), node, Optional.empty()));
    return move(Event.CLAIM, k, read, d);
  }

  /**
   * An index entry whose record can't be decoded is moved aside, to {@link QueueKeys#corrupt}, so
   * that one bad record does not stop the queue; the record itself is kept for inspection. The
   * operation checks the record's versionstamp.
   *
   * @param indexKey the index entry that points at the record
   * @param versionstamp the versionstamp the unreadable record was read at
   */
  static Applied quarantine(QueueKeys k, Key indexKey, long versionstamp) {
    TransitionTable.check(Event.QUARANTINE, Node.UNREADABLE, Node.QUARANTINED);
    String id = QueueKeys.idOf(indexKey);
    AtomicOperation op =
        AtomicOperation.builder()
            .check(k.job(id), versionstamp)
            .delete(indexKey)
            .set(k.corrupt(id), QueueKeys.EMPTY)
            .build();
    return new Applied(op, Optional.empty(), Optional.empty());
  }

  /**
   * The lease holder gives back a job it claimed ahead but never started (its worker is stopping):
   * ready again, in its place, with the attempt it never made not counted. The token stays, so the
   * next claim's token is still larger than any before it.
   */
  static Plan release(QueueKeys k, Holding h) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    JobRecord.Draft d = r.draft().state(JobRecord.State.READY).leaseUntil(0);
    d.attempt = r.attempt - 1;
    d.attempts = History.unstarted(r.attempts, r.attempt);
    return move(Event.RELEASE, k, read(h), d);
  }

  /** The lease holder extends its lease to {@code now + lease}. */
  static Plan renew(QueueKeys k, Holding h, long now, long leaseMillis) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    return move(
        Event.RENEW, k, read(h), r.draft().leaseUntil(Math.max(r.leaseUntil, now + leaseMillis)));
  }

  /** The lease holder changes the job while it runs (the seed's updateJob); renews too. */
  static Plan update(
      QueueKeys k, Holding h, long now, long leaseMillis, JobChange change, byte[] payload) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    JobRecord.Draft d = r.draft().leaseUntil(Math.max(r.leaseUntil, now + leaseMillis));
    d.payload = payload;
    change.applyTo(d);
    return move(Event.UPDATE, k, read(h), d);
  }

  /**
   * The lease holder completes the job: it is gone, and if it repeats, its next run is written in
   * the same operation as a new job {@code nextId} at the back of the queue.
   *
   * @param nextId the id of the next run; read only when the job repeats
   */
  static Plan complete(QueueKeys k, Holding h, long now, String nextId) {
    return complete(k, h, now, nextId, false, null);
  }

  /**
   * The lease holder completes the job. With {@code keep} (the queue keeps completed jobs) the
   * record stays, COMPLETED, in the completed index at {@code now}, with {@code result} and its
   * last attempt ended; without, it is gone. If it repeats, its next run is written in the same
   * operation as a new job {@code nextId} at the back of the queue (a run of its own, kept when it
   * completes in turn).
   *
   * @param nextId the id of the next run; read only when the job repeats
   * @param keep whether the completed record is kept
   * @param result the handler's result, or null
   */
  static Plan complete(
      QueueKeys k, Holding h, long now, String nextId, boolean keep, String result) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    Key job = k.job(r.id);
    AtomicOperation.Builder op = AtomicOperation.builder().check(job, h.versionstamp());
    Optional<JobRecord> after = Optional.empty();
    if (keep) {
      JobRecord.Draft d = r.draft().state(JobRecord.State.COMPLETED).leaseUntil(0);
      d.finishedAt = now;
      d.result = result;
      d.attempts = History.ended(r.attempts, now, null);
      JobRecord kept = History.fit(d).build();
      TransitionTable.check(Event.COMPLETE, Node.of(r), Node.COMPLETED);
      op.set(job, kept.encode()).delete(k.indexOf(r)).set(k.indexOf(kept), QueueKeys.EMPTY);
      after = Optional.of(kept);
    } else {
      TransitionTable.check(Event.COMPLETE, Node.of(r), Node.ABSENT);
      op.delete(job).delete(k.indexOf(r));
    }
    Optional<JobRecord> spawned = Optional.empty();
    if (r.repeatCount != 0) {
      JobRecord.Draft d = new JobRecord.Draft();
      d.id = nextId;
      d.priority = r.priority;
      d.delayUntil = now + r.repeatDelay;
      d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
      d.repeatCount =
          r.repeatCount == JobOptions.REPEAT_FOREVER
              ? JobOptions.REPEAT_FOREVER
              : r.repeatCount - 1;
      d.repeatDelay = r.repeatDelay;
      d.retriesLeft = r.retryLimit;
      d.retryLimit = r.retryLimit;
      d.backoff = r.backoff;
      d.payload = r.payload;
      d.timeoutMillis = r.timeoutMillis;
      d.interruptOnCancel = r.interruptOnCancel;
      JobRecord next = d.build();
      TransitionTable.check(Event.REPEAT, Node.ABSENT, Node.of(next));
      op.checkAbsent(k.job(nextId))
          .set(k.job(nextId), next.encode())
          .set(k.indexOf(next), QueueKeys.EMPTY);
      spawned = Optional.of(next);
    }
    return new Applied(op.build(), after, spawned);
  }

  /**
   * The lease holder reports a failed attempt: with retries left the job returns, keeping its id
   * and so its place, due after the backoff; with none left it becomes a dead letter. When the
   * error's message would make the record larger than the store takes, the message is replaced by
   * {@link #MESSAGE_DROPPED} (the error's type stays): an outcome is never lost to the size of its
   * message.
   *
   * @param random a number in [0, 1) for the backoff's jitter
   */
  static Plan fail(QueueKeys k, Holding h, long now, JobError error, double random) {
    return fail(k, h, now, error, random, false, true);
  }

  /**
   * The lease holder reports a failed attempt, as {@link #fail(QueueKeys, Holding, long, JobError,
   * double)}; the attempt is ended with the error. A job with no retries left becomes a dead letter
   * with its finish time when {@code keepDead}, and is removed in the same operation when not (the
   * queue keeps no dead letters).
   */
  static Plan fail(
      QueueKeys k, Holding h, long now, JobError error, double random, boolean keepDead) {
    return fail(k, h, now, error, random, false, keepDead);
  }

  /**
   * As {@link #fail(QueueKeys, Holding, long, JobError, double, boolean)}; a {@code permanent}
   * failure (the handler said so, or threw a type the queue calls non-retryable) makes the job a
   * dead letter at once, whatever retries it has left.
   */
  static Plan fail(
      QueueKeys k,
      Holding h,
      long now,
      JobError error,
      double random,
      boolean permanent,
      boolean keepDead) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    if ((r.retriesLeft == 0 || permanent) && !keepDead) {
      TransitionTable.check(Event.FAIL, Node.of(r), Node.ABSENT);
      Key job = k.job(r.id);
      AtomicOperation.Builder op =
          AtomicOperation.builder().check(job, h.versionstamp()).delete(job).delete(k.indexOf(r));
      return new Applied(op.build(), Optional.empty(), Optional.empty());
    }
    JobRecord.Draft d = r.draft().leaseUntil(0);
    d.error = error;
    d.attempts = History.ended(r.attempts, now, error);
    if (r.retriesLeft > 0 && !permanent) {
      int retry = r.retryLimit - r.retriesLeft + 1;
      d.retriesLeft = r.retriesLeft - 1;
      d.delayUntil = now + r.backoff.delayFor(retry, random).toMillis();
      d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
    } else {
      d.state = JobRecord.State.DEAD;
      d.finishedAt = now;
    }
    History.fit(d);
    if (d.build().encode().length > KvStore.MAX_VALUE_BYTES) {
      d.error = new JobError(error.type(), MESSAGE_DROPPED, error.failedAt());
    }
    return move(Event.FAIL, k, read(h), d);
  }

  /** A dead letter goes back to the queue with its retries restored. */
  static Plan replay(QueueKeys k, Read read) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.DEAD) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.READY);
    d.retriesLeft = r.retryLimit;
    d.delayUntil = 0;
    d.leaseExpiries = 0; // a replayed poison job gets the whole limit again
    d.finishedAt = -1;
    return move(Event.REPLAY, k, read, d);
  }

  /** Removes a job that is not being processed under a live lease (a cancelled one included). */
  static Plan delete(QueueKeys k, Read read, long now) {
    JobRecord r = read.record();
    if (r.state == JobRecord.State.LEASED && r.leaseUntil > now) {
      return PROCESSING;
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    deleteInto(op, k, read);
    return new Applied(op.build(), Optional.empty(), Optional.empty());
  }

  /** Removes a dead letter; any other job is refused ({@link Refusal#WRONG_STATE}). */
  static Plan deleteDead(QueueKeys k, Read read, long now) {
    return read.record().state == JobRecord.State.DEAD ? delete(k, read, now) : WRONG_STATE;
  }

  /**
   * Removes, in one operation, every job of {@code reads} that is waiting or delayed at {@code now}
   * (the seed's deleteWaitingJobs): not the ones processed under a live lease, not the dead
   * letters.
   */
  static Removal deleteWaiting(QueueKeys k, List<Read> reads, long now) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    int n = 0;
    for (Read read : reads) {
      JobStatus status = read.record().statusAt(now);
      if (status == JobStatus.WAITING || status == JobStatus.DELAYED) {
        deleteInto(op, k, read);
        n++;
      }
    }
    return new Removal(op.build(), n);
  }

  // ---- held jobs (docs/semantics.md, "Held jobs")

  /**
   * Held jobs moved in one operation (released or dropped): the records after the move, or before
   * it for a drop. The operation is empty when none moved.
   */
  record HeldMove(AtomicOperation operation, List<JobRecord> moved) {}

  /**
   * Adds a new held job to a larger operation: written in an application's transaction that has not
   * ended, in the held index (at its creation time), run by no worker until released. Its delay, if
   * any, counts from now. It carries the pusher's trace context, as a pushed job does.
   */
  static JobRecord holdInto(
      AtomicOperation.Builder op,
      QueueKeys k,
      String id,
      byte[] payload,
      JobOptions o,
      long now,
      Map<String, String> traceContext) {
    JobRecord.Draft d = newJob(id, payload, o, now, traceContext);
    d.state = JobRecord.State.HELD;
    return addNew(op, k, d, Event.HOLD);
  }

  /**
   * Releases, in one operation, every held job of {@code reads} (a committed transaction's, or the
   * ones an operator names): READY, or DELAYED while its delay runs. Jobs of {@code reads} that are
   * not held are left out; the operation checks the versionstamp of each one it moves.
   */
  static HeldMove releaseHeld(QueueKeys k, List<Read> reads, long now) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    List<JobRecord> moved = new java.util.ArrayList<>();
    for (Read read : reads) {
      JobRecord r = read.record();
      if (r.state != JobRecord.State.HELD) {
        continue;
      }
      JobRecord after =
          r.draft()
              .state(r.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY)
              .build();
      TransitionTable.check(Event.RELEASE_HELD, Node.HELD, Node.of(after));
      Key job = k.job(r.id);
      op.check(job, read.versionstamp())
          .set(job, after.encode())
          .delete(k.indexOf(r))
          .set(k.indexOf(after), QueueKeys.EMPTY);
      moved.add(after);
    }
    return new HeldMove(op.build(), List.copyOf(moved));
  }

  /**
   * Removes, in one operation, every held job of {@code reads} (a rolled-back transaction's); jobs
   * that are not held are left out. The operation checks the versionstamp of each one it removes.
   */
  static HeldMove dropHeld(QueueKeys k, List<Read> reads) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    List<JobRecord> moved = new java.util.ArrayList<>();
    for (Read read : reads) {
      JobRecord r = read.record();
      if (r.state != JobRecord.State.HELD) {
        continue;
      }
      TransitionTable.check(Event.DROP_HELD, Node.HELD, Node.ABSENT);
      op.check(k.job(r.id), read.versionstamp()).delete(k.job(r.id)).delete(k.indexOf(r));
      moved.add(r);
    }
    return new HeldMove(op.build(), List.copyOf(moved));
  }

  /**
   * The held-job policy {@code release after a timeout}: releases, in one operation, the held jobs
   * of {@code reads} held for {@code timeoutMillis} or longer at {@code now} (their transaction
   * neither committed nor rolled back in that time: their process died, or it is still open). The
   * caller logs each one it releases.
   */
  static HeldMove resolveHeld(QueueKeys k, List<Read> reads, long now, long timeoutMillis) {
    List<Read> due = new java.util.ArrayList<>();
    for (Read read : reads) {
      JobRecord r = read.record();
      if (r.state == JobRecord.State.HELD && r.createdAt() <= now - timeoutMillis) {
        due.add(read);
      }
    }
    return releaseHeld(k, due, now);
  }

  // ---- history (docs/semantics.md, "History")

  /**
   * The entries of one history index (completed, dead or cancelled) past {@code keep} at {@code
   * now}, from {@code oldest} (the index's first entries, oldest first) of an index that holds
   * {@code total} entries: an entry is past the age limit when its time is {@code maxAge} or more
   * before {@code now}, past the count limit when more than {@code maxCount} entries are newer or
   * as new. Pure; {@code total} is read only when the keep has a count limit.
   */
  static List<KvEntry> pastRetention(
      List<KvEntry> oldest, long total, Retention.Keep keep, long now) {
    List<KvEntry> past = new java.util.ArrayList<>();
    long overCount = keep.maxCount().isPresent() ? total - keep.maxCount().getAsLong() : 0;
    long ageLimit = keep.maxAge().map(a -> now - a.toMillis()).orElse(Long.MIN_VALUE);
    for (int i = 0; i < oldest.size(); i++) {
      KvEntry e = oldest.get(i);
      if (i < overCount || QueueKeys.timeOf(e.key()) <= ageLimit) {
        past.add(e);
      } else {
        break; // oldest first: every later entry is newer and fewer are after it
      }
    }
    return past;
  }

  /**
   * Removes, in one operation, the jobs of {@code entries} (entries of the history index of {@code
   * node}: COMPLETED or DEAD, or null for the cancelled index): each entry's versionstamp is
   * checked, so a job that moved since it was read (replayed, deleted, pruned by another worker) is
   * not touched: its entry is gone or new, and the commit fails as a whole; the next pass reads
   * again. An index entry and its record change in the same operations, so an unchanged entry means
   * an unchanged record.
   */
  static Removal prune(QueueKeys k, Node node, List<KvEntry> entries) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    for (KvEntry e : entries) {
      if (node != null) {
        TransitionTable.check(Event.PRUNE, node, Node.ABSENT);
      }
      op.check(e.key(), e.versionstamp()).delete(e.key()).delete(k.job(QueueKeys.idOf(e.key())));
    }
    return new Removal(op.build(), entries.size());
  }

  private static void deleteInto(AtomicOperation.Builder op, QueueKeys k, Read read) {
    JobRecord r = read.record();
    TransitionTable.check(Event.DELETE, Node.of(r), Node.ABSENT);
    op.check(k.job(r.id), read.versionstamp()).delete(k.job(r.id)).delete(k.indexOf(r));
  }

  private static boolean holds(Holding h) {
    return h.record().state == JobRecord.State.LEASED && h.record().token == h.token();
  }

  private static Read read(Holding h) {
    return new Read(h.record(), h.versionstamp());
  }

  /** The record moves from one state (or index position) to another, as the table allows. */
  private static Applied move(Event event, QueueKeys k, Read read, JobRecord.Draft d) {
    JobRecord before = read.record();
    JobRecord after = d.build();
    TransitionTable.check(event, Node.of(before), Node.of(after));
    Key oldIndex = k.indexOf(before);
    Key newIndex = k.indexOf(after);
    Key job = k.job(before.id);
    AtomicOperation.Builder op =
        AtomicOperation.builder().check(job, read.versionstamp()).set(job, after.encode());
    if (!oldIndex.equals(newIndex)) {
      op.delete(oldIndex).set(newIndex, QueueKeys.EMPTY);
    }
    return new Applied(op.build(), Optional.of(after), Optional.empty());
  }
}
