package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobError;
import java.util.Objects;

/**
 * CDI event: an attempt failed; fired after the commit that scheduled the retry or made the job a
 * dead letter.
 *
 * @param queue the queue's name
 * @param job the job as it now is (DELAYED or WAITING for its retry, DEAD when none are left)
 * @param error the recorded error (type, message, time)
 * @param dead true when no retries were left and the job is now a dead letter
 */
public record JobFailed(String queue, Job<?> job, JobError error, boolean dead) {

  /**
   * Checks the components.
   *
   * @param queue the queue's name
   * @param job the job as it now is (DELAYED or WAITING for its retry, DEAD when none are left)
   * @param error the recorded error (type, message, time)
   * @param dead true when no retries were left and the job is now a dead letter
   * @throws NullPointerException if a component is null
   */
  public JobFailed {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(error, "error");
  }

  /**
   * Returns the job with its state typed, for an observer that knows the queue's state type: {@code
   * Email email = event.job(Email.class).state();}.
   *
   * @param <S> the state type
   * @param type the queue's state type (or a supertype of it)
   * @return {@link #job()}, typed; its state is null only if it could not be decoded
   * @throws ClassCastException if the state is not a {@code type}; the message names the queue, its
   *     state's class and {@code type}
   * @throws NullPointerException if {@code type} is null
   */
  public <S> Job<S> job(Class<S> type) {
    return TypedJobs.as(queue, job, type);
  }
}
