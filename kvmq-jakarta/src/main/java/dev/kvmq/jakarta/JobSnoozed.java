package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.time.Instant;
import java.util.Objects;

/**
 * CDI event: a handler put its job back for a while ({@link dev.kvmq.JobContext#snooze}); fired
 * once per snooze, after the commit that made the job wait again, without using a retry. A snooze
 * refused because the worker had lost the job's lease fires {@link JobLeaseLost} instead. Observe
 * with {@code @Observes} or {@code @ObservesAsync}, and {@link OnQueue} to filter.
 *
 * @param queue the queue's name
 * @param job the job as it now is (DELAYED, or WAITING for a snooze of zero)
 * @param runsAt when the job is due again: the end of the snooze
 */
public record JobSnoozed(String queue, Job<?> job, Instant runsAt) {

  /**
   * Checks the components.
   *
   * @param queue the queue's name
   * @param job the job as it now is (DELAYED, or WAITING for a snooze of zero)
   * @param runsAt when the job is due again: the end of the snooze
   * @throws NullPointerException if a component is null
   */
  public JobSnoozed {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(runsAt, "runsAt");
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
