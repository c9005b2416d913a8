package dev.kvmq;

import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvStore;
import java.nio.charset.StandardCharsets;

/**
 * The key layout of one queue (design.md, "Key layout: claims must not scan").
 *
 * <pre>
 * ["kvmq", queue, "job", id]                       job record (source of truth)
 * ["kvmq", queue, "ready", rank(priority), id]     due, unleased: a claim takes the first
 * ["kvmq", queue, "delayed", delayUntil, id]       promote moves due ones to ready
 * ["kvmq", queue, "leased", leaseUntil, id]        reclaim returns expired ones to ready
 * ["kvmq", queue, "dead", failedAt, id]            failed for good, kept for inspection
 * ["kvmq", queue, "corrupt", id]                  a record that can't be read, moved aside
 * ["kvmq", queue, "paused"]                        present while the queue is paused
 * ["kvmq", queue, "schedule", name]                schedule record (source of truth)
 * ["kvmq", queue, "due", nextDue, name]            a schedule's next slot, while not paused
 * ["kvmq", queue, "corrupt-schedule", name]        a schedule record that can't be read
 * ["kvmq", queue, "held", heldAt, id]              written in an open transaction, not released
 * ["kvmq", queue, "group", "record", group]         a group's admitted and parked counts
 * ["kvmq", queue, "group", "parked", group, rank(priority), id]  ready, no free slot in its group
 * ["kvmq", queue, "group", "paused", utf8(group)]  the group's starts paused until (a handler's pause)
 * ["kvmq", queue, "group", "waking", until, group] the group admits no job before until (blocked)
 * ["kvmq", queue, "rate", "slot", i]               a start slot of the rate limit: when taken
 * ["kvmq", queue, "rate", "taken", takenAt, i]     the same slots, oldest taken first
 * ["kvmq", queue, "rate", "paused"]                starts paused until (a handler's pause)
 * ["kvmq", queue, "rate", "group", group, "slot", i]            a start slot of a group's rate limit
 * ["kvmq", queue, "rate", "group", group, "taken", takenAt, i]  its slots, oldest taken first
 * ["kvmq", queue, "unique", key]                   a unique key taken: its holder's id (and until)
 * ["kvmq", queue, "completed", completedAt, id]    completed, kept for the retention
 * ["kvmq", queue, "cancelled", cancelledAt, id]    cancelled, kept for the retention
 * </pre>
 *
 * Index values are empty; every index key is written in the same atomic operation as the record it
 * points to, so an index entry and its record never disagree.
 */
final class QueueKeys {

  static final byte[] EMPTY = new byte[0];

  /** The first part of every key of every queue. */
  static final String ROOT = "kvmq";

  final String queue;
  final Key root;
  private final Key job;
  private final Key ready;
  private final Key delayed;
  private final Key leased;
  private final Key dead;
  private final Key completed;
  final Key paused;
  private final Key startsPaused;

  QueueKeys(String queue) {
    this.queue = queue;
    this.root = Key.of(ROOT, queue);
    this.job = root.append("job");
    this.ready = root.append("ready");
    this.delayed = root.append("delayed");
    this.leased = root.append("leased");
    this.dead = root.append("dead");
    this.completed = root.append("completed");
    this.paused = root.append("paused");
    this.startsPaused = root.append("rate", "paused");
  }

  /** The prefix of the ready index: a change there can give a worker a job to claim. */
  Key readyIndex() {
    return ready;
  }

  /** The prefix of the leased index. */
  Key leasedIndex() {
    return leased;
  }

  /** The prefix of the delayed index: a change there can make a job due earlier. */
  Key delayedIndex() {
    return delayed;
  }

  Key corrupt(String id) {
    return root.append("corrupt", id);
  }

  Key job(String id) {
    return job.append(id);
  }

  /**
   * How a ready index key becomes its job's key in bytes: the ready prefix and the rank (a long:
   * every long encodes to the same length) give way to the job prefix; the id's encoding stays.
   */
  KvStore.ClaimPlanner.RecordKeyRule readyToJob() {
    return new KvStore.ClaimPlanner.RecordKeyRule(job, ready.append(0L).encoded().length);
  }

  KeyRange jobs() {
    return KeyRange.prefix(job);
  }

  KeyRange ready() {
    return KeyRange.prefix(ready);
  }

  KeyRange delayed() {
    return KeyRange.prefix(delayed);
  }

  KeyRange leased() {
    return KeyRange.prefix(leased);
  }

  KeyRange dead() {
    return KeyRange.prefix(dead);
  }

  /** Delayed jobs due at {@code now}: delayUntil <= now. */
  KeyRange delayedDue(long now) {
    return KeyRange.prefix(delayed).until(delayed.append(now + 1));
  }

  /** Leased jobs whose lease has expired at {@code now}: leaseUntil <= now. */
  KeyRange leasedExpired(long now) {
    return KeyRange.prefix(leased).until(leased.append(now + 1));
  }

  // ---- schedules

  /** A schedule's record. */
  Key schedule(String name) {
    return root.append("schedule", name);
  }

