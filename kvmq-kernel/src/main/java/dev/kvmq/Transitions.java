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

  /**
   * A job as read: its record and the versionstamp it was read at, and, where the reader has them,
   * the key it was read at and the index entry that led to it (null when not known). A move uses
   * either key only when it is the very key it would build ({@link QueueKeys#isJob}, {@link
   * QueueKeys#isReadyIndexOf}), so a key that is not costs a build, never a different operation.
   *
   * @param jobKey the key the record was read at, or null
   * @param indexKey the index entry that led to the record, or null
   */
  record Read(JobRecord record, long versionstamp, Key jobKey, Key indexKey) {
    /** A job as read, its keys not known. */
    Read(JobRecord record, long versionstamp) {
      this(record, versionstamp, null, null);
    }
  }

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
    return pushInto(op, k, id, payload, o, now, traceContext, GroupBook.none(), false);
  }

  /**
   * Adds a new job to a larger operation, booked in {@code g} (the caller finishes the book into
   * the operation once every job is added): a ready job of a group with no free slot is parked.
   *
   * <p>With {@code admitLater}, for a push through a store whose locks last until its caller's
   * transaction ends ({@link dev.kvmq.store.KvStore#joinsCallersTransaction()}), a job of a group
   * that would be ready is written delayed instead, due at its due time (which has come), and
   * {@code g} is left alone: the push writes no key that other jobs share (its group's record), so
   * no commit of the group waits for the caller. The promotion a worker makes once the caller has
   * committed ({@link #promoteInto}) admits or parks it by the group's counts of that moment. A job
   * of no group, or due later, is pushed as without the flag.
   *
   * @param admitLater whether a due job of a group is left for a promotion to admit
   */
  static JobRecord pushInto(
      AtomicOperation.Builder op,
      QueueKeys k,
      String id,
      byte[] payload,
      JobOptions o,
      long now,
      Map<String, String> traceContext,
      GroupBook g,
      boolean admitLater) {
    JobRecord.Draft d = newJob(id, payload, o, now, traceContext);
    boolean delayed = d.delayUntil > now || (admitLater && d.group != null);
    d.state = delayed ? JobRecord.State.DELAYED : JobRecord.State.READY;
    return addNew(op, k, d, Event.PUSH, g);
  }

  /** Adds the new job of {@code d} to {@code op}: checked absent, written with its index entry. */
  private static JobRecord addNew(
      AtomicOperation.Builder op, QueueKeys k, JobRecord.Draft d, Event event, GroupBook g) {
    g.move(null, d);
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
    d.group = o.group();
    d.unique = o.unique();
    d.holdsUnique = o.unique() != null && o.unique().scope() != UniqueKey.Scope.PERIOD;
    d.timeoutMillis = o.timeout() == null ? -1 : o.timeout().toMillis();
    d.interruptOnCancel = o.interruptOnCancel();
    return d;
  }

  /** A delayed job whose time has come joins the ready index, in its priority place. */
  static Plan promote(QueueKeys k, Read read, long now) {
    return promote(k, read, now, GroupBook.none());
  }

  /** A delayed job whose time has come is admitted to the ready index or parked ({@code g}). */
  static Plan promote(QueueKeys k, Read read, long now, GroupBook g) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.DELAYED || r.delayUntil > now) {
      return WRONG_STATE;
    }
    return move(Event.PROMOTE, k, read, r.draft().state(JobRecord.State.READY), g);
  }

  /**
   * Adds the promotion of a due delayed job to a larger operation (the promotions of one group's
   * jobs, which share its record); the caller finishes {@code g} into it. Null when the job is not
   * due or not delayed (nothing added).
   */
  static JobRecord promoteInto(
      AtomicOperation.Builder op, QueueKeys k, Read read, long now, GroupBook g) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.DELAYED || r.delayUntil > now) {
      return null;
    }
    return moveInto(op, Event.PROMOTE, k, read, r.draft().state(JobRecord.State.READY), g);
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
    return reclaim(k, read, now, maxExpiries, GroupBook.none());
  }

  /**
   * As {@link #reclaim(QueueKeys, Read, long, int)}, booked in {@code g}: a job of a group keeps
   * its slot when it is reclaimed, and frees it when it becomes a dead letter.
   */
  static Plan reclaim(QueueKeys k, Read read, long now, int maxExpiries, GroupBook g) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord after = reclaimInto(op, k, read, now, maxExpiries, g);
    if (after == null) {
      return WRONG_STATE;
    }
    g.finishInto(op);
    return new Applied(op.build(), Optional.of(after), Optional.empty());
  }

  /**
   * Adds the reclaim of an expired lease to a larger operation (the reclaims and promotions of one
   * group's jobs, which share its record); the caller finishes {@code g} into it. Null when the job
   * is not leased or its lease has not expired (nothing added).
   */
  static JobRecord reclaimInto(
      AtomicOperation.Builder op, QueueKeys k, Read read, long now, int maxExpiries, GroupBook g) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.LEASED || r.leaseUntil > now) {
      return null;
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
                  + " times (its worker died, hung, or was stopped before the handler returned,"
                  + " each time): a dead letter instead of"
                  + " reclaimed again",
              java.time.Instant.ofEpochMilli(now));
      d.finishedAt = now;
      d.holdsUnique = false; // a dead letter's scope is over: the move deletes the key's entry
    } else {
      d.state = JobRecord.State.READY;
    }
    return moveInto(op, Event.RECLAIM, k, read, d, g);
  }

  /**
   * An operator cancels a job that has not ended (ready, delayed, leased with a live or an expired
   * lease, held): CANCELLED at {@code now}, in the cancelled index, kept. A lease on it is revoked
   * in the same operation: the record is no longer LEASED, so the holder's complete, fail, renew
   * and update are refused ({@link Refusal#LEASE_LOST}), and its planned operations fail their
   * versionstamp check; the attempt under way ends at {@code now}. Dead letters and cancelled jobs
   * have ended: {@link Refusal#WRONG_STATE}.
   */
  static Plan cancel(QueueKeys k, Read read, long now) {
    return cancel(k, read, now, GroupBook.none());
  }

  /**
   * As {@link #cancel(QueueKeys, Read, long)}, booked in {@code g}: a job of a group frees its slot
   * (or its place among the parked) in the same operation, and a unique key it holds is released.
   */
  static Plan cancel(QueueKeys k, Read read, long now, GroupBook g) {
    JobRecord r = read.record();
    if (r.state == JobRecord.State.DEAD
        || r.state == JobRecord.State.CANCELLED
        || r.state == JobRecord.State.COMPLETED) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.CANCELLED).leaseUntil(0);
    d.cancelledAt = now;
    d.parked = false;
    d.holdsUnique = false; // a cancelled job's scope is over: the move deletes the key's entry
    d.attempts = History.ended(r.attempts, now, null); // a run under way ends with the cancel
    return move(Event.CANCEL, k, read, d, g);
  }

  /**
   * The lease holder puts its job back, due {@code delayMillis} after {@code now}, without using a
   * retry: its retries left stay, its attempt count keeps this run, and its place in the ready
   * index is its priority's, as for any due job.
   */
  static Plan snooze(QueueKeys k, Holding h, long now, long delayMillis) {
    return snooze(k, h, now, delayMillis, GroupBook.none());
  }

  /**
   * As {@link #snooze(QueueKeys, Holding, long, long)}, booked in {@code g}: a job of a group that
   * waits frees its slot, one that is ready at once keeps it.
   */
  static Plan snooze(QueueKeys k, Holding h, long now, long delayMillis, GroupBook g) {
    return snooze(k, h, now, delayMillis, g, null);
  }

  /**
   * As {@link #snooze(QueueKeys, Holding, long, long, GroupBook)}, the attempt ending with {@code
   * error} (null: without one): a handler that failed after its worker said it is stopping gives
   * its job back so, with no retry used and the job's last error unchanged.
   */
  static Plan snooze(
      QueueKeys k, Holding h, long now, long delayMillis, GroupBook g, JobError error) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord.Draft d = h.record().draft().leaseUntil(0);
    d.delayUntil = now + delayMillis;
    d.state = delayMillis > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
    d.attempts = History.ended(h.record().attempts, now, error);
    return move(Event.SNOOZE, k, read(h), d, g);
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
    JobRecord.Draft d = claimed(read.record(), now, leaseMillis, node);
    return d == null ? WRONG_STATE : move(Event.CLAIM, k, read, d);
  }

  /** The record a claim makes of {@code r}, or null when {@code r} is not ready and admitted. */
  private static JobRecord.Draft claimed(JobRecord r, long now, long leaseMillis, String node) {
    if (r.state != JobRecord.State.READY || r.parked) {
      return null;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.LEASED).leaseUntil(now + leaseMillis);
    d.token = r.token + 1;
    d.attempt = r.attempt + 1;
    if (r.holdsUnique && r.unique.scope() == UniqueKey.Scope.WAITING) {
      d.holdsUnique = false; // its scope ends: move deletes the key's entry
    }
    d.attempts =
        History.started(
            r.attempts,
            new Attempt(
                d.attempt, Instant.ofEpochMilli(now), Optional.empty(), node, Optional.empty()));
    return d;
  }

  /**
   * A new job handed to an idle worker in its push's own commit (docs/semantics.md, "Handoff"):
   * {@link #push} and then {@link #claim(QueueKeys, Read, long, long, String)} of the job it
   * pushed, as one operation. Each step is planned by its own transition (so each is an edge of the
   * table: PUSH, then CLAIM); the operation keeps the push's checks, adds that neither the queue
   * ({@link QueueKeys#paused}) nor its starts ({@link QueueKeys#startsPaused()}) are paused, and
   * writes what the claim leaves: the leased record and its lease entry. The ready entry the push
   * would write and the claim delete is never written: the job's keys are new (the push checks its
   * record absent), so the two steps' net effect on it is none.
   *
   * <p>Only for a job that a push makes ready and a claim takes at once: due now, of no group, with
   * no unique key (their rules read the store: they take the plain push).
   *
   * @throws IllegalArgumentException if {@code o} has a delay, a group or a unique key
   */
  static Applied pushClaimed(
      QueueKeys k,
      String id,
      byte[] payload,
      JobOptions o,
      long now,
      Map<String, String> traceContext,
      long leaseMillis,
      String node) {
    if (o.group() != null || o.unique() != null) {
      throw new IllegalArgumentException(
          "a job of a group or with a unique key is not handed off: push it");
    }
    AtomicOperation.Builder pushOp = AtomicOperation.builder();
    JobRecord ready = pushInto(pushOp, k, id, payload, o, now, traceContext);
    if (ready.state != JobRecord.State.READY) {
      throw new IllegalArgumentException("a job due later is not handed off: push it");
    }
    AtomicOperation pushed = pushOp.build();
    // the versionstamp is the push's, unknown before the commit; the claim's check of it is
    // dropped below, since the record it checks is the one this operation writes
    if (!(claim(k, new Read(ready, Long.MAX_VALUE), now, leaseMillis, node)
        instanceof Applied claimed)) {
      throw new IllegalStateException("a pushed ready job can't be claimed. Indicates a bug.");
    }
    java.util.Set<Key> pushedKeys = new java.util.HashSet<>();
    java.util.Set<Key> claimedKeys = new java.util.HashSet<>();
    for (AtomicOperation.Mutation m : pushed.mutations()) {
      pushedKeys.add(m.key());
    }
    for (AtomicOperation.Mutation m : claimed.operation().mutations()) {
      claimedKeys.add(m.key());
      if (m.isDelete() && !pushedKeys.contains(m.key())) {
        throw new IllegalStateException(
            "a claim of a new job deletes " + m.key() + ". Indicates a bug.");
      }
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    for (AtomicOperation.Check c : pushed.checks()) {
      op.check(c.key(), c.versionstamp());
    }
    op.checkAbsent(k.paused).checkAbsent(k.startsPaused());
    for (AtomicOperation.Mutation m : pushed.mutations()) {
      if (claimedKeys.contains(m.key())) {
        continue; // the claim's write of it is the one that stays
      }
      if (m.isDelete()) {
        op.delete(m.key());
      } else {
        op.set(m.key(), m.value());
      }
    }
    for (AtomicOperation.Mutation m : claimed.operation().mutations()) {
      if (!m.isDelete()) { // a delete is of a key the push made: neither is written
        op.set(m.key(), m.value());
      }
    }
    return new Applied(op.build(), claimed.after(), Optional.empty());
  }

  /**
   * A start slot of the queue's rate limit, as read (docs/flow-control.md, "Rate limits"): slot
   * {@code slot} was last taken at {@code takenAt} ({@link #NEVER} for a slot not written yet, then
   * {@code versionstamp} is {@link AtomicOperation#ABSENT}). It is free at {@code now} when {@code
   * takenAt + period <= now}.
   */
  record RateSlot(long slot, long takenAt, long versionstamp) {}

  /** The {@link RateSlot#takenAt} of a slot never taken. */
  static final long NEVER = -1;

  /**
   * A claim in a queue whose starts are paused now and then, or rate limited: as {@link
   * #claim(QueueKeys, Read, long, long)}, and the operation also checks that the pause is as read
   * ({@code pausedVs}: a pause committed since refuses the claim) and, with a rate limit, takes
   * {@code slot} (checked at its versionstamp, so two claims cannot take one slot): the slot's time
   * becomes {@code now}.
   *
   * @param pausedVs the versionstamp the pause was read at, {@link AtomicOperation#ABSENT} if none
   * @param slot the free start slot this claim takes, or null with no rate limit
   */
  static Plan claim(
      QueueKeys k, Read read, long now, long leaseMillis, long pausedVs, RateSlot slot) {
    return claim(k, read, now, leaseMillis, "", pausedVs, slot);
  }

  /**
   * As {@link #claim(QueueKeys, Read, long, long, long, RateSlot)}, by a worker on {@code node}
   * (the attempt it starts names it).
   */
  static Plan claim(
      QueueKeys k,
      Read read,
      long now,
      long leaseMillis,
      String node,
      long pausedVs,
      RateSlot slot) {
    return claim(k, read, now, leaseMillis, node, pausedVs, slot, null);
  }

  /**
   * As {@link #claim(QueueKeys, Read, long, long, String, long, RateSlot)}; a job of a group is
   * claimed only while its group's starts are not paused (the operation checks that {@link
   * QueueKeys#groupPaused} is absent: a pause committed since, or one not yet removed, refuses the
   * claim), and with a rate limit of its group it takes {@code groupSlot}, a free slot of the
   * group's window, as {@code slot} is taken of the queue's.
   *
   * @param groupSlot the free start slot of the job's group this claim takes, or null when its
   *     group has no rate limit
   * @throws IllegalArgumentException if {@code groupSlot} is given for a job of no group
   */
  static Plan claim(
      QueueKeys k,
      Read read,
      long now,
      long leaseMillis,
      String node,
      long pausedVs,
      RateSlot slot,
      RateSlot groupSlot) {
    String group = read.record().group;
    if (groupSlot != null && group == null) {
      throw new IllegalArgumentException("a group's start slot for a job of no group");
    }
    JobRecord.Draft d = claimed(read.record(), now, leaseMillis, node);
    if (d == null) {
      return WRONG_STATE;
    }
    // the plain claim's move, written into the operation that adds this claim's checks
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord after = moveInto(op, Event.CLAIM, k, read, d, GroupBook.none());
    op.check(k.startsPaused(), pausedVs);
    if (slot != null) {
      takeSlot(op, k.rateWindow(), slot, now);
    }
    if (group != null) {
      op.checkAbsent(k.groupPaused(group));
    }
    if (groupSlot != null) {
      takeSlot(op, k.rateWindow(group), groupSlot, now);
    }
    return new Applied(op.build(), Optional.of(after), Optional.empty());
  }

  /** Takes a free slot of a window at {@code now}, checked at the versionstamp it was read at. */
  private static void takeSlot(
      AtomicOperation.Builder op, QueueKeys.RateWindow w, RateSlot slot, long now) {
    op.check(w.slot(slot.slot()), slot.versionstamp()).set(w.slot(slot.slot()), encodeTime(now));
    if (slot.takenAt() != NEVER) {
      op.delete(w.taken(slot.takenAt(), slot.slot()));
    }
    op.set(w.taken(now, slot.slot()), QueueKeys.EMPTY);
  }

  /**
   * A claim found the starts of {@code group} blocked until {@code until} (its rate window full
   * until a slot frees then, or its starts paused until then): the jobs of {@code ready} that are
   * ready and admitted in that group move to its parked jobs, freeing their slots, and the group
   * admits none of its jobs before {@code until} ({@link GroupBook#block}), so that no claim meets
   * them again before then. Each job's versionstamp is checked, and the group's record (through
   * {@code g}, a book over the group read with the jobs). Refused ({@link Refusal#WRONG_STATE})
   * when no job of {@code ready} can be blocked.
   */
  static Plan block(QueueKeys k, List<Read> ready, String group, long until, GroupBook g) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    int n = 0;
    for (Read read : ready) {
      JobRecord r = read.record();
      if (r.state != JobRecord.State.READY || r.parked || !group.equals(r.group)) {
        continue;
      }
      JobRecord.Draft d = r.draft();
      g.park(r, d);
      JobRecord after = d.build();
      TransitionTable.check(Event.BLOCK, Node.of(r), Node.of(after));
      Key job = k.job(r.id);
      op.check(job, read.versionstamp())
          .set(job, after.encode())
          .delete(k.indexOf(r))
          .set(k.indexOf(after), QueueKeys.EMPTY);
      n++;
    }
    if (n == 0) {
      return WRONG_STATE;
    }
    g.block(group, until);
    g.finishInto(op);
    return new Applied(op.build(), Optional.empty(), Optional.empty());
  }

  /**
   * The time a blocked group admits again has come ({@link QueueKeys#groupWaking}): the group is
   * unblocked and its first parked jobs are admitted up to its limit ({@code g}, a book over the
   * group read with its heads), and a pause of its starts that has ended is removed, checked at
   * {@code pausedVs}. Refused ({@link Refusal#WRONG_STATE}) when the group is not blocked, or
   * blocked past {@code now}.
   *
   * @param pausedUntil the end of the group's pause as read, 0 when none
   * @param pausedVs its versionstamp, {@link AtomicOperation#ABSENT} when none
   */
  static Plan wake(
      QueueKeys k, String group, long now, long pausedUntil, long pausedVs, GroupBook g) {
    if (!g.wake(group, now)) {
      return WRONG_STATE;
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    g.finishInto(op);
    if (pausedVs != AtomicOperation.ABSENT && pausedUntil <= now) {
      op.check(k.groupPaused(group), pausedVs).delete(k.groupPaused(group));
    }
    return new Applied(op.build(), Optional.empty(), Optional.empty());
  }

  /**
   * A worker starts under limits that give {@code group} a free slot while some of its jobs are
   * parked (its limit was raised or removed since they parked; a limit of 0 raised leaves a group
   * with no admitted job, so no completion to come would admit them): its first parked jobs are
   * admitted up to its limit ({@code g}, a book over the group read with its heads), the group's
   * record checked at the versionstamp read. Refused ({@link Refusal#WRONG_STATE}) when the group
   * is blocked, has no free slot or no parked job, or no job of the heads read is still parked.
   */
  static Plan admitFreeSlots(String group, GroupBook g) {
    if (!g.reopen(group)) {
      return WRONG_STATE;
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    g.finishInto(op);
    if (g.admittedHeads().isEmpty()) {
      return WRONG_STATE;
    }
    return new Applied(op.build(), Optional.empty(), Optional.empty());
  }

  /** A time (epoch ms) as the value of a pause or a rate slot. */
  static byte[] encodeTime(long t) {
    return java.nio.ByteBuffer.allocate(8).putLong(t).array();
  }

  /** The time of {@link #encodeTime}. */
  static long decodeTime(byte[] value) {
    if (value.length != 8) {
      throw new IllegalStateException("not a time of this kvmq: " + value.length + " bytes");
    }
    return java.nio.ByteBuffer.wrap(value).getLong();
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
    return complete(k, h, now, nextId, false, null, GroupBook.none());
  }

  /**
   * As {@link #complete(QueueKeys, Holding, long, String)}, for a job of a group: its slot is freed
   * (and the group's next parked job admitted) in the same operation, booked in {@code g}.
   */
  static Plan complete(QueueKeys k, Holding h, long now, String nextId, GroupBook g) {
    return complete(k, h, now, nextId, false, null, g);
  }

  /**
   * As {@link #complete(QueueKeys, Holding, long, String, boolean, String, GroupBook)}, no group.
   */
  static Plan complete(
      QueueKeys k, Holding h, long now, String nextId, boolean keep, String result) {
    return complete(k, h, now, nextId, keep, result, GroupBook.none());
  }

  /**
   * The lease holder completes the job. With {@code keep} (the queue keeps completed jobs) the
   * record stays, COMPLETED, in the completed index at {@code now}, with {@code result} and its
   * last attempt ended; without, it is gone. Either way a job of a group frees its slot (booked in
   * {@code g}) and a unique key it holds is released. If it repeats, its next run is written in the
   * same operation as a new job {@code nextId} at the back of the queue (a run of its own, kept
   * when it completes in turn).
   *
   * @param nextId the id of the next run; read only when the job repeats
   * @param keep whether the completed record is kept
   * @param result the handler's result, or null
   */
  static Plan complete(
      QueueKeys k, Holding h, long now, String nextId, boolean keep, String result, GroupBook g) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    Key job = k.job(r.id);
    AtomicOperation.Builder op = AtomicOperation.builder().check(job, h.versionstamp());
    Optional<JobRecord> after = Optional.empty();
    g.move(r, null);
    releaseUnique(op, k, r);
    if (keep) {
      JobRecord.Draft d = r.draft().state(JobRecord.State.COMPLETED).leaseUntil(0);
      d.finishedAt = now;
      d.result = result;
      d.attempts = History.ended(r.attempts, now, null);
      d.holdsUnique = false; // released above
      d.parked = false;
      JobRecord kept = d.build();
      byte[] value = kept.encode();
      if (value.length > KvStore.MAX_VALUE_BYTES) { // grown by its history: keep less of it
        kept = History.shrink(d, value.length).build();
        value = kept.encode();
      }
      TransitionTable.check(Event.COMPLETE, Node.of(r), Node.COMPLETED);
      op.set(job, value).delete(k.indexOf(r)).set(k.indexOf(kept), QueueKeys.EMPTY);
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
      d.group = r.group;
      g.move(null, d);
      JobRecord next = d.build();
      TransitionTable.check(Event.REPEAT, Node.ABSENT, Node.of(next));
      op.checkAbsent(k.job(nextId))
          .set(k.job(nextId), next.encode())
          .set(k.indexOf(next), QueueKeys.EMPTY);
      spawned = Optional.of(next);
    }
    g.finishInto(op);
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
    return fail(k, h, now, error, random, false, true, GroupBook.none());
  }

  /**
   * As {@link #fail(QueueKeys, Holding, long, JobError, double)}; a {@code permanent} failure makes
   * the job a dead letter at once: see {@link #fail(QueueKeys, Holding, long, JobError, double,
   * boolean, boolean, GroupBook)}.
   */
  static Plan fail(
      QueueKeys k, Holding h, long now, JobError error, double random, boolean permanent) {
    return fail(k, h, now, error, random, permanent, true, GroupBook.none());
  }

  /**
   * The lease holder reports a failed attempt, as {@link #fail(QueueKeys, Holding, long, JobError,
   * double)}, booked in {@code g}; the attempt is ended with the error. A {@code permanent} failure
   * (the handler said so, or threw a type the queue calls non-retryable) makes the job a dead
   * letter at once, whatever retries it has left. A job that becomes a dead letter gets its finish
   * time when {@code keepDead}, and is removed in the same operation when not (the queue keeps no
   * dead letters).
   */
  static Plan fail(
      QueueKeys k,
      Holding h,
      long now,
      JobError error,
      double random,
      boolean permanent,
      boolean keepDead,
      GroupBook g) {
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    if ((r.retriesLeft == 0 || permanent) && !keepDead) {
      TransitionTable.check(Event.FAIL, Node.of(r), Node.ABSENT);
      Key job = k.job(r.id);
      AtomicOperation.Builder op =
          AtomicOperation.builder().check(job, h.versionstamp()).delete(job).delete(k.indexOf(r));
      g.move(r, null);
      releaseUnique(op, k, r);
      g.finishInto(op);
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
      d.holdsUnique = false; // a dead letter's scope is over: move deletes the key's entry
      d.finishedAt = now;
    }
    return move(Event.FAIL, k, read(h), d, g); // shrinks the record if it outgrew the store
  }

  /** A dead letter goes back to the queue with its retries restored. */
  static Plan replay(QueueKeys k, Read read) {
    return replay(k, read, GroupBook.none());
  }

  /** As {@link #replay(QueueKeys, Read)}: a job of a group is admitted or parked ({@code g}). */
  static Plan replay(QueueKeys k, Read read, GroupBook g) {
    JobRecord r = read.record();
    if (r.state != JobRecord.State.DEAD) {
      return WRONG_STATE;
    }
    JobRecord.Draft d = r.draft().state(JobRecord.State.READY);
    d.retriesLeft = r.retryLimit;
    d.delayUntil = 0;
    d.leaseExpiries = 0; // a replayed poison job gets the whole limit again
    d.finishedAt = -1;
    return move(Event.REPLAY, k, read, d, g);
  }

  /** Removes a job that is not being processed under a live lease (a cancelled one included). */
  static Plan delete(QueueKeys k, Read read, long now) {
    return delete(k, read, now, GroupBook.none());
  }

  /** As {@link #delete(QueueKeys, Read, long)}: a job of a group frees its slot ({@code g}). */
  static Plan delete(QueueKeys k, Read read, long now, GroupBook g) {
    JobRecord r = read.record();
    if (r.state == JobRecord.State.LEASED && r.leaseUntil > now) {
      return PROCESSING;
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    deleteInto(op, k, read, g);
    g.finishInto(op);
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
    return deleteWaiting(k, reads, now, GroupBook.none());
  }

  /** As {@link #deleteWaiting(QueueKeys, List, long)}, booked in {@code g}. */
  static Removal deleteWaiting(QueueKeys k, List<Read> reads, long now, GroupBook g) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    int n = 0;
    for (Read read : reads) {
      JobStatus status = read.record().statusAt(now);
      if (status == JobStatus.WAITING || status == JobStatus.DELAYED) {
        deleteInto(op, k, read, g);
        n++;
      }
    }
    if (n > 0) {
      g.finishInto(op);
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
    return addNew(op, k, d, Event.HOLD, GroupBook.none());
  }

  /**
   * Releases, in one operation, every held job of {@code reads} (a committed transaction's, or the
   * ones an operator names): READY, or DELAYED while its delay runs. Jobs of {@code reads} that are
   * not held are left out; the operation checks the versionstamp of each one it moves.
   */
  static HeldMove releaseHeld(QueueKeys k, List<Read> reads, long now) {
    return releaseHeld(k, reads, now, GroupBook.none());
  }

  /** As {@link #releaseHeld(QueueKeys, List, long)}: jobs of a group admitted or parked. */
  static HeldMove releaseHeld(QueueKeys k, List<Read> reads, long now, GroupBook g) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    List<JobRecord> moved = new java.util.ArrayList<>();
    for (Read read : reads) {
      JobRecord r = read.record();
      if (r.state != JobRecord.State.HELD) {
        continue;
      }
      JobRecord.Draft d =
          r.draft().state(r.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY);
      g.move(r, d);
      JobRecord after = d.build();
      TransitionTable.check(Event.RELEASE_HELD, Node.HELD, Node.of(after));
      Key job = k.job(r.id);
      op.check(job, read.versionstamp())
          .set(job, after.encode())
          .delete(k.indexOf(r))
          .set(k.indexOf(after), QueueKeys.EMPTY);
      moved.add(after);
    }
    if (!moved.isEmpty()) {
      g.finishInto(op);
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
    return resolveHeld(k, reads, now, timeoutMillis, GroupBook.none());
  }

  /** As {@link #resolveHeld(QueueKeys, List, long, long)}, booked in {@code g}. */
  static HeldMove resolveHeld(
      QueueKeys k, List<Read> reads, long now, long timeoutMillis, GroupBook g) {
    List<Read> due = new java.util.ArrayList<>();
    for (Read read : reads) {
      JobRecord r = read.record();
      if (r.state == JobRecord.State.HELD && r.createdAt() <= now - timeoutMillis) {
        due.add(read);
      }
    }
    return releaseHeld(k, due, now, g);
  }

  // ---- unique jobs (docs/flow-control.md, "Unique jobs")

  /**
   * Adds to {@code op} the release of {@code r}'s unique key, if {@code r} holds it ({@link
   * JobRecord#holdsUnique}): the key's index entry is deleted. For every operation that ends a
   * job's key scope (complete, dead letter, delete, a claim of a {@link UniqueKey.Scope#WAITING}
   * key, and cancel): the operation must also check {@code r}'s versionstamp, which makes the entry
   * this record's (an entry and its holder are written in the same commits). An operation that
   * keeps the record writes it with {@code holdsUnique} false ({@code draft.holdsUnique = false}).
   */
  static void releaseUnique(AtomicOperation.Builder op, QueueKeys k, JobRecord r) {
    if (r.holdsUnique) {
      op.delete(k.unique(r.unique.key()));
    }
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

  private static void deleteInto(AtomicOperation.Builder op, QueueKeys k, Read read, GroupBook g) {
    JobRecord r = read.record();
    g.move(r, null);
    TransitionTable.check(Event.DELETE, Node.of(r), Node.ABSENT);
    op.check(k.job(r.id), read.versionstamp()).delete(k.job(r.id)).delete(k.indexOf(r));
    releaseUnique(op, k, r);
  }

  private static boolean holds(Holding h) {
    return h.record().state == JobRecord.State.LEASED && h.record().token == h.token();
  }

  private static Read read(Holding h) {
    return new Read(h.record(), h.versionstamp());
  }

  /** The record moves from one state (or index position) to another, as the table allows. */
  private static Applied move(Event event, QueueKeys k, Read read, JobRecord.Draft d) {
    return move(event, k, read, d, GroupBook.none());
  }

  /** As {@link #move(Event, QueueKeys, Read, JobRecord.Draft)}, booked in {@code g}. */
  private static Applied move(Event event, QueueKeys k, Read read, JobRecord.Draft d, GroupBook g) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord after = moveInto(op, event, k, read, d, g);
    g.finishInto(op);
    return new Applied(op.build(), Optional.of(after), Optional.empty());
  }

  /** Adds a move to a larger operation; the caller finishes {@code g} into it. */
  private static JobRecord moveInto(
      AtomicOperation.Builder op,
      Event event,
      QueueKeys k,
      Read read,
      JobRecord.Draft d,
      GroupBook g) {
    JobRecord before = read.record();
    g.move(before, d);
    JobRecord after = d.build();
    byte[] value = after.encode();
    if (value.length > KvStore.MAX_VALUE_BYTES) { // grown by its history: keep less of it
      after = History.shrink(d, value.length).build();
      value = after.encode();
    }
    TransitionTable.check(event, Node.of(before), Node.of(after));
    // the keys the read came with, when they are the ones to build: a claim builds one key, not 3
    Key oldIndex =
        read.indexKey() != null && k.isReadyIndexOf(read.indexKey(), before)
            ? read.indexKey()
            : k.indexOf(before);
    Key newIndex = k.indexOf(after);
    Key job =
        read.jobKey() != null && k.isJob(read.jobKey(), before.id)
            ? read.jobKey()
            : k.job(before.id);
    op.check(job, read.versionstamp()).set(job, value);
    if (!oldIndex.equals(newIndex)) {
      op.delete(oldIndex).set(newIndex, QueueKeys.EMPTY);
    }
    if (before.holdsUnique && !after.holdsUnique) {
      releaseUnique(op, k, before);
    }
    return after;
  }

  // ---- rate limits and paused starts (docs/flow-control.md, "Rate limits")

  /**
   * A pause of starts as a handler asks for it and as stored: no start before {@code until}; the
   * stored pause ends at {@code storedUntil} (0 when none) and was read at {@code versionstamp}
   * ({@link AtomicOperation#ABSENT} when absent).
   */
  record Pause(long until, long storedUntil, long versionstamp) {}

  /**
   * The lease holder says the remote side limits us: the job waits, due at {@code until}, with the
   * attempt it made not counted and no retry used (its slot of a group freed, booked in {@code g}),
   * and the queue's starts are paused until {@code until} (or the later end already stored) in the
   * same operation, which checks the pause's versionstamp.
   *
   * @param paused the pause as read: its end (0 when none) and versionstamp ({@link
   *     AtomicOperation#ABSENT} when absent)
   */
  static Plan defer(
      QueueKeys k, Holding h, long until, long pausedUntil, long pausedVs, GroupBook g) {
    return defer(k, h, new Pause(until, pausedUntil, pausedVs), null, g);
  }

  /**
   * The lease holder says the remote side limits the queue ({@code queue}), its job's group ({@code
   * group}), or both: the job waits, due when the later pause ends, with the attempt it made not
   * counted and no retry used (its slot of a group freed, booked in {@code g}). The queue's pause
   * key ({@link QueueKeys#startsPaused}) and the group's ({@link QueueKeys#groupPaused}) are set to
   * the later of the asked and the stored end in the same operation, which checks each one's
   * versionstamp; a group's pause also blocks its admissions until its end ({@link
   * GroupBook#block}).
   *
   * @param queue the queue's pause, or null
   * @param group the pause of the job's group, or null
   * @throws IllegalArgumentException if both are null, or {@code group} is given for a job of no
   *     group
   */
  static Plan defer(QueueKeys k, Holding h, Pause queue, Pause group, GroupBook g) {
    if (queue == null && group == null) {
      throw new IllegalArgumentException("a deferral pauses the queue or the group");
    }
    if (!holds(h)) {
      return LEASE_LOST;
    }
    JobRecord r = h.record();
    if (group != null && r.group == null) {
      throw new IllegalArgumentException("job " + r.id + " belongs to no group");
    }
    long until = Math.max(queue == null ? 0 : queue.until(), group == null ? 0 : group.until());
    JobRecord.Draft d = r.draft().state(JobRecord.State.DELAYED).leaseUntil(0);
    d.delayUntil = until;
    d.attempt = r.attempt - 1;
    d.attempts = History.unstarted(r.attempts, r.attempt); // not counted: not an attempt
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord after = moveInto(op, Event.DEFER, k, read(h), d, g);
    if (group != null) {
      g.block(r.group, group.until());
    }
    g.finishInto(op);
    if (queue != null) {
      pauseInto(op, k.startsPaused(), queue);
    }
    if (group != null) {
      pauseInto(op, k.groupPaused(r.group), group);
    }
    return new Applied(op.build(), Optional.of(after), Optional.empty());
  }

  private static void pauseInto(AtomicOperation.Builder op, Key key, Pause p) {
    op.check(key, p.versionstamp());
    if (p.until() > p.storedUntil()) {
      op.set(key, encodeTime(p.until()));
    }
  }
}
