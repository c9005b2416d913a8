package dev.kvmq;

import java.util.Objects;

/**
 * A job in a listing of its queue, with its place, as the seed defines it: 0 for a job being
 * processed, 1 and up for waiting and delayed jobs in queue order (priority, then creation).
 *
 * @param <S> the state type
 * @param job the job; its {@link Job#status()} is the status at listing time
 * @param place 0 while processing or held, else its 1-based position in the queue
 */
public record JobEntry<S>(Job<S> job, int place) {

  /**
   * Checks the components.
   *
   * @param job the {@code job} component
   * @param place the {@code place} component
   * @throws NullPointerException if {@code job} is null
   * @throws IllegalArgumentException if {@code place} is negative
   */
  public JobEntry {
    Objects.requireNonNull(job, "job");
    if (place < 0) {
      throw new IllegalArgumentException("place must not be negative: " + place);
    }
  }

  /**
   * Shorthand for {@code job().status()}.
   *
   * @return the job's status at listing time
   */
  public JobStatus status() {
    return job.status();
  }
}
