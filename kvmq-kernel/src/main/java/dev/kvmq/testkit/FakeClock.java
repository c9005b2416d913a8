package dev.kvmq.testkit;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;

/**
 * A clock that moves only when told: pass it to {@code Queue.builder(...).clock(clock)} and drive
 * time with {@link #advance(Duration)}. Thread-safe.
 *
 * <p>Usually paired with a {@link ManualScheduler}, whose {@code advance} moves this clock and runs
 * what becomes due; move the clock directly only when nothing is scheduled.
 */
public final class FakeClock implements InstantSource {

  private volatile Instant now;

  /**
   * Makes a clock showing {@code start}.
   *
   * @param start the initial time
   * @throws NullPointerException if {@code start} is null
   */
  public FakeClock(Instant start) {
    this.now = Objects.requireNonNull(start, "start");
  }

  /** Makes a clock showing 2026-01-01T00:00:00Z. */
  public FakeClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  /**
   * Returns the current fake time.
   *
   * @return the time
   */
  @Override
  public Instant instant() {
    return now;
  }

  /**
   * Moves the clock forward.
   *
   * @param duration how far, zero or more
   * @return the new time
   * @throws NullPointerException if {@code duration} is null
   * @throws IllegalArgumentException if {@code duration} is negative
   */
  public synchronized Instant advance(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.isNegative()) {
      throw new IllegalArgumentException("a clock moves forward only: " + duration);
    }
    now = now.plus(duration);
    return now;
  }

  /**
   * Sets the clock, forward or back (to test a clock that steps back).
   *
   * @param instant the new time
   * @throws NullPointerException if {@code instant} is null
   */
  public synchronized void set(Instant instant) {
    now = Objects.requireNonNull(instant, "instant");
  }

  @Override
  public String toString() {
    return "FakeClock[" + now + "]";
  }
}
