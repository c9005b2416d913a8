package dev.kvmq;

import dev.kvmq.TransitionTable.Event;
import dev.kvmq.TransitionTable.Node;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The schedules' rules as pure functions, like {@link Transitions} for jobs: from what was read (a
 * schedule record and its versionstamp, the previous job's record) and the time to the one atomic
 * operation that makes the next state true. No clock, no I/O. Every operation checks the
 * versionstamp of the schedule record it was planned from, so of two workers (on any nodes) that
 * read the same due schedule only one commits its firing: each slot makes its jobs once.
 *
 * <p>A schedule's due index entry ({@link QueueKeys#due}) exists exactly while its record is not
 * paused and has a next slot, at that slot; every operation here that moves the slot moves the
 * entry with it. A due entry that does not match its record (left by a delete of an unreadable
 * record) is removed by {@link #repair}.
 *
 * <p>The jobs a firing pushes are edges of the {@link TransitionTable} ({@link Event#FIRE}, {@link
 * Event#TRIGGER}: absent to ready).
 */
final class ScheduleTransitions {

  private ScheduleTransitions() {}

  /**
   * The most slots one call of {@link ScheduleSpec#slotsBetween} may list while a firing looks for
   * its due slots: more than {@link MissedRuns#MAX_LIMIT}, so that a window that held fewer is
   * known whole.
   */
  static final int SLOT_SCAN = 2 * MissedRuns.MAX_LIMIT + 2;

  /** A schedule record as read; {@code record} is null when the bytes can't be decoded. */
  record Stored(ScheduleRecord record, long versionstamp) {}

  /**
   * The job a schedule pushed last, as read: its record (null when absent or unreadable) and its
   * versionstamp ({@link AtomicOperation#ABSENT} when absent).
   */
  record Previous(JobRecord record, long versionstamp) {
    static final Previous NONE = new Previous(null, AtomicOperation.ABSENT);

    /**
     * Whether the job is still waiting, delayed or running: it exists and has not ended (dead,
     * cancelled, or completed; cancelled and completed jobs may be kept in the history).
     */
    boolean pending() {
      return record != null
          && record.state != JobRecord.State.DEAD
          && record.state != JobRecord.State.CANCELLED
          && record.state != JobRecord.State.COMPLETED;
    }
  }

  /**
   * What {@link #define} planned.
   *
   * @param outcome what it does
   * @param operation what to commit; empty for {@link Schedules.Defined#UNCHANGED}
   * @param after the record after the commit
   */
  record Definition(
      Schedules.Defined outcome, Optional<AtomicOperation> operation, ScheduleRecord after) {}

  /**
   * A planned firing, or trigger.
   *
   * @param operation what to commit
   * @param after the schedule's record after the commit
   * @param pushed the jobs it pushes, in slot order (none when every due slot was skipped)
   * @param due how many due slots it found, up to the policy's limit (at least 1 for a firing)
   */
  record Fired(AtomicOperation operation, ScheduleRecord after, List<JobRecord> pushed, int due) {}

  // ---- define, pause, resume, delete

  /**
   * Defines {@code wanted} over what is stored: nothing to write if the stored definition is the
   * same (byte for byte); else a new record due at its first slot after {@code now}, or a
   * replacement, checked on the old record's versionstamp, that keeps its paused flag and its last
   * run. An unreadable old record is replaced as a new one would be.
   *
   * @param wanted the definition (its running state is not read)
   * @param old the stored record, or null if there is none
   * @throws IllegalArgumentException if the spec has no slot after {@code now} before the year
   *     10000 (nothing is written)
   */
  static Definition define(QueueKeys k, ScheduleRecord wanted, Stored old, long now) {
    if (old != null && old.record() != null && old.record().sameDefinition(wanted)) {
      return new Definition(Schedules.Defined.UNCHANGED, Optional.empty(), old.record());
    }
    long next = nextSlot(wanted.spec, now);
    if (next < 0) {
      throw new IllegalArgumentException(
          "schedule "
              + wanted.name
              + ": its spec ("
              + wanted.spec
              + ") has no slot after "
              + Instant.ofEpochMilli(now)
              + " before the year 10000");
    }
    Key key = k.schedule(wanted.name);
    AtomicOperation.Builder op = AtomicOperation.builder();
    ScheduleRecord after;
    Schedules.Defined outcome;
    ScheduleRecord before = old == null ? null : old.record();
    if (old == null) {
      op.checkAbsent(key);
      after = wanted.with(false, next, -1, null);
      outcome = Schedules.Defined.CREATED;
    } else {
      op.check(key, old.versionstamp());
      boolean paused = before != null && before.paused;
      after =
          before == null
              ? wanted.with(false, next, -1, null)
              : wanted.with(paused, paused ? -1 : next, before.lastSlot, before.lastJobId);
      outcome = Schedules.Defined.REPLACED;
    }
    op.set(key, after.encode());
    moveDue(op, k, before, after);
    return new Definition(outcome, Optional.of(op.build()), after);
  }

  /** Pauses a running schedule: its due entry goes; empty if it is paused already. */
  static Optional<AtomicOperation> pause(QueueKeys k, Stored s) {
    ScheduleRecord r = s.record();
    if (r.paused) {
      return Optional.empty();
    }
    return Optional.of(rewrite(k, s, r.with(true, -1, r.lastSlot, r.lastJobId)));
  }

  /**
   * Resumes a paused schedule at its first slot after {@code now} (the slots while it was paused
   * are skipped, not missed); empty if it is not paused. A spec with no slot left resumes with no
   * due time.
   */
  static Optional<AtomicOperation> resume(QueueKeys k, Stored s, long now) {
    ScheduleRecord r = s.record();
    if (!r.paused) {
      return Optional.empty();
    }
    return Optional.of(
        rewrite(k, s, r.with(false, nextSlot(r.spec, now), r.lastSlot, r.lastJobId)));
  }

  /**
   * Deletes a schedule: its record and its due entry, checked on the record's versionstamp. The
   * jobs it pushed stay. An unreadable record's due entry, if any, is left to {@link #repair}.
   */
  static AtomicOperation delete(QueueKeys k, String name, Stored s) {
    Key key = k.schedule(name);
    AtomicOperation.Builder op = AtomicOperation.builder().check(key, s.versionstamp()).delete(key);
    ScheduleRecord r = s.record();
    if (r != null && hasDue(r)) {
      op.delete(k.due(r.nextDue, r.name));
    }
    return op.build();
  }

  /**
   * Removes a due entry that does not match its record (there is none, it is paused, or it is due
   * at another time), checked on the record's versionstamp; empty if the entry is the record's.
   *
   * @param record the record as read, or null if absent
   */
  static Optional<AtomicOperation> repair(
      QueueKeys k, Key dueKey, String name, ScheduleRecord record, long versionstamp) {
    if (record != null && hasDue(record) && k.due(record.nextDue, name).equals(dueKey)) {
      return Optional.empty();
    }
    return Optional.of(
        AtomicOperation.builder().check(k.schedule(name), versionstamp).delete(dueKey).build());
  }

  /**
   * An unreadable schedule record's due entry is moved aside, to {@link QueueKeys#corruptSchedule},
   * so that it does not stop the worker; the record is kept for inspection (a define replaces it, a
   * delete removes it).
   */
  static AtomicOperation quarantine(QueueKeys k, Key dueKey, String name, long versionstamp) {
    return AtomicOperation.builder()
        .check(k.schedule(name), versionstamp)
        .delete(dueKey)
        .set(k.corruptSchedule(name), QueueKeys.EMPTY)
        .build();
  }

  // ---- fire and trigger

  /**
   * Fires a due schedule: one operation that checks the schedule's versionstamp (and, for {@link
   * Overlap#SKIP}, the previous job's), advances the schedule to its first slot after {@code now},
   * moves its due entry, and pushes the jobs of its due slots, ready now, as its {@link MissedRuns}
   * policy says:
   *
   * <ul>
   *   <li>the due slots are the record's next due slot and every later slot up to {@code now}; the
   *       latest of them is on time if it is at most {@link Schedule#lateness()} before {@code
   *       now}; every other due slot is missed;
   *   <li>{@code RUN_ONCE}: one job, for the latest due slot; {@code SKIP}: one job for the latest
   *       due slot if it is on time, else none; {@code RUN_EACH(n)}: one job per due slot, the
   *       latest n;
   *   <li>{@link Overlap#SKIP}: no job while the previous job is pending ({@link
   *       Previous#pending()}).
   * </ul>
   *
   * The work is bounded whatever the gap: the due slots are found by looking back from {@code now}
   * in widening windows, never by walking every slot since the last firing.
   *
   * @param previous the job the schedule pushed last ({@link Previous#NONE} if it names none); read
   *     only for {@link Overlap#SKIP}
   * @param ids fresh job ids, one per job pushed
   * @return the plan, or empty if the schedule is not due at {@code now} (paused, no slot left, or
   *     its next slot is later)
   */
  static Optional<Fired> fire(
      QueueKeys k, Stored s, Previous previous, long now, Supplier<String> ids) {
    ScheduleRecord r = s.record();
    if (!hasDue(r) || r.nextDue > now) {
      return Optional.empty();
    }
    Instant at = Instant.ofEpochMilli(now);
    int want = r.missed.kind() == MissedRuns.Kind.RUN_EACH ? r.missed.limit() : 1;
    List<Instant> due = latestDue(r.spec, Instant.ofEpochMilli(r.nextDue), at, want);
    Instant latest = due.get(due.size() - 1);
    boolean onTime = Duration.between(latest, at).compareTo(r.lateness) <= 0;
    List<Instant> run =
        switch (r.missed.kind()) {
          case RUN_ONCE -> List.of(latest);
          case SKIP -> onTime ? List.of(latest) : List.of();
          case RUN_EACH -> due;
        };
    AtomicOperation.Builder op =
        AtomicOperation.builder().check(k.schedule(r.name), s.versionstamp());
    if (r.overlap == Overlap.SKIP && r.lastJobId != null) {
      op.check(k.job(r.lastJobId), previous.versionstamp());
      if (previous.pending()) {
        run = List.of();
      }
    }
    List<JobRecord> pushed = new ArrayList<>(run.size());
    for (Instant slot : run) {
      pushed.add(pushSlot(op, k, Event.FIRE, r, ids.get(), slot.toEpochMilli(), now));
    }
    JobRecord last = pushed.isEmpty() ? null : pushed.get(pushed.size() - 1);
    ScheduleRecord after =
        r.with(
            false,
            nextSlot(r.spec, now),
            last == null ? r.lastSlot : last.slot,
            last == null ? r.lastJobId : last.id);
    op.set(k.schedule(r.name), after.encode());
    moveDue(op, k, r, after);
    return Optional.of(new Fired(op.build(), after, pushed, due.size()));
  }

  /**
   * Pushes the schedule's job now, with {@code now} as its slot, whatever its due time and whether
   * it is paused; the schedule's slots do not move, its last run becomes this one. No overlap
   * check: a trigger is a deliberate run.
   */
  static Fired trigger(QueueKeys k, Stored s, long now, String id) {
    ScheduleRecord r = s.record();
    AtomicOperation.Builder op =
        AtomicOperation.builder().check(k.schedule(r.name), s.versionstamp());
    JobRecord job = pushSlot(op, k, Event.TRIGGER, r, id, now, now);
    ScheduleRecord after = r.with(r.paused, r.nextDue, now, id);
    op.set(k.schedule(r.name), after.encode());
    return new Fired(op.build(), after, List.of(job), 0);
  }

  private static JobRecord pushSlot(
      AtomicOperation.Builder op,
      QueueKeys k,
      Event event,
      ScheduleRecord r,
      String id,
      long slot,
      long now) {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id = id;
    d.priority = r.options.priority();
    d.delayUntil = now;
    d.state = JobRecord.State.READY;
    d.retriesLeft = r.options.retryCount();
    d.retryLimit = r.options.retryCount();
    d.backoff = r.options.retryBackoff();
    d.payload = r.state;
    d.schedule = r.name;
    d.slot = slot;
    JobRecord job = d.build();
    TransitionTable.check(event, Node.ABSENT, Node.of(job));
    Key key = k.job(id);
    op.checkAbsent(key).set(key, job.encode()).set(k.indexOf(job), QueueKeys.EMPTY);
    return job;
  }

  // ---- slot arithmetic

  /**
   * The first slot of {@code spec} after {@code now}, in epoch ms, or -1 if there is none before
   * {@link JobOptions#MAX_DELAY_UNTIL} (the end of the times a queue keeps).
   */
  static long nextSlot(ScheduleSpec spec, long now) {
    Optional<Instant> next = spec.nextAfter(Instant.ofEpochMilli(now));
    return next.isEmpty() || next.get().isAfter(JobOptions.MAX_DELAY_UNTIL)
        ? -1
        : next.get().toEpochMilli();
  }

  /**
   * The latest {@code n} slots of {@code spec} in {@code [first, upTo]}, in order, given that
   * {@code first} is a slot at or before {@code upTo}; never empty.
   */
  static List<Instant> latestDue(ScheduleSpec spec, Instant first, Instant upTo, int n) {
    List<Instant> later = latestIn(spec, first, upTo, n);
    if (later.size() >= n) {
      return later;
    }
    List<Instant> all = new ArrayList<>(later.size() + 1);
    all.add(first);
    all.addAll(later);
    return List.copyOf(all);
  }

  /** The latest {@code n} slots in {@code (after, upTo]}, in order: bounded work. */
  static List<Instant> latestIn(ScheduleSpec spec, Instant after, Instant upTo, int n) {
    if (!upTo.isAfter(after)) {
      return List.of();
    }
    if (spec instanceof ScheduleSpec.FixedRate f) {
      return latestFixed(f, after, upTo, n);
    }
    List<Instant> all = spec.slotsBetween(after, upTo, SLOT_SCAN);
    if (all.size() < SLOT_SCAN) {
      return tail(all, n);
    }
    // More slots than one scan: look back from upTo in windows that double. A window that
    // holds fewer than n slots is known whole; the first that holds n or more gives the answer,
    // or, when it is too dense to list, its older half gives the rest.
    Duration span = Duration.between(after, upTo);
    List<Instant> known = List.of();
    Instant knownFrom = upTo;
    for (Duration d = Duration.ofSeconds(1); ; d = d.multipliedBy(2)) {
      Instant from = d.compareTo(span) >= 0 ? after : upTo.minus(d);
      List<Instant> window = spec.slotsBetween(from, upTo, SLOT_SCAN);
      if (window.size() < SLOT_SCAN && (window.size() >= n || from.equals(after))) {
        return tail(window, n);
      }
      if (window.size() >= SLOT_SCAN) {
        List<Instant> older = latestIn(spec, from, knownFrom, n - known.size());
        List<Instant> out = new ArrayList<>(older);
        out.addAll(known);
        return List.copyOf(out);
      }
      known = window;
      knownFrom = from;
    }
  }

  private static List<Instant> latestFixed(
      ScheduleSpec.FixedRate f, Instant after, Instant upTo, int n) {
    if (upTo.isBefore(f.anchor())) {
      return List.of();
    }
    long k = Duration.between(f.anchor(), upTo).dividedBy(f.every()); // the last slot <= upTo
    List<Instant> out = new ArrayList<>(Math.min(n, 16));
    for (long i = Math.max(0, k - n + 1); i <= k; i++) {
      Instant slot = f.anchor().plus(f.every().multipliedBy(i));
      if (slot.isAfter(after)) {
        out.add(slot);
      }
    }
    return List.copyOf(out);
  }

  private static List<Instant> tail(List<Instant> slots, int n) {
    return slots.size() <= n ? slots : List.copyOf(slots.subList(slots.size() - n, slots.size()));
  }

  // ---- helpers

  private static boolean hasDue(ScheduleRecord r) {
    return !r.paused && r.nextDue >= 0;
  }

  private static AtomicOperation rewrite(QueueKeys k, Stored s, ScheduleRecord after) {
    ScheduleRecord before = s.record();
    Key key = k.schedule(before.name);
    AtomicOperation.Builder op =
        AtomicOperation.builder().check(key, s.versionstamp()).set(key, after.encode());
    moveDue(op, k, before, after);
    return op.build();
  }

  /** Deletes the due entry of {@code before} (if any) and sets that of {@code after} (if any). */
  private static void moveDue(
      AtomicOperation.Builder op, QueueKeys k, ScheduleRecord before, ScheduleRecord after) {
    Key old = before != null && hasDue(before) ? k.due(before.nextDue, before.name) : null;
    Key now = hasDue(after) ? k.due(after.nextDue, after.name) : null;
    if (old != null && !old.equals(now)) {
      op.delete(old);
    }
    if (now != null && !now.equals(old)) {
      op.set(now, QueueKeys.EMPTY);
    }
  }
}
