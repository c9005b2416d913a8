package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * Changes a running handler makes to its job's options (with {@link JobContext#update(Object,
 * JobChange)}), the rest of the seed's {@code updateJob}. They take effect when the job completes
 * (repeats) or fails (retries).
 *
 * <p>Start from {@link #none()}; immutable.
 */
public final class JobChange {

  private static final JobChange NONE = new JobChange(null, null, null, null);

  private final Long repeatCount;
  private final Duration repeatDelay;
  private final Integer retriesLeft;
  private final Backoff backoff;

  private JobChange(Long repeatCount, Duration repeatDelay, Integer retriesLeft, Backoff backoff) {
    this.repeatCount = repeatCount;
    this.repeatDelay = repeatDelay;
    this.retriesLeft = retriesLeft;
    this.backoff = backoff;
  }

  /**
   * No change.
   *
   * @return the empty change
   */
  public static JobChange none() {
    return NONE;
  }

  /**
   * Also sets how many more times the job repeats after it completes.
   *
   * @param count zero or more, or {@link JobOptions#REPEAT_FOREVER}
   * @param delay the wait before each repeat
   * @return the new change
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code count < -1}, or {@code delay} is negative or over
   *     {@link JobOptions#MAX_DELAY}
   */
  public JobChange repeat(long count, Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (count < JobOptions.REPEAT_FOREVER) {
      throw new IllegalArgumentException("repeat count must be >= 0, or REPEAT_FOREVER: " + count);
    }
    if (delay.isNegative()) {
      throw new IllegalArgumentException("repeat delay must not be negative: " + delay);
    }
    if (delay.compareTo(JobOptions.MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "repeat delay must be at most " + JobOptions.MAX_DELAY + " (about 100 years): " + delay);
    }
    return new JobChange(count, delay, retriesLeft, backoff);
  }

  /**
   * Also sets how many retries are left and how they back off.
   *
   * @param retriesLeft zero or more
   * @param backoff the wait before each retry
   * @return the new change
   * @throws NullPointerException if {@code backoff} is null
   * @throws IllegalArgumentException if {@code retriesLeft < 0}
   */
  public JobChange retries(int retriesLeft, Backoff backoff) {
    Objects.requireNonNull(backoff, "backoff");
    if (retriesLeft < 0) {
      throw new IllegalArgumentException("retries left must not be negative: " + retriesLeft);
    }
    return new JobChange(repeatCount, repeatDelay, retriesLeft, backoff);
  }

  void applyTo(JobRecord.Draft d) {
    if (repeatCount != null) {
      d.repeatCount = repeatCount;
      d.repeatDelay = repeatDelay.toMillis();
    }
    if (retriesLeft != null) {
      d.retriesLeft = retriesLeft;
      d.retryLimit = Math.max(d.retryLimit, retriesLeft);
      d.backoff = backoff;
    }
  }
}
