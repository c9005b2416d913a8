package dev.kvmq;

import java.util.Objects;
import java.util.Optional;

/**
 * What {@link Queue#offer} did: made a new job, found the job that holds the pushed {@link
 * UniqueKey unique key} (a duplicate), or gave that waiting job the pushed state and due time
 * (debounce). Immutable.
 *
 * @param <S> the state type
 */
public final class PushResult<S> {

  /** What a push did. */
  public enum Outcome {
    /** A new job was stored: the push had no unique key, or its key was free. */
    CREATED,
    /** The key was taken: no job was stored or changed; {@link #job()} is the job holding it. */
    DUPLICATE,
    /**
     * The key was taken by a waiting job and the key is in debounce mode: that job now has the
     * pushed state and due time; {@link #job()} is it, as changed.
     */
    DEBOUNCED
  }

  private final Outcome outcome;
  private final String id;
  private final Optional<Job<S>> job;

  private PushResult(Outcome outcome, String id, Optional<Job<S>> job) {
    this.outcome = outcome;
    this.id = id;
    this.job = job;
  }

  static <S> PushResult<S> created(Job<S> job) {
    return new PushResult<>(Outcome.CREATED, job.id(), Optional.of(job));
  }

  static <S> PushResult<S> debounced(Job<S> job) {
    return new PushResult<>(Outcome.DEBOUNCED, job.id(), Optional.of(job));
  }

  static <S> PushResult<S> duplicate(String id, Optional<Job<S>> job) {
    return new PushResult<>(Outcome.DUPLICATE, Objects.requireNonNull(id, "id"), job);
  }

  /**
   * Returns what the push did.
   *
   * @return the outcome
   */
  public Outcome outcome() {
    return outcome;
  }

  /**
   * Tells whether the push stored a new job.
   *
   * @return true for {@link Outcome#CREATED}
   */
  public boolean created() {
    return outcome == Outcome.CREATED;
  }

  /**
   * Tells whether the push found its key taken (a duplicate, debounced or not): no new job.
   *
   * @return true for {@link Outcome#DUPLICATE} and {@link Outcome#DEBOUNCED}
   */
  public boolean duplicate() {
    return outcome != Outcome.CREATED;
  }

  /**
   * Returns the id of the job: the new one, or the one that holds (or, for a throttle key, last
   * took) the key.
   *
   * @return the job's id
   */
  public String id() {
    return id;
  }

  /**
   * Returns the job as stored after the push: the new job, or the job holding the key (for a {@link
   * UniqueKey.Scope#PERIOD throttle} key, possibly a finished job that the queue still keeps:
   * completed or cancelled and kept by the retention, or dead). Empty only for a duplicate of a
   * throttle key whose job is gone (deleted or pruned) within its period.
   *
   * @return the job, or empty
   */
  public Optional<Job<S>> job() {
    return job;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PushResult<?> r
        && outcome == r.outcome
        && id.equals(r.id)
        && job.equals(r.job);
  }

  @Override
  public int hashCode() {
    return Objects.hash(outcome, id, job);
  }

  @Override
  public String toString() {
    return "PushResult[" + outcome + " " + id + "]";
  }
}
