package dev.kvmq;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link Worker} reports to its listeners, always after the commit that made it true.
 *
 * @param <S> the state type
 */
public sealed interface JobEvent<S>
    permits JobEvent.Completed, JobEvent.Failed, JobEvent.Snoozed, JobEvent.LeaseLost {

  /**
   * The job the event is about, as the worker last held it.
   *
   * @return the job
   */
  Job<S> job();

  /**
   * A job completed; it is gone from the queue.
   *
   * @param <S> the state type
   * @param job the job that completed
   * @param next the next run, when the job repeats (committed in the same operation)
   */
  record Completed<S>(Job<S> job, Optional<Job<S>> next) implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @param job the {@code job} component
     * @param next the {@code next} component
     * @throws NullPointerException if a component is null
     */
    public Completed {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(next, "next");
    }
  }

  /**
   * An attempt failed: the job will be retried, or (when {@code dead}) it is now a dead letter.
   *
   * @param <S> the state type
   * @param job the job as it now is (status DELAYED or WAITING for a retry, DEAD otherwise)
   * @param error the recorded error
   * @param cause what the handler threw (or the codec, if the state couldn't be decoded)
   * @param dead true when no retries were left
   */
  record Failed<S>(Job<S> job, JobError error, Throwable cause, boolean dead)
      implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @param job the {@code job} component
     * @param error the {@code error} component
     * @param cause the {@code cause} component
     * @param dead the {@code dead} component
     * @throws NullPointerException if a component is null
     */
    public Failed {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(error, "error");
      Objects.requireNonNull(cause, "cause");
    }
  }

  /**
   * The handler put its job back for a while ({@link JobContext#snooze}): the job waits again,
   * without using a retry, and runs again at {@code runsAt}. Reported once per snooze, after its
   * commit; a snooze refused because the lease was lost is a {@link LeaseLost} instead.
   *
   * @param <S> the state type
   * @param job the job as it now is (status DELAYED, or WAITING for a snooze of zero)
   * @param runsAt when the job is due again: the end of the snooze ({@link Job#delayUntil()})
   */
  record Snoozed<S>(Job<S> job, Instant runsAt) implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @param job the {@code job} component
     * @param runsAt the {@code runsAt} component
     * @throws NullPointerException if a component is null
     */
    public Snoozed {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(runsAt, "runsAt");
    }
  }

  /** What a worker tried to record under a lease it had lost, and was refused. */
  enum RefusedOutcome {
    /** The job's completion. */
    COMPLETE,
    /** The job's failure. */
    FAIL,
    /** A renewal of the lease. */
    RENEW,
    /** The handler's {@link JobContext#update} of the job. */
    UPDATE,
    /** The start of a job claimed ahead, found taken over before it ran (then it did not run). */
    START,
    /** The handler's {@link JobContext#snooze} of the job. */
    SNOOZE;

    /**
     * The outcome as a lower-case word, as logs and events spell it: "complete", "fail", "renew",
     * "update", "start" or "snooze".
     *
     * @return the word
     */
    public String word() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * The worker lost its lease on a job (it expired and another worker claimed it, or the job was
   * deleted or cancelled): the worker's completion or failure was refused, not applied.
   *
   * @param <S> the state type
   * @param job the job as the worker held it
   * @param refusedOutcome what the worker tried to record
   * @param cancelled true when the worker found the job cancelled (by {@link Queue#cancel} or
   *     {@link Queue#cancelAll}, on any node) under its lease: the refusal is the cancel's
   *     revocation, an operator's act, not a lease that ran out or was taken over
   */
  record LeaseLost<S>(Job<S> job, RefusedOutcome refusedOutcome, boolean cancelled)
      implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @param job the {@code job} component
     * @param refusedOutcome the {@code refusedOutcome} component
     * @param cancelled the {@code cancelled} component
     * @throws NullPointerException if {@code job} or {@code refusedOutcome} is null
     */
    public LeaseLost {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(refusedOutcome, "refusedOutcome");
    }

    /**
     * A lease lost with no cancel: {@code cancelled} false.
     *
     * @param job the job as the worker held it
     * @param refusedOutcome what the worker tried to record
     * @throws NullPointerException if a component is null
     */
    public LeaseLost(Job<S> job, RefusedOutcome refusedOutcome) {
      this(job, refusedOutcome, false);
    }
  }
}
