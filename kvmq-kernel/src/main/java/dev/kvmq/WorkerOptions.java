package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Worker} runs. The seed's {@code WorkerOptions}.
 *
 * @param concurrency how many jobs run at once; 0 pauses the worker (default 1)
 * @param leaseDuration how long a claim holds a job without renewal (default 5 s, the seed's {@code
 *     lockDurationMs})
 * @param renewInterval how often leases of running jobs are renewed; shorter than the lease
 *     (default 2 s, the seed's {@code lockIntervalMs})
 * @param pollInterval how often an idle worker looks for work when the store can't notify, and the
 *     longest it waits even when it can (default 3 s)
 * @param prefetch how many jobs the worker may claim ahead: held under its lease (renewed like a
 *     running job's) until a handler slot frees, so that a finishing handler takes its next job
 *     without waiting for a claim commit (default 0: claim only for free slots). Worth it for many
 *     short jobs; a job claimed ahead waits on this worker even when another node is idle, so keep
 *     it small for long jobs. A stopping worker puts the jobs it claimed ahead back, in their
 *     place, with the attempt not counted.
 * @param handoff whether a job pushed through this worker's {@link Queue} object while the worker
 *     has an idle handler slot is claimed for it in the push's own commit and started at once,
 *     instead of being claimed by a later commit (default false; docs/semantics.md, "Handoff").
 *     Saves a pickup the claim's commit and round trips; only for jobs due now, of no group and
 *     with no unique key, in a queue without a rate limit, while neither the queue nor its starts
 *     are paused. {@link Queue#push} then returns the job already processing.
 */
public record WorkerOptions(
    int concurrency,
    Duration leaseDuration,
    Duration renewInterval,
    Duration pollInterval,
    int prefetch,
    boolean handoff) {

  private static final WorkerOptions DEFAULTS =
      new WorkerOptions(
          1, Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(3), 0, false);

  /**
   * Checks the components.
   *
   * @param concurrency the {@code concurrency} component
   * @param leaseDuration the {@code leaseDuration} component
   * @param renewInterval the {@code renewInterval} component
   * @param pollInterval the {@code pollInterval} component
   * @param prefetch the {@code prefetch} component
   * @param handoff the {@code handoff} component
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException if {@code concurrency} or {@code prefetch} is negative or over
   *     10,000, a duration is shorter than 1 ms or longer than {@link JobOptions#MAX_DELAY}, or the
   *     renew interval is not shorter than the lease
   */
  public WorkerOptions {
    if (concurrency < 0 || concurrency > 10_000) {
      throw new IllegalArgumentException("concurrency must be 0 to 10000: " + concurrency);
    }
    if (prefetch < 0 || prefetch > 10_000) {
      throw new IllegalArgumentException("prefetch must be 0 to 10000: " + prefetch);
    }
    positive(leaseDuration, "leaseDuration");
    positive(renewInterval, "renewInterval");
    positive(pollInterval, "pollInterval");
    if (renewInterval.compareTo(leaseDuration) >= 0) {
      throw new IllegalArgumentException(
          "renewInterval "
              + renewInterval
              + " must be shorter than leaseDuration "
              + leaseDuration);
    }
  }

  /**
   * Options without {@link #handoff}.
   *
   * @param concurrency jobs at once; 0 pauses the worker
   * @param leaseDuration the lease
   * @param renewInterval the renewal interval, shorter than the lease
   * @param pollInterval the idle poll interval
   * @param prefetch jobs to hold beyond the running ones; 0 claims only for free slots
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public WorkerOptions(
      int concurrency,
      Duration leaseDuration,
      Duration renewInterval,
      Duration pollInterval,
      int prefetch) {
    this(concurrency, leaseDuration, renewInterval, pollInterval, prefetch, false);
  }

  /**
   * Options that claim no jobs ahead ({@code prefetch} 0) and take no handoffs.
   *
   * @param concurrency jobs at once; 0 pauses the worker
   * @param leaseDuration the lease
   * @param renewInterval the renewal interval, shorter than the lease
   * @param pollInterval the idle poll interval
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public WorkerOptions(
      int concurrency, Duration leaseDuration, Duration renewInterval, Duration pollInterval) {
    this(concurrency, leaseDuration, renewInterval, pollInterval, 0, false);
  }

  private static void positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.compareTo(JobOptions.MAX_DELAY) > 0 || d.toMillis() < 1) {
      throw new IllegalArgumentException(
          name + " must be at least 1 ms and at most " + JobOptions.MAX_DELAY + ": " + d);
    }
  }

  /**
   * Concurrency 1, lease 5 s, renewal every 2 s, poll every 3 s, no prefetch, no handoff.
   *
   * @return the defaults
   */
  public static WorkerOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Returns these options with another concurrency.
   *
   * @param concurrency jobs at once; 0 pauses the worker
   * @return the new options
   * @throws IllegalArgumentException if out of range
   */
  public WorkerOptions concurrency(int concurrency) {
    return new WorkerOptions(
        concurrency, leaseDuration, renewInterval, pollInterval, prefetch, handoff);
  }

  /**
   * Returns these options with another lease and renewal interval.
   *
   * @param lease the lease duration
   * @param renewEvery the renewal interval, shorter than the lease
   * @return the new options
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if a duration is not positive or renewal is not shorter
   */
  public WorkerOptions lease(Duration lease, Duration renewEvery) {
    return new WorkerOptions(concurrency, lease, renewEvery, pollInterval, prefetch, handoff);
  }

  /**
   * Returns these options with another poll interval.
   *
   * @param pollInterval the idle poll interval
   * @return the new options
   * @throws NullPointerException if {@code pollInterval} is null
   * @throws IllegalArgumentException if it is not positive
   */
  public WorkerOptions pollInterval(Duration pollInterval) {
    return new WorkerOptions(
        concurrency, leaseDuration, renewInterval, pollInterval, prefetch, handoff);
  }

  /**
   * Returns these options with another number of jobs claimed ahead.
   *
   * @param prefetch jobs to hold beyond the running ones; 0 claims only for free slots
   * @return the new options
   * @throws IllegalArgumentException if negative or over 10,000
   */
  public WorkerOptions prefetch(int prefetch) {
    return new WorkerOptions(
        concurrency, leaseDuration, renewInterval, pollInterval, prefetch, handoff);
  }

  /**
   * Returns these options with handoffs taken or not: see {@link #handoff()}.
   *
   * @param handoff true to take jobs pushed through this worker's queue object while a handler slot
   *     is idle, in the push's own commit
   * @return the new options
   */
  public WorkerOptions handoff(boolean handoff) {
    return new WorkerOptions(
        concurrency, leaseDuration, renewInterval, pollInterval, prefetch, handoff);
  }
}
