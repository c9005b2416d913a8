package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobError;
import java.util.Objects;

/**
 * CDI event: an attempt failed; fired after the commit that scheduled the retry or made the
 * job a dead letter.
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
}
