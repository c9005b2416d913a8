package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a failed job waits before its next attempt.
 *
 * <p>{@link #fixed(Duration)} waits the same time before every retry (the seed's {@code
 * retryDelayMs}); {@link #exponential(Duration, double, Duration, double)} doubles (or multiplies)
 * the wait each time, up to a cap, optionally with random jitter.
 *
 * @param initial the wait before the first retry
 * @param multiplier the factor applied per further retry (1 for fixed)
 * @param max the longest wait
 * @param jitter the fraction of the wait that is random, from 0 (none) to 1: the wait is drawn
 *     uniformly from {@code [d * (1 - jitter), d]}
 */
public record Backoff(Duration initial, double multiplier, Duration max, double jitter) {

  /**
   * {@link JobOptions#MAX_DELAY}, kept here: JobOptions' initializer reads {@link #NONE}, so this
   * class's initializer must not read JobOptions (and it is set before {@code NONE}).
   */
  static final Duration MAX_WAIT = Duration.ofDays(36_525);

  /** No wait at all between attempts. */
  public static final Backoff NONE = new Backoff(Duration.ZERO, 1, Duration.ZERO, 0);

  /**
   * Checks the components.
   *
   * @param initial the {@code initial} component
   * @param multiplier the {@code multiplier} component
   * @param max the {@code max} component
   * @param jitter the {@code jitter} component
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException if a duration is negative, {@code max < initial}, {@code max}
   *     is over {@link JobOptions#MAX_DELAY}, {@code multiplier} is not a finite number of at least
   *     1, or {@code jitter} is not in {@code [0, 1]}
   */
  public Backoff {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    if (initial.isNegative()) {
      throw new IllegalArgumentException("backoff initial delay must not be negative: " + initial);
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("backoff max " + max + " is less than initial " + initial);
    }
    if (max.compareTo(MAX_WAIT) > 0) {
      throw new IllegalArgumentException(
          "backoff max must be at most " + MAX_WAIT + " (about 100 years): " + max);
    }
    if (!(multiplier >= 1) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException(
          "backoff multiplier must be a finite number >= 1: " + multiplier);
    }
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new IllegalArgumentException("backoff jitter must be between 0 and 1: " + jitter);
    }
  }

  /**
   * The same wait before every retry.
   *
   * @param delay the wait
   * @return the backoff
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code delay} is negative or over {@link
   *     JobOptions#MAX_DELAY}
   */
  public static Backoff fixed(Duration delay) {
    return new Backoff(delay, 1, delay, 0);
  }

  /**
   * A wait that grows by {@code multiplier} per retry, up to {@code max}.
   *
   * @param initial the wait before the first retry
   * @param multiplier the growth factor, at least 1 (2 doubles the wait)
   * @param max the cap
   * @param jitter the random fraction of each wait, from 0 to 1
   * @return the backoff
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException as for the canonical constructor
   */
  public static Backoff exponential(
      Duration initial, double multiplier, Duration max, double jitter) {
    return new Backoff(initial, multiplier, max, jitter);
  }

  /**
   * Computes the wait before a retry.
   *
   * @param retry which retry this is: 1 for the first
   * @param random a number in {@code [0, 1)} drawn by the caller (the kernel draws none)
   * @return the wait, between 0 and {@link #max()}
   * @throws IllegalArgumentException if {@code retry < 1} or {@code random} is outside {@code [0,
   *     1)}
   */
  public Duration delayFor(int retry, double random) {
    if (retry < 1) {
      throw new IllegalArgumentException("retry counts from 1: " + retry);
    }
    if (!(random >= 0 && random < 1)) {
      throw new IllegalArgumentException("random must be in [0, 1): " + random);
    }
    double millis = initial.toMillis() * Math.pow(multiplier, retry - 1);
    millis = Math.min(millis, max.toMillis());
    millis -= millis * jitter * random;
    return Duration.ofMillis(Math.round(millis));
  }
}
