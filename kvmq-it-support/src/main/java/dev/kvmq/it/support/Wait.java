package dev.kvmq.it.support;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Waits for a condition by polling it until a deadline: the one way these tests wait.
 *
 * <p>A test never sleeps for a guessed time. It states what it waits for and the longest it may
 * take; the poll returns as soon as the condition holds, and a timeout fails with the description
 * and the last value seen (or the exception the last poll threw). The short pause between two polls
 * is the only pause in the test code.
 */
public final class Wait {

  /** The default deadline: generous, since a slow CI machine must not fail a correct test. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

  private Wait() {}

  /**
   * Polls {@code probe} until its value satisfies {@code done}, within {@link #DEFAULT_TIMEOUT}.
   *
   * @see #until(String, Duration, Callable, Predicate)
   */
  public static <T> T until(String what, Callable<T> probe, Predicate<? super T> done) {
    return until(what, DEFAULT_TIMEOUT, probe, done);
  }

  /**
   * Polls {@code probe} until its value satisfies {@code done}.
   *
   * @param what what is awaited, for the failure message
   * @param timeout the longest wait
   * @param probe reads the current value; an exception counts as "not yet" and is reported if the
   *     deadline passes
   * @param done whether the value is the awaited one
   * @param <T> the value's type
   * @return the first value that satisfied {@code done}
   * @throws AssertionError if the deadline passed first, with the last value or exception
   */
  public static <T> T until(
      String what, Duration timeout, Callable<T> probe, Predicate<? super T> done) {
    Objects.requireNonNull(what);
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = null;
    Exception lastError = null;
    while (true) {
      try {
        last = probe.call();
        lastError = null;
        if (done.test(last)) {
          return last;
        }
      } catch (Exception e) {
        lastError = e;
      }
      if (System.nanoTime() - deadline >= 0) {
        // The last exception goes into the message too: a build's summary shows only that.
        AssertionError failure =
            new AssertionError(
                "Timed out after "
                    + timeout
                    + " waiting for "
                    + what
                    + "; last value: "
                    + last
                    + (lastError == null ? "" : "; last exception: " + lastError));
        if (lastError != null) {
          failure.initCause(lastError);
        }
        throw failure;
      }
      LockSupport.parkNanos(POLL_NANOS);
      if (Thread.interrupted()) {
        throw new AssertionError("Interrupted while waiting for " + what);
      }
    }
  }

  /**
   * Polls {@code condition} until it is true, within {@link #DEFAULT_TIMEOUT}.
   *
   * @param what what is awaited, for the failure message
   * @param condition the condition; an exception counts as "not yet"
   * @throws AssertionError if the deadline passed first
   */
  public static void until(String what, Callable<Boolean> condition) {
    until(what, DEFAULT_TIMEOUT, condition, Boolean.TRUE::equals);
  }

  /**
   * Polls {@code condition} until it is true.
   *
   * @param what what is awaited, for the failure message
   * @param timeout the longest wait
   * @param condition the condition; an exception counts as "not yet"
   * @throws AssertionError if the deadline passed first
   */
  public static void until(String what, Duration timeout, Callable<Boolean> condition) {
    until(what, timeout, condition, Boolean.TRUE::equals);
  }
}
