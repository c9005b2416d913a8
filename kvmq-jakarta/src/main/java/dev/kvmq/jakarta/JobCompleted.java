package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.util.Objects;
import java.util.Optional;

/**
 * CDI event: a job completed; fired after the commit that removed it (and wrote its next run, when
 * it repeats). Observe with {@code @Observes} or {@code @ObservesAsync}, and {@link OnQueue} to
 * filter.
 *
 * @param queue the queue's name
 * @param job the job that completed, with its decoded state
 * @param next the next run, when the job repeats
 */
public record JobCompleted(String queue, Job<?> job, Optional<Job<?>> next) {

  /**
   * Checks the components.
   *
   * @param queue the queue's name
   * @param job the job that completed, with its decoded state
   * @param next the next run, when the job repeats
   * @throws NullPointerException if a component is null
   */
  public JobCompleted {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(next, "next");
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
