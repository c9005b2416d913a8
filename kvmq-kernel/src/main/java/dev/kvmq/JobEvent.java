package dev.kvmq;

import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link Worker} reports to its listeners, always after the commit that made it true.
 *
 * @param <S> the state type
 */
public sealed interface JobEvent<S> permits JobEvent.Completed, JobEvent.Failed, JobEvent.LeaseLost {

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
     * @throws NullPointerException if a component is null
     */
    public Completed {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(next, "next");
    }
  }

  /**
   * An attempt failed: the job will be retried, or (when {@code dead}) it is now a dead
   * letter.
   *
   * @param <S> the state type
   * @param job the job as it now is (status DELAYED or WAITING for a retry, DEAD otherwise)
   * @param error the recorded error
   * @param cause what the handler threw (or the codec, if the state couldn't be decoded)
   * @param dead true when no retries were left
   */
  record Failed<S>(Job<S> job, JobError error, Throwable cause, boolean dead) implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if a component is null
     */
    public Failed {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(error, "error");
      Objects.requireNonNull(cause, "cause");
    }
  }

  /**
   * The worker lost its lease on a job (it expired and another worker claimed it, or the job
   * was deleted): the worker's completion or failure was refused, not applied.
   *
   * @param <S> the state type
   * @param job the job as the worker held it
   * @param refusedOutcome what the worker tried to record: "complete", "fail", "renew" or
   *     "update"; or "start" for a job it had claimed ahead and found taken over before it
   *     ran it (then it did not run it)
   */
  record LeaseLost<S>(Job<S> job, String refusedOutcome) implements JobEvent<S> {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if a component is null
     */
    public LeaseLost {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(refusedOutcome, "refusedOutcome");
    }
  }
}