  /** Every schedule record, by name. */
  KeyRange schedules() {
    return KeyRange.prefix(root.append("schedule"));
  }

  /** The prefix of the schedules' due index: a change there can make a slot due earlier. */
  Key dueIndex() {
    return root.append("due");
  }

  /** The due index entry of a schedule whose next slot is {@code nextDue} (epoch ms). */
  Key due(long nextDue, String name) {
    return root.append("due", nextDue, name);
  }

  /** Schedules due at {@code now}: nextDue <= now. */
  KeyRange schedulesDue(long now) {
    Key due = dueIndex();
    return KeyRange.prefix(due).until(due.append(now + 1));
  }

  /** Every due index entry, earliest first. */
  KeyRange dueEntries() {
    return KeyRange.prefix(dueIndex());
  }

  /** Where an unreadable schedule record's due entry is moved aside to. */
  Key corruptSchedule(String name) {
    return root.append("corrupt-schedule", name);
  }

  // ---- held jobs

  /**
   * The held index entry of job {@code id}, held at {@code heldAt} (epoch ms): its creation time,
   * the time of its ULID, since a job is held when it is pushed.
   */
  Key held(long heldAt, String id) {
    return root.append("held", heldAt, id);
  }

  /** Every held job, oldest first. */
  KeyRange held() {
    return KeyRange.prefix(root.append("held"));
  }

  /** Held jobs held at {@code before} or earlier: heldAt <= before. */
  KeyRange heldUntil(long before) {
    Key held = root.append("held");
    return KeyRange.prefix(held).until(held.append(before + 1));
  }

  // ---- groups and rate limits (docs/flow-control.md)

  /** A group's record: how many of its jobs are admitted and parked. */
  Key group(String group) {
    return root.append("group", "record", group);
  }

  /** A group's parked jobs, in queue order (priority, then push). */
  KeyRange parked(String group) {
    return KeyRange.prefix(root.append("group", "parked", group));
  }

  /** Every parked job of every group. */
  KeyRange allParked() {
    return KeyRange.prefix(root.append("group", "parked"));
  }

  /** Every group's parked jobs (waiting jobs that are not in the ready index). */
  KeyRange parkedAll() {
    return KeyRange.prefix(root.append("group", "parked"));
  }

  /** Every group record. */
  KeyRange groups() {
    return KeyRange.prefix(root.append("group", "record"));
  }

