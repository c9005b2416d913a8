package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * At most {@code starts} job starts in any {@code period}, across every node of a queue
 * (docs/flow-control.md, "Rate limits"): a sliding window kept in the store and taken in the
 * claim's commit.
 *
 * @param starts how many starts a period allows, 1 to {@link #MAX_STARTS}
 * @param period the window, 1 ms to {@link JobOptions#MAX_DELAY}
 */
public record RateLimit(int starts, Duration period) {

  /** The most starts a rate limit allows per period: 100,000 (one stored slot each). */
  public static final int MAX_STARTS = 100_000;

  /**
   * Checks the components.
   *
   * @param starts how many starts a period allows
   * @param period the window
   * @throws NullPointerException if {@code period} is null
   * @throws IllegalArgumentException if {@code starts} is not in [1, {@link #MAX_STARTS}], or
   *     {@code period} is shorter than 1 ms or longer than {@link JobOptions#MAX_DELAY}
   */
  public RateLimit {
    Objects.requireNonNull(period, "period");
    if (starts < 1 || starts > MAX_STARTS) {
      throw new IllegalArgumentException(
          "a rate limit allows 1 to " + MAX_STARTS + " starts per period: " + starts);
    }
    if (period.compareTo(JobOptions.MAX_DELAY) > 0 || period.toMillis() < 1) {
      throw new IllegalArgumentException(
          "a rate limit's period is 1 ms to " + JobOptions.MAX_DELAY + ": " + period);
    }
  }
}
