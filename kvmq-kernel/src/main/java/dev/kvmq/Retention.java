package dev.kvmq;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * How long a queue keeps the jobs that ended: completed, dead and cancelled (docs/semantics.md,
 * "History"). Each status has its own {@link Keep}: a longest age and/or a largest count; a record
 * past either limit is pruned by the queue's workers, oldest first, in bounded batches.
 *
 * <p>The {@link #defaults() defaults}: completed jobs for 1 day and 10,000 at most, cancelled jobs
 * for 7 days and 10,000 at most, dead letters until replayed or deleted (a dead letter is work not
 * done: kvmq never drops it unless told to). {@link #none()} keeps no completed or cancelled job,
 * as kvmq did before it kept history: a completion deletes its job in the same commit; a cancel
 * marks the job cancelled (so that a handler still running it is refused), and the queue's workers
 * remove it in their next pruning.
 *
 * @param completed how completed jobs are kept
 * @param dead how dead letters are kept
 * @param cancelled how cancelled jobs are kept
 */
public record Retention(Keep completed, Keep dead, Keep cancelled) {

  private static final Retention DEFAULTS =
      new Retention(
          Keep.atMost(Duration.ofDays(1), 10_000),
          Keep.unlimited(),
          Keep.atMost(Duration.ofDays(7), 10_000));

  private static final Retention NONE = new Retention(Keep.none(), Keep.unlimited(), Keep.none());

  /**
   * Checks the components.
   *
   * @param completed the {@code completed} component
   * @param dead the {@code dead} component
   * @param cancelled the {@code cancelled} component
   * @throws NullPointerException if a component is null
   */
  public Retention {
    Objects.requireNonNull(completed, "completed");
    Objects.requireNonNull(dead, "dead");
    Objects.requireNonNull(cancelled, "cancelled");
  }

  /**
   * The default retention: completed jobs 1 day and 10,000 at most, cancelled jobs 7 days and
   * 10,000 at most, dead letters until replayed or deleted.
   *
   * @return the defaults
   */
  public static Retention defaults() {
    return DEFAULTS;
  }

  /**
   * Keeps no completed and no cancelled job, and dead letters until replayed or deleted. A
   * completed job is gone when it completes; a cancelled one when a worker of the queue next prunes
   * (until then {@link Queue#job} shows it {@code CANCELLED}).
   *
   * @return the retention that keeps no history
   */
  public static Retention none() {
    return NONE;
  }

  /**
   * Returns a copy with {@code keep} for completed jobs.
   *
   * @param keep how completed jobs are kept
   * @return the new retention
   * @throws NullPointerException if {@code keep} is null
   */
  public Retention completed(Keep keep) {
    return new Retention(keep, dead, cancelled);
  }

  /**
   * Returns a copy with {@code keep} for dead letters. {@link Keep#none()} removes a job in the
   * commit that would make it a dead letter.
   *
   * @param keep how dead letters are kept
   * @return the new retention
   * @throws NullPointerException if {@code keep} is null
   */
  public Retention dead(Keep keep) {
    return new Retention(completed, keep, cancelled);
  }

  /**
   * Returns a copy with {@code keep} for cancelled jobs.
   *
   * @param keep how cancelled jobs are kept
   * @return the new retention
   * @throws NullPointerException if {@code keep} is null
   */
  public Retention cancelled(Keep keep) {
    return new Retention(completed, dead, keep);
  }

  /**
   * How the jobs of one status are kept: for at most {@code maxAge} after they ended, and at most
   * the newest {@code maxCount} of them. An empty limit is no limit. A record is pruned once it is
   * past either limit.
   *
   * @param maxAge the longest a record is kept after its job ended, or empty for no age limit
   * @param maxCount the most records kept, or empty for no count limit
   */
  public record Keep(Optional<Duration> maxAge, OptionalLong maxCount) {

    private static final Keep NONE = new Keep(Optional.of(Duration.ZERO), OptionalLong.of(0));
    private static final Keep UNLIMITED = new Keep(Optional.empty(), OptionalLong.empty());

    /**
     * Checks the components.
     *
     * @param maxAge the {@code maxAge} component
     * @param maxCount the {@code maxCount} component
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if {@code maxAge} is negative, not whole milliseconds or
     *     over {@link JobOptions#MAX_DELAY}, or {@code maxCount} is negative
     */
    public Keep {
      Objects.requireNonNull(maxAge, "maxAge");
      Objects.requireNonNull(maxCount, "maxCount");
      maxAge.ifPresent(
          age -> {
            if (age.compareTo(JobOptions.MAX_DELAY) > 0) {
              throw new IllegalArgumentException(
                  "a retention's age must be at most "
                      + JobOptions.MAX_DELAY
                      + " (for no age limit: Keep.unlimited() or Keep.newest(n)): "
                      + age);
            }
            if (age.isNegative() || !age.equals(Duration.ofMillis(age.toMillis()))) {
              throw new IllegalArgumentException(
                  "a retention's age must be whole milliseconds, 0 or more: " + age);
            }
          });
      if (maxCount.isPresent() && maxCount.getAsLong() < 0) {
        throw new IllegalArgumentException(
            "a retention's count must be 0 or more: " + maxCount.getAsLong());
      }
    }

    /**
     * Keeps none: a completed job or dead letter is removed by the commit that ends it; a cancelled
     * job by the queue's workers' next pruning.
     *
     * @return keep none
     */
    public static Keep none() {
      return NONE;
    }

    /**
     * Keeps every record until it is deleted.
     *
     * @return keep all
     */
    public static Keep unlimited() {
      return UNLIMITED;
    }

    /**
     * Keeps records for {@code maxAge} after their jobs ended, however many.
     *
     * @param maxAge the longest a record is kept
     * @return the keep
     * @throws NullPointerException if {@code maxAge} is null
     * @throws IllegalArgumentException if {@code maxAge} is negative, not whole milliseconds or
     *     over {@link JobOptions#MAX_DELAY}
     */
    public static Keep youngerThan(Duration maxAge) {
      return new Keep(Optional.of(Objects.requireNonNull(maxAge, "maxAge")), OptionalLong.empty());
    }

    /**
     * Keeps the newest {@code maxCount} records, however old.
     *
     * @param maxCount the most records kept
     * @return the keep
     * @throws IllegalArgumentException if {@code maxCount} is negative
     */
    public static Keep newest(long maxCount) {
      return new Keep(Optional.empty(), OptionalLong.of(maxCount));
    }

    /**
     * Keeps records for {@code maxAge} and the newest {@code maxCount} at most.
     *
     * @param maxAge the longest a record is kept
     * @param maxCount the most records kept
     * @return the keep
     * @throws NullPointerException if {@code maxAge} is null
     * @throws IllegalArgumentException if {@code maxAge} is negative, not whole milliseconds or
     *     over {@link JobOptions#MAX_DELAY}, or {@code maxCount} is negative
     */
    public static Keep atMost(Duration maxAge, long maxCount) {
      return new Keep(
          Optional.of(Objects.requireNonNull(maxAge, "maxAge")), OptionalLong.of(maxCount));
    }

    /**
     * Tells whether this keeps any record at all: false for a zero age or a zero count.
     *
     * @return true if a record is kept when its job ends
     */
    public boolean keepsAny() {
      return !maxAge.equals(Optional.of(Duration.ZERO))
          && !(maxCount.isPresent() && maxCount.getAsLong() == 0);
    }

    /**
     * Tells whether this keeps every record for ever (no limit at all), so nothing is pruned.
     *
     * @return true if both limits are empty
     */
    public boolean isUnlimited() {
      return maxAge.isEmpty() && maxCount.isEmpty();
    }
  }
}
