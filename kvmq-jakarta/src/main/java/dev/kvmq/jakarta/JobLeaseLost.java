package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.util.Objects;

/**
 * CDI event: a worker of this application lost its lease on a job (it expired and another
 * worker took the job, or the job was deleted), so its outcome was refused, not recorded.
 *
 * @param queue the queue's name
 * @param job the job as the worker held it
 * @param refusedOutcome "complete", "fail", "renew" or "update"
 */
public record JobLeaseLost(String queue, Job<?> job, String refusedOutcome) {

  /**
   * Checks the components.
   *
   * @param queue the queue's name
   * @param job the job as the worker held it
   * @param refusedOutcome "complete", "fail", "renew" or "update"
   * @throws NullPointerException if a component is null
   */
  public JobLeaseLost {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(refusedOutcome, "refusedOutcome");
  }
}
