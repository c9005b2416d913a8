package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The recurring schedules of one queue, durable in its store: {@link Queue#schedules()}. Every
 * method is one or a few atomic operations on the store, safe to call from any node at any time; a
 * worker of the queue fires the schedules when they are due, each slot exactly once across every
 * node (docs/scheduling.md).
 *
 * @param <S> the queue's state type
 */
public final class Schedules<S> {

  /** What {@link #define(Schedule)} did. */
  public enum Defined {
    /** There was no schedule of that name: it was created, due at its first slot after now. */
    CREATED,
    /** The same definition was there: nothing was written. */
    UNCHANGED,
    /**
     * Another definition of that name was there: it was replaced, and its next due time recomputed.
     */
    REPLACED
  }

  /** The most schedules {@link #list()} returns. */
  public static final int MAX_LISTED = 10_000;

  private final Queue<S> queue;
  private final QueueKeys keys;
  private final KvStore store;

  Schedules(Queue<S> queue) {
    this.queue = Objects.requireNonNull(queue, "queue");
    this.keys = queue.keys;
    this.store = queue.store;
  }

  /**
   * Defines a schedule, idempotently by name: the same definition again (every node at startup,
   * every redeploy) changes nothing and writes nothing; a changed one replaces the old in one
   * atomic operation checked on the old record's versionstamp, and its next due time is recomputed
   * from now (its first slot after now). A paused schedule stays paused; its last run is kept.
   *
   * <p>Definitions are compared as stored: the spec, the state's encoded bytes, the job options'
   * priority, retries and backoff (their delay is not stored, and a backoff is stored in whole
   * milliseconds), the missed-runs and overlap policies and the lateness. Concurrent defines from
   * many nodes are safe: a define that loses a race reads again and decides again.
   *
   * @param schedule the definition
   * @return what was done
   * @throws IllegalArgumentException if the state is too large ({@link Queue#MAX_STATE_BYTES}), or
   *     the spec has no slot after now (before the year 10000); nothing is written
   * @throws NullPointerException if {@code schedule} is null
   * @throws IllegalStateException if the store is closed, or the schedule kept changing under 20
   *     attempts in a row
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Defined define(Schedule<S> schedule) {
    Objects.requireNonNull(schedule, "schedule");
    byte[] state = queue.codec.encode(schedule.state());
    if (state.length > Queue.MAX_STATE_BYTES) {
      throw new IllegalArgumentException(
          "the state of schedule "
              + schedule.name()
              + " in queue "
              + queue.name()
              + " is "
              + state.length
              + " bytes encoded, over the limit of "
              + Queue.MAX_STATE_BYTES);
    }
    ScheduleRecord wanted = ScheduleRecord.of(schedule, state, false, -1, -1, null);
    if (wanted.encode().length > KvStore.MAX_VALUE_BYTES) {
      throw new IllegalArgumentException(
          "schedule " + schedule.name() + " in queue " + queue.name() + " is too large to store");
    }
    Key key = keys.schedule(schedule.name());
    for (int i = 0; i < QueueCommands.ATOMIC_RETRIES; i++) {
      ScheduleTransitions.Definition plan =
          ScheduleTransitions.define(keys, wanted, stored(store.get(key)), queue.clock.millis());
      if (plan.operation().isEmpty() || store.commit(plan.operation().get()).ok()) {
        return plan.outcome();
      }
    }
    throw contention("define schedule " + schedule.name());
  }

  /**
   * Reads one schedule.
   *
   * @param name the schedule's name
   * @return the schedule, or empty if there is none of that name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalStateException if the store is closed, or the stored schedule can't be read (a
   *     corrupt record, or a state this queue's codec can't decode); the message names it
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Optional<ScheduleEntry<S>> get(String name) {
    Objects.requireNonNull(name, "name");
    if (!validName(name)) {
      return Optional.empty();
    }
    Optional<KvEntry> e = store.get(keys.schedule(name));
    if (e.isEmpty()) {
      return Optional.empty();
    }
    ScheduleTransitions.Stored s = stored(e);
    if (s.record() == null) {
      throw unreadable(name, null);
    }
    try {
      return Optional.of(entry(s.record()));
    } catch (RuntimeException decode) {
      throw unreadable(name, decode);
    }
  }

  /**
   * The names of the queue's stored schedules, in order: at most {@link #MAX_LISTED}, in one
   * bounded read, those whose record or state can't be read included (which {@link #list} leaves
   * out): for finding a schedule whose state an application's new version no longer decodes, and
   * deleting it.
   *
   * @return the names, an unmodifiable list
   * @throws IllegalStateException if the store is closed
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public List<String> names() {
    List<String> out = new ArrayList<>();
    for (KvEntry e : store.list(keys.schedules(), MAX_LISTED, false)) {
      out.add(e.key().getString(e.key().size() - 1));
    }
    return List.copyOf(out);
  }

  /**
   * Lists the queue's schedules, by name: at most {@link #MAX_LISTED}, in one bounded read. A
   * schedule whose record or state can't be read is left out (its name is logged by the worker that
   * meets it; {@link #names} has it).
   *
   * @return the schedules, an unmodifiable list
   * @throws IllegalStateException if the store is closed
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public List<ScheduleEntry<S>> list() {
    List<ScheduleEntry<S>> out = new ArrayList<>();
    for (KvEntry e : store.list(keys.schedules(), MAX_LISTED, false)) {
      ScheduleTransitions.Stored s = stored(Optional.of(e));
      if (s.record() != null) {
        try {
          out.add(entry(s.record()));
        } catch (RuntimeException decode) {
          // the codec can't read this state: left out, as documented
        }
      }
    }
    return List.copyOf(out);
  }

  /**
   * Pauses a schedule: it fires no slot until resumed; the slots in between are skipped, not missed
   * (on resume it goes on at its first slot after that moment). Jobs it pushed already are not
   * touched.
   *
   * @param name the schedule's name
   * @return true if it was running and is now paused; false if it was paused already or there is
   *     none of that name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalStateException if the store is closed, the record can't be read, or it kept
   *     changing under 20 attempts in a row
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean pause(String name) {
    return change(name, "pause", (s, now) -> ScheduleTransitions.pause(keys, s));
  }

  /**
   * Resumes a paused schedule at its first slot after now. Idle workers of the queue wake for it
   * where the store notifies changes.
   *
   * @param name the schedule's name
   * @return true if it was paused and now runs; false if it was running or there is none of that
   *     name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalStateException if the store is closed, the record can't be read, or it kept
   *     changing under 20 attempts in a row
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean resume(String name) {
    return change(name, "resume", (s, now) -> ScheduleTransitions.resume(keys, s, now));
  }

  /**
   * Pushes the schedule's job now, ready, with now as its slot, whatever its next due time and
   * whether it is paused; the schedule's own slots do not move. It becomes the schedule's last run
   * ({@link ScheduleEntry#lastJobId()}), so an {@link Overlap#SKIP} schedule skips its slots while
   * it is pending. The overlap policy does not apply to the trigger itself: it is a deliberate run.
   *
   * @param name the schedule's name
   * @return the job pushed, or empty if there is no schedule of that name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalStateException if the store is closed, the record can't be read, or it kept
   *     changing under 20 attempts in a row
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Optional<Job<S>> trigger(String name) {
    Objects.requireNonNull(name, "name");
    if (!validName(name)) {
      return Optional.empty();
    }
    for (int i = 0; i < QueueCommands.ATOMIC_RETRIES; i++) {
      Optional<KvEntry> e = store.get(keys.schedule(name));
      if (e.isEmpty()) {
        return Optional.empty();
      }
      ScheduleTransitions.Stored s = readable(name, e);
      long now = queue.clock.millis();
      ScheduleTransitions.Fired plan = ScheduleTransitions.trigger(keys, s, now, queue.nextId(now));
      if (store.commit(plan.operation()).ok()) {
        return Optional.of(queue.toJob(plan.pushed().get(0), now));
      }
    }
    throw contention("trigger schedule " + name);
  }

  /**
   * Deletes a schedule: its record and its due entry, in one atomic operation. Jobs it pushed stay.
   * An unreadable record is deleted too.
   *
   * @param name the schedule's name
   * @return true if there was one of that name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalStateException if the store is closed, or it kept changing under 20 attempts in
   *     a row
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean delete(String name) {
    Objects.requireNonNull(name, "name");
    if (!validName(name)) {
      return false;
    }
    for (int i = 0; i < QueueCommands.ATOMIC_RETRIES; i++) {
      Optional<KvEntry> e = store.get(keys.schedule(name));
      if (e.isEmpty()) {
        return false;
      }
      if (store.commit(ScheduleTransitions.delete(keys, name, stored(e))).ok()) {
        return true;
      }
    }
    throw contention("delete schedule " + name);
  }

  // ---- internals

  /** Plans a change of one schedule from what the store holds; empty if there is nothing to do. */
  @FunctionalInterface
  private interface Change {
    Optional<AtomicOperation> plan(ScheduleTransitions.Stored s, long now);
  }

  private boolean change(String name, String what, Change change) {
    Objects.requireNonNull(name, "name");
    if (!validName(name)) {
      return false;
    }
    for (int i = 0; i < QueueCommands.ATOMIC_RETRIES; i++) {
      Optional<KvEntry> e = store.get(keys.schedule(name));
      if (e.isEmpty()) {
        return false;
      }
      Optional<AtomicOperation> op = change.plan(readable(name, e), queue.clock.millis());
      if (op.isEmpty()) {
        return false;
      }
      if (store.commit(op.get()).ok()) {
        return true;
      }
    }
    throw contention(what + " schedule " + name);
  }

  private ScheduleEntry<S> entry(ScheduleRecord r) {
    return new ScheduleEntry<>(
        r.schedule(queue.codec),
        r.paused,
        r.nextDue < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(r.nextDue)),
        r.lastSlot < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(r.lastSlot)),
        Optional.ofNullable(r.lastJobId));
  }

  /** The record as read; null for absent, a null record for unreadable bytes. */
  private static ScheduleTransitions.Stored stored(Optional<KvEntry> e) {
    if (e.isEmpty()) {
      return null;
    }
    ScheduleRecord r;
    try {
      r = ScheduleRecord.decode(e.get().value());
    } catch (ScheduleRecord.Unreadable unreadable) {
      r = null;
    }
    return new ScheduleTransitions.Stored(r, e.get().versionstamp());
  }

  private ScheduleTransitions.Stored readable(String name, Optional<KvEntry> e) {
    ScheduleTransitions.Stored s = stored(e);
    if (s.record() == null) {
      throw unreadable(name, null);
    }
    return s;
  }

  /** Names no schedule can have are simply not there (no store read). */
  private static boolean validName(String name) {
    return !name.isEmpty() && name.length() <= Schedule.MAX_NAME_LENGTH;
  }

  private IllegalStateException unreadable(String name, RuntimeException cause) {
    return new IllegalStateException(
        "schedule "
            + name
            + " of queue "
            + queue.name()
            + " can't be read"
            + (cause == null ? " (a corrupt record)" : " (its state does not decode)")
            + "; define it again to replace it, or delete it",
        cause);
  }

  private IllegalStateException contention(String what) {
    return new IllegalStateException(
        "could not "
            + what
            + " in queue "
            + queue.name()
            + ": it changed under "
            + QueueCommands.ATOMIC_RETRIES
            + " attempts in a row");
  }
}
