package dev.kvmq;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a job is pushed: priority, delay, repeats and retries. The seed's {@code JobOptions}.
 *
 * <p>Start from {@link #defaults()} and change what you need:
 *
 * <pre>{@code
 * JobOptions.defaults()
 *     .priority(10)
 *     .delay(Duration.ofMinutes(5))
 *     .retry(3, Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofMinutes(1), 0.2))
 * }</pre>
 *
 * @param priority higher runs first; any finite number (default 0)
 * @param delay how long after the push the job becomes due, or null when {@code delayUntil} is
 *     given (default zero)
 * @param delayUntil the instant the job becomes due, or null when {@code delay} is given
 * @param repeatCount how many more times the job runs after it completes, or {@link
 *     #REPEAT_FOREVER} (default 0)
 * @param repeatDelay the wait between a completion and the next repeat (default zero)
 * @param retryCount how many times a failed attempt is retried (default 0)
 * @param retryBackoff the wait before each retry (default none)
 * @param unique the job's unique key and its scope, or null for none (default none); see {@link
 *     Queue#offer}
 * @param group the group the job belongs to, or null for none (default): jobs of one group share
 *     the queue's concurrency limit of that group ({@link Queue.Builder#groupLimit(String, int)},
 *     docs/flow-control.md); 1 to {@link #MAX_GROUP_LENGTH} characters
 * @param timeout how long one run of the job's handler may take before it is told to stop and the
 *     attempt counts as failed ({@link JobTimeoutException}), or null for the queue's default
 *     ({@link Queue.Builder#defaultTimeout}; default null)
 * @param interruptOnCancel whether the handler's thread is interrupted, besides being told through
 *     {@link JobContext#isCancelled()}, when the job is cancelled or its run times out (default
 *     false)
 */
public record JobOptions(
    double priority,
    Duration delay,
    Instant delayUntil,
    long repeatCount,
    Duration repeatDelay,
    int retryCount,
    Backoff retryBackoff,
    UniqueKey unique,
    String group,
    Duration timeout,
    boolean interruptOnCancel) {

  /** The {@link #repeatCount()} of a job that repeats forever (the seed's Infinity). */
  public static final long REPEAT_FOREVER = -1;

  /**
   * The longest wait an option may give (a delay, a repeat delay, a backoff's cap): 36,525 days,
   * about 100 years, so that every due time the queue computes fits its clock.
   */
  public static final Duration MAX_DELAY = Backoff.MAX_WAIT;

  /** The earliest {@link #delayUntil()}: the first instant of year 0. */
  public static final Instant MIN_DELAY_UNTIL = Instant.parse("0000-01-01T00:00:00Z");

  /** The latest {@link #delayUntil()}: the last millisecond of year 9999. */
  public static final Instant MAX_DELAY_UNTIL = Instant.parse("9999-12-31T23:59:59.999Z");

  /** The longest {@link #group()}: 200 characters. */
  public static final int MAX_GROUP_LENGTH = 200;

  private static final JobOptions DEFAULTS =
      new JobOptions(
          0, Duration.ZERO, null, 0, Duration.ZERO, 0, Backoff.NONE, null, null, null, false);

  /** The longest {@link #timeout()}: {@link #MAX_DELAY}. */
  public static final Duration MAX_TIMEOUT = MAX_DELAY;

  /**
   * Checks the components.
   *
   * @param priority the {@code priority} component
   * @param delay the {@code delay} component
   * @param delayUntil the {@code delayUntil} component
   * @param repeatCount the {@code repeatCount} component
   * @param repeatDelay the {@code repeatDelay} component
   * @param retryCount the {@code retryCount} component
   * @param retryBackoff the {@code retryBackoff} component
   * @param unique the {@code unique} component
   * @param group the {@code group} component
   * @param timeout the {@code timeout} component
   * @param interruptOnCancel the {@code interruptOnCancel} component
   * @throws IllegalArgumentException if {@code priority} is NaN or infinite; if both or neither of
   *     {@code delay} and {@code delayUntil} are given, {@code delay} is negative or over {@link
   *     #MAX_DELAY}, or {@code delayUntil} is outside [{@link #MIN_DELAY_UNTIL}, {@link
   *     #MAX_DELAY_UNTIL}]; if {@code repeatCount < -1}, {@code repeatDelay} is negative or over
   *     {@link #MAX_DELAY}, or {@code retryCount < 0}; if {@code unique} is given with repeats (a
   *     repeating job can't have a unique key: use a schedule, which runs one job per slot); if
   *     {@code group} is empty, longer than {@link #MAX_GROUP_LENGTH} characters, or has no UTF-8
   *     form (an unpaired surrogate); if {@code timeout} is given and shorter than 1 ms or over
   *     {@link #MAX_TIMEOUT}
   * @throws NullPointerException if {@code repeatDelay} or {@code retryBackoff} is null
   */
  public JobOptions {
    if (!Double.isFinite(priority)) {
      throw new IllegalArgumentException("priority must be a finite number: " + priority);
    }
    if ((delay == null) == (delayUntil == null)) {
      throw new IllegalArgumentException("give exactly one of delay and delayUntil");
    }
    if (delay != null && delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative: " + delay);
    }
    if (delay != null && delay.compareTo(MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "delay must be at most " + MAX_DELAY + " (about 100 years): " + delay);
    }
    if (delayUntil != null
        && (delayUntil.isBefore(MIN_DELAY_UNTIL) || delayUntil.isAfter(MAX_DELAY_UNTIL))) {
      throw new IllegalArgumentException(
          "delayUntil must be in the years 0 to 9999: " + delayUntil);
    }
    if (repeatCount < REPEAT_FOREVER) {
      throw new IllegalArgumentException(
          "repeatCount must be >= 0, or REPEAT_FOREVER: " + repeatCount);
    }
    Objects.requireNonNull(repeatDelay, "repeatDelay");
    if (repeatDelay.isNegative()) {
      throw new IllegalArgumentException("repeatDelay must not be negative: " + repeatDelay);
    }
    if (repeatDelay.compareTo(MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "repeatDelay must be at most " + MAX_DELAY + " (about 100 years): " + repeatDelay);
    }
    if (retryCount < 0) {
      throw new IllegalArgumentException("retryCount must not be negative: " + retryCount);
    }
    Objects.requireNonNull(retryBackoff, "retryBackoff");
    if (unique != null && repeatCount != 0) {
      throw new IllegalArgumentException(
          "a repeating job can't have a unique key (its runs would share it): use a schedule,"
              + " which runs one job per slot; unique key \""
              + unique.key()
              + "\", repeatCount "
              + repeatCount);
    }
    checkGroup(group);
    if (timeout != null && (timeout.compareTo(MAX_TIMEOUT) > 0 || timeout.toMillis() < 1)) {
      throw new IllegalArgumentException(
          "timeout must be at least 1 ms and at most " + MAX_TIMEOUT + ": " + timeout);
    }
    priority = priority == 0 ? 0 : priority; // one zero: -0.0 and 0.0 rank the same
  }

  /**
   * Priority 0, no delay, no repeats, no retries.
   *
   * @return the default options
   */
  public static JobOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Returns these options with another priority.
   *
   * @param priority higher runs first; any finite number
   * @return the new options
   * @throws IllegalArgumentException if {@code priority} is NaN or infinite
   */
  public JobOptions priority(double priority) {
    return with(d -> d.priority = priority);
  }

  /**
   * Returns these options with the job due {@code delay} after its push.
   *
   * @param delay the wait, zero or more
   * @return the new options
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code delay} is negative or over {@link #MAX_DELAY}
   */
  public JobOptions delay(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    return with(
        d -> {
          d.delay = delay;
          d.delayUntil = null;
        });
  }

  /**
   * Returns these options with the job due at {@code instant} (at once if it has passed).
   *
   * @param instant when the job becomes due
   * @return the new options
   * @throws NullPointerException if {@code instant} is null
   * @throws IllegalArgumentException if {@code instant} is outside the years 0 to 9999
   */
  public JobOptions delayUntil(Instant instant) {
    Objects.requireNonNull(instant, "instant");
    return with(
        d -> {
          d.delay = null;
          d.delayUntil = instant;
        });
  }

  /**
   * Returns these options with repeats: after each completion the job is pushed again, as a new job
   * at the back of the queue, due {@code delay} later.
   *
   * @param count how many more runs, or {@link #REPEAT_FOREVER}
   * @param delay the wait between a completion and the next run
   * @return the new options
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code count < -1}, or {@code delay} is negative or over
   *     {@link #MAX_DELAY}, or {@code count} is not 0 and these options have a unique key
   */
  public JobOptions repeat(long count, Duration delay) {
    return with(
        d -> {
          d.repeatCount = count;
          d.repeatDelay = delay;
        });
  }

  /**
   * Returns these options with retries: a failed attempt is tried again, keeping the job's place in
   * the queue, after the backoff's wait; when none are left the job becomes a dead letter.
   *
   * @param count how many retries, zero or more
   * @param backoff the wait before each retry
   * @return the new options
   * @throws NullPointerException if {@code backoff} is null
   * @throws IllegalArgumentException if {@code count < 0}
   */
  public JobOptions retry(int count, Backoff backoff) {
    return with(
        d -> {
          d.retryCount = count;
          d.retryBackoff = backoff;
        });
  }

  /**
   * Returns these options with the job in a group: jobs of one group share the queue's concurrency
   * limit of that group, across all nodes (docs/flow-control.md, "Groups").
   *
   * @param group the group, 1 to {@link #MAX_GROUP_LENGTH} characters; null for none
   * @return the new options
   * @throws IllegalArgumentException if {@code group} is empty, too long, or has no UTF-8 form
   */
  public JobOptions group(String group) {
    return with(d -> d.group = group);
  }

  /**
   * Checks a group name: null (no group), or 1 to {@link #MAX_GROUP_LENGTH} characters with a UTF-8
   * form.
   *
   * @param group the name
   * @throws IllegalArgumentException if it is empty, too long, or has an unpaired surrogate
   */
  static void checkGroup(String group) {
    if (group == null) {
      return;
    }
    if (group.isEmpty()) {
      throw new IllegalArgumentException("a group name must not be empty");
    }
    if (group.length() > MAX_GROUP_LENGTH) {
      throw new IllegalArgumentException(
          "a group name has at most "
              + MAX_GROUP_LENGTH
              + " characters: this one has "
              + group.length());
    }
    for (int i = 0; i < group.length(); i++) {
      char c = group.charAt(i);
      if (Character.isSurrogate(c)) {
        boolean paired =
            Character.isHighSurrogate(c)
                && i + 1 < group.length()
                && Character.isLowSurrogate(group.charAt(i + 1));
        if (!paired) {
          throw new IllegalArgumentException(
              "a group name must be valid text: an unpaired surrogate at index " + i);
        }
        i++;
      }
    }
  }

  /**
   * Returns these options with a unique key: while the key is taken (per its scope), a push of
   * another job with the same key in this queue makes no new job; {@link Queue#offer} says so.
   *
   * @param unique the key and its scope, or null for none
   * @return the new options
   * @throws IllegalArgumentException if {@code unique} is given and these options repeat
   */
  public JobOptions unique(UniqueKey unique) {
    return with(d -> d.unique = unique);
  }

  /**
   * Returns these options with a timeout: a run of the handler that takes longer is told to stop
   * ({@link JobContext.CancelReason#TIMED_OUT}; its thread interrupted too when {@link
   * #interruptOnCancel()}), and the attempt counts as failed with a {@link JobTimeoutException}
   * error: retries and backoff apply. Null takes the queue's default ({@link
   * Queue.Builder#defaultTimeout}).
   *
   * @param timeout the longest run, at least 1 ms; or null for the queue's default
   * @return the new options
   * @throws IllegalArgumentException if {@code timeout} is shorter than 1 ms or over {@link
   *     #MAX_TIMEOUT}
   */
  public JobOptions timeout(Duration timeout) {
    return with(d -> d.timeout = timeout);
  }

  /**
   * Returns these options with the handler's thread interrupted (or not) when the job is cancelled
   * while it runs ({@link Queue#cancel}) or its run times out. The handler is told through {@link
   * JobContext#isCancelled()} and {@link JobContext#onCancel} either way.
   *
   * @param interrupt true to interrupt the handler's thread
   * @return the new options
   */
  public JobOptions interruptOnCancel(boolean interrupt) {
    return with(d -> d.interruptOnCancel = interrupt);
  }

  /**
   * Resolves the instant the job becomes due.
   *
   * @param now the push time
   * @return {@code delayUntil}, or {@code now + delay}
   */
  Instant dueAt(Instant now) {
    return delayUntil != null ? delayUntil : now.plus(delay);
  }

  /**
   * These options with the components {@code change} sets: every wither goes through here, so a new
   * component is added in one place and the constructor checks the result.
   */
  private JobOptions with(Consumer<Draft> change) {
    Draft d = new Draft(this);
    change.accept(d);
    return new JobOptions(
        d.priority,
        d.delay,
        d.delayUntil,
        d.repeatCount,
        d.repeatDelay,
        d.retryCount,
        d.retryBackoff,
        d.unique,
        d.group,
        d.timeout,
        d.interruptOnCancel);
  }

  /** The components of options being changed: a copy to set fields on, then checked as a whole. */
  private static final class Draft {
    double priority;
    Duration delay;
    Instant delayUntil;
    long repeatCount;
    Duration repeatDelay;
    int retryCount;
    Backoff retryBackoff;
    UniqueKey unique;
    String group;
    Duration timeout;
    boolean interruptOnCancel;

    Draft(JobOptions o) {
      priority = o.priority;
      delay = o.delay;
      delayUntil = o.delayUntil;
      repeatCount = o.repeatCount;
      repeatDelay = o.repeatDelay;
      retryCount = o.retryCount;
      retryBackoff = o.retryBackoff;
      unique = o.unique;
      group = o.group;
      timeout = o.timeout;
      interruptOnCancel = o.interruptOnCancel;
    }
  }
}
