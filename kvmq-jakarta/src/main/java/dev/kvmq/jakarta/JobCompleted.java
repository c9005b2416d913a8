package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.util.Objects;
import java.util.Optional;

/**
 * CDI event: a job completed; fired after the commit that removed it (and wrote its next
 * run, when it repeats). Observe with {@code @Observes} or {@code @ObservesAsync}, and
 * {@link OnQueue} to filter.
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
}
