package dev.kvmq;

import dev.kvmq.store.Key;
import java.time.Duration;
import java.util.Objects;

/**
 * A job's unique key and its scope (docs/flow-control.md, "Unique jobs"): while the key is taken, a
 * push of another job with the same key in the same queue makes no new job; it returns the job that
 * holds the key ({@link PushResult.Outcome#DUPLICATE}), or, in {@link #debounce() debounce} mode,
 * gives that job the new state and due time ({@link PushResult.Outcome#DEBOUNCED}).
 *
 * <p>The key is taken in the push's atomic commit (its index entry checked absent) and released in
 * the commit that ends its scope, so two nodes pushing the same key at the same instant make one
 * job.
 *
 * <pre>{@code
 * JobOptions.defaults().unique(UniqueKey.whileWaiting("sync-customer-42"))
 * JobOptions.defaults().unique(UniqueKey.throttle("report-7", Duration.ofMinutes(10)))
 * JobOptions.defaults().delay(Duration.ofSeconds(30)).unique(UniqueKey.whileWaiting("reindex").debounce())
 * }</pre>
 *
 * @param key the key: 1 to {@link #MAX_KEY_LENGTH} characters, with a UTF-8 form (no unpaired
 *     surrogate)
 * @param scope how long the key is taken
 * @param period for {@link Scope#PERIOD}: how long after the push, from 1 ms to {@link
 *     JobOptions#MAX_DELAY}; {@link Duration#ZERO} for the other scopes
 * @param debounced whether a push whose key is taken by a waiting job gives that job its state and
 *     due time instead of leaving it as it is (see {@link #debounce()})
 */
public record UniqueKey(String key, Scope scope, Duration period, boolean debounced) {

  /** The longest key, in characters ({@link String#length()}): 256. */
  public static final int MAX_KEY_LENGTH = 256;

  /** How long a job's unique key is taken. */
  public enum Scope {
    /**
     * From the push until a worker first claims the job (or it is deleted): while it waits, ready
     * or delayed. A job that waits again after it ran (a retry, an expired lease) does not hold the
     * key again.
     */
    WAITING,
    /**
     * From the push until the job completes, becomes a dead letter, or is deleted: while it waits,
     * runs, or waits for a retry.
     */
    WAITING_OR_RUNNING,
    /**
     * For {@link UniqueKey#period()} after the push, whatever happens to the job (throttle): at
     * most one job per key per period.
     */
    PERIOD
  }

  /**
   * Checks the components.
   *
   * @param key the {@code key} component
   * @param scope the {@code scope} component
   * @param period the {@code period} component
   * @param debounced the {@code debounced} component
   * @throws NullPointerException if {@code key}, {@code scope} or {@code period} is null
   * @throws IllegalArgumentException if {@code key} is empty, longer than {@link #MAX_KEY_LENGTH}
   *     or has no UTF-8 form; if {@code scope} is {@link Scope#PERIOD} and {@code period} is
   *     shorter than 1 ms or over {@link JobOptions#MAX_DELAY}, or another scope and {@code period}
   *     is not zero
   */
  public UniqueKey {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(period, "period");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("a unique key must not be empty");
    }
    if (key.length() > MAX_KEY_LENGTH) {
      throw new IllegalArgumentException(
          "a unique key has at most "
              + MAX_KEY_LENGTH
              + " characters; this one has "
              + key.length()
              + ": \""
              + key.substring(0, 40)
              + "...\"");
    }
    try {
      Key.of(key);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "a unique key must have a UTF-8 form (no unpaired surrogate): " + e.getMessage(), e);
    }
    if (scope == Scope.PERIOD) {
      if (period.compareTo(JobOptions.MAX_DELAY) > 0) {
        throw new IllegalArgumentException(
            "the period of a throttle key must be at most "
                + JobOptions.MAX_DELAY
                + " (about 100 years): "
                + period);
      }
      if (period.toMillis() < 1) {
        throw new IllegalArgumentException(
            "the period of a throttle key must be at least 1 ms: " + period);
      }
    } else if (!period.isZero()) {
      throw new IllegalArgumentException(
          "a period is given for the scope PERIOD only; this key's scope is " + scope);
    }
  }

  /**
   * A key taken while its job waits (ready or delayed), released when a worker first claims it.
   *
   * @param key the key
   * @return the unique key
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is empty or too long
   */
  public static UniqueKey whileWaiting(String key) {
    return new UniqueKey(key, Scope.WAITING, Duration.ZERO, false);
  }

  /**
   * A key taken while its job waits or runs, released when it completes, becomes a dead letter or
   * is deleted.
   *
   * @param key the key
   * @return the unique key
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is empty or too long
   */
  public static UniqueKey whileWaitingOrRunning(String key) {
    return new UniqueKey(key, Scope.WAITING_OR_RUNNING, Duration.ZERO, false);
  }

  /**
   * A key taken for {@code period} after the push (throttle): at most one job per key per period.
   *
   * @param key the key
   * @param period how long after the push the key stays taken
   * @return the unique key
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code key} is empty or too long, or {@code period} is
   *     shorter than 1 ms or over {@link JobOptions#MAX_DELAY}
   */
  public static UniqueKey throttle(String key, Duration period) {
    return new UniqueKey(key, Scope.PERIOD, period, false);
  }

  /**
   * Returns this key in debounce mode: a push whose key is taken by a job that is still waiting
   * (ready or delayed, not yet claimed) gives that job the pushed state and due time, and keeps its
   * id, priority and place among jobs of its priority. A key taken by a running or finished job is
   * a duplicate as without debounce.
   *
   * @return the key, debounced
   */
  public UniqueKey debounce() {
    return new UniqueKey(key, scope, period, true);
  }
}
