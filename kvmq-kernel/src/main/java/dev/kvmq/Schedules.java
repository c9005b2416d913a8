package dev.kvmq;

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

  private final Queue<S> queue;

  Schedules(Queue<S> queue) {
    this.queue = Objects.requireNonNull(queue, "queue");
  }

  /**
   * Defines a schedule, idempotently by name: the same definition again (every node at startup,
   * every redeploy) changes nothing; a changed one replaces the old atomically and recomputes its
   * next due time from now. A paused schedule stays paused.
   *
   * @param schedule the definition
   * @return what was done
   * @throws IllegalArgumentException if the state is too large ({@link Queue#MAX_STATE_BYTES}), or
   *     the spec has no slot after now
   * @throws NullPointerException if {@code schedule} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Defined define(Schedule<S> schedule) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Reads one schedule.
   *
   * @param name the schedule's name
   * @return the schedule, or empty if there is none of that name
   * @throws NullPointerException if {@code name} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Optional<ScheduleEntry<S>> get(String name) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Lists the queue's schedules, by name.
   *
   * @return the schedules, an unmodifiable list
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public List<ScheduleEntry<S>> list() {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Pauses a schedule: it fires no slot until resumed; the slots in between are skipped, not
   * missed.
   *
   * @param name the schedule's name
   * @return true if it was running and is now paused; false if it was paused already or there is
   *     none of that name
   * @throws NullPointerException if {@code name} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean pause(String name) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Resumes a paused schedule at its first slot after now.
   *
   * @param name the schedule's name
   * @return true if it was paused and now runs; false if it was running or there is none of that
   *     name
   * @throws NullPointerException if {@code name} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean resume(String name) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Pushes the schedule's job now, with now as its slot, whatever its next due time; the schedule's
   * own slots do not move. The overlap policy does not apply: a trigger is a deliberate run.
   *
   * @param name the schedule's name
   * @return the job pushed, or empty if there is no schedule of that name
   * @throws NullPointerException if {@code name} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public Optional<Job<S>> trigger(String name) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }

  /**
   * Deletes a schedule. Jobs it pushed stay.
   *
   * @param name the schedule's name
   * @return true if there was one of that name
   * @throws NullPointerException if {@code name} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  public boolean delete(String name) {
    throw new UnsupportedOperationException("schedules are not built yet");
  }
}