  /**
   * Present while a handler paused the starts of {@code group}: until when (epoch ms, a long).
   *
   * <p>Its last part is the group's name as UTF-8 bytes, not as a string (a group's name is valid
   * text, so the bytes are its name exactly). Every claim of the group's jobs checks this key, and
   * the PostgreSQL store locks a key by its first two parts and its last: as a string, it would
   * share the lock of the group's record ({@link #group}), which an application transaction that
   * pushed a job of the group holds until it ends, and every claim that takes a job of the group
   * would wait for that transaction.
   */
  Key groupPaused(String group) {
    return root.append("group", "paused", group.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The wake-up entry of a group that admits none of its jobs before {@code until} (its record's
   * blocked time): the claimer admits its parked jobs once it is due.
   */
  Key groupWaking(long until, String group) {
    return root.append("group", "waking", until, group);
  }

  /** Groups whose blocked time is {@code now} or earlier: due to admit their parked jobs again. */
  KeyRange groupsWakingDue(long now) {
    Key waking = root.append("group", "waking");
    return KeyRange.prefix(waking).until(waking.append(now + 1));
  }

  /** Every wake-up entry of a blocked group, the earliest first. */
  KeyRange groupsWaking() {
    return KeyRange.prefix(root.append("group", "waking"));
  }

  /** The group an entry of {@link #groupsWaking} names: its last part. */
  static String groupOf(Key wakingKey) {
    return wakingKey.getString(wakingKey.size() - 1);
  }

  /**
   * The keys of one sliding window of start slots: the queue's ({@link #rateWindow()}) or a group's
   * ({@link #rateWindow(String)}).
   *
   * @param prefix the keys of the window, {@code [..., "rate"]} or {@code [..., "rate", "group",
   *     g]}
   */
  record RateWindow(Key prefix) {
    /** Slot {@code i}: the time it was last taken. */
    Key slot(long i) {
      return prefix.append("slot", i);
    }

    /** Every slot, by number. */
    KeyRange slots() {
      return KeyRange.prefix(prefix.append("slot"));
    }

    /** The taken-time entry of slot {@code i}, taken at {@code takenAt}. */
    Key taken(long takenAt, long i) {
      return prefix.append("taken", takenAt, i);
    }

    /** The slots, the one taken longest ago first. */
    KeyRange taken() {
      return KeyRange.prefix(prefix.append("taken"));
    }
  }

  /** The queue's window of start slots. */
  RateWindow rateWindow() {
    return new RateWindow(root.append("rate"));
  }

  /** The window of start slots of {@code group}'s rate limit. */
  RateWindow rateWindow(String group) {
    return new RateWindow(root.append("rate", "group", group));
  }

  /** The rate limit's slot {@code i}: the time it was last taken. */
  Key rateSlot(long i) {
    return root.append("rate", "slot", i);
  }

  /** Every slot of the rate limit, by number. */
  KeyRange rateSlots() {
    return KeyRange.prefix(root.append("rate", "slot"));
  }

  /** The taken-time entry of slot {@code i}, taken at {@code takenAt}. */
  Key rateTaken(long takenAt, long i) {
    return root.append("rate", "taken", takenAt, i);
  }

  /** The slots of the rate limit, the one taken longest ago first. */
  KeyRange rateTaken() {
    return KeyRange.prefix(root.append("rate", "taken"));
  }

  /** Present while a handler paused the queue's starts: until when (epoch ms, a long). */
  Key startsPaused() {
    return startsPaused; // every claim checks it: built once
  }

  // ---- unique keys

  /**
   * The entry of a taken unique key: its value names the job holding it, and for a throttle key
   * until when ({@link UniqueTransitions.Holder}).
   */
  Key unique(String key) {
    return root.append("unique", key);
  }

  /** Every taken unique key, by key. */
  KeyRange uniqueKeys() {
    return KeyRange.prefix(root.append("unique"));
  }

  // ---- cancelled jobs

  /** The cancelled index entry of job {@code id}, cancelled at {@code cancelledAt} (epoch ms). */
  Key cancelled(long cancelledAt, String id) {
    return root.append("cancelled", cancelledAt, id);
  }

  /** The prefix of the cancelled index: a change there may cancel a job a worker is running. */
  Key cancelledIndex() {
    return root.append("cancelled");
  }

  // ---- history (docs/semantics.md, "History")

  /** Every completed job kept, oldest completion first. */
  KeyRange completed() {
    return KeyRange.prefix(completed);
  }

  /** Every cancelled job kept, oldest cancellation first. */
  KeyRange cancelled() {
    return KeyRange.prefix(root.append("cancelled"));
  }

  /** Completed jobs kept that completed at {@code before} or earlier. */
  KeyRange completedUntil(long before) {
    return KeyRange.prefix(completed).until(completed.append(before + 1));
  }

  /** Dead letters that failed at {@code before} or earlier. */
  KeyRange deadUntil(long before) {
    return KeyRange.prefix(dead).until(dead.append(before + 1));
  }

  /** Cancelled jobs kept that were cancelled at {@code before} or earlier. */
  KeyRange cancelledUntil(long before) {
    Key cancelled = root.append("cancelled");
    return KeyRange.prefix(cancelled).until(cancelled.append(before + 1));
  }

  /** The index key that points at {@code r} in its current state. */
  Key indexOf(JobRecord r) {
    return switch (r.state) {
      case READY ->
          r.parked
              ? root.append("group", "parked", r.group, rank(r.priority), r.id)
              : ready.append(rank(r.priority), r.id);
      case DELAYED -> delayed.append(r.delayUntil, r.id);
      case LEASED -> leased.append(r.leaseUntil, r.id);
      case DEAD -> dead.append(r.error == null ? 0L : r.error.failedAt().toEpochMilli(), r.id);
      case HELD -> held(r.createdAt(), r.id);
      case CANCELLED -> cancelled(r.cancelledAt, r.id);
      case COMPLETED -> completed.append(r.finishedAt, r.id);
    };
  }

  /**
   * Whether {@code key} is {@link #job job(id)}, told from its parts without building that key: a
   * key of the same parts has the same bytes.
   */
  boolean isJob(Key key, String id) {
    return key.size() == job.size() + 1
        && key.startsWith(job)
        && id.equals(key.get(key.size() - 1));
  }

  /**
   * Whether {@code key} is {@link #indexOf indexOf(r)}, told from its parts without building that
   * key for a ready job that is not parked (the entry a claim reads); false for a job in any other
   * state, whose index key this does not look at.
   */
  boolean isReadyIndexOf(Key key, JobRecord r) {
    return r.state == JobRecord.State.READY
        && !r.parked
        && key.size() == ready.size() + 2
        && key.startsWith(ready)
        && Long.valueOf(rank(r.priority)).equals(key.get(key.size() - 2))
        && r.id.equals(key.get(key.size() - 1));
  }

  /** The time a delayed or leased index key is ordered by: its job's delayUntil or leaseUntil. */
  static long timeOf(Key indexKey) {
    return indexKey.getLong(indexKey.size() - 2);
  }

  /** The job id an index key points at: its last part. */
  static String idOf(Key indexKey) {
    return indexKey.getString(indexKey.size() - 1);
  }

  /**
   * Maps a priority to a long that orders ascending as the priority descends, so that higher
   * priorities list first. Exact for every finite double.
   */
  static long rank(double priority) {
    long bits = Double.doubleToLongBits(-priority);
    // flip so that signed long order equals double order
    bits ^= (bits >> 63) & Long.MAX_VALUE;
    return bits;
  }
}
