package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.util.Objects;

/**
 * CDI event: a worker of this application lost its lease on a job (it expired and another worker
 * took the job, the job was deleted, or an operator cancelled it while it ran), so its outcome was
 * refused, not recorded.
 *
 * @param queue the queue's name
 * @param job the job as the worker held it
 * @param refusedOutcome "complete", "fail", "renew", "update", "start" or "snooze"
 * @param cancelled true when the job was cancelled while this worker held it: the refusal is the
 *     cancel's, not a lease that ran out ({@code kvmq.jobs.cancelled} counts these, {@code
 *     kvmq.jobs.leaseLost} the others)
 */
public record JobLeaseLost(String queue, Job<?> job, String refusedOutcome, boolean cancelled) {

  /**
   * Checks the components.
   *
   * @param queue the queue's name
   * @param job the job as the worker held it
   * @param refusedOutcome "complete", "fail", "renew", "update", "start" or "snooze"
   * @param cancelled true when the job was cancelled while this worker held it
   * @throws NullPointerException if {@code queue}, {@code job} or {@code refusedOutcome} is null
   */
  public JobLeaseLost {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(refusedOutcome, "refusedOutcome");
  }

  /**
   * A lease lost with no cancel: {@code cancelled} false.
   *
   * @param queue the queue's name
   * @param job the job as the worker held it
   * @param refusedOutcome "complete", "fail", "renew", "update", "start" or "snooze"
   * @throws NullPointerException if a component is null
   */
  public JobLeaseLost(String queue, Job<?> job, String refusedOutcome) {
    this(queue, job, refusedOutcome, false);
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
