package dev.kvmq;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One attempt of a job, as its record keeps it (docs/semantics.md, "History"): when a worker
 * claimed it, on which node, when it ended and with which error. A record keeps its latest {@link
 * #KEPT} attempts.
 *
 * @param number which attempt: 1 for the first claim
 * @param startedAt when a worker claimed the job for this attempt
 * @param endedAt when the attempt ended (completed, failed, its lease expired and the job was
 *     reclaimed, or the job was cancelled); empty while it runs
 * @param node the node that ran it ({@link Queue.Builder#node(String)})
 * @param error the attempt's error: the handler's failure, or a lease that expired; empty for an
 *     attempt that completed, was cancelled or still runs
 */
public record Attempt(
    int number,
    Instant startedAt,
    Optional<Instant> endedAt,
    String node,
    Optional<JobError> error) {

  /** How many attempts a job record keeps: the latest 10. */
  public static final int KEPT = 10;

  /**
   * Checks the components.
   *
   * @param number the {@code number} component
   * @param startedAt the {@code startedAt} component
   * @param endedAt the {@code endedAt} component
   * @param node the {@code node} component
   * @param error the {@code error} component
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if {@code number} is less than 1
   */
  public Attempt {
    if (number < 1) {
      throw new IllegalArgumentException("an attempt's number is 1 or more: " + number);
    }
    Objects.requireNonNull(startedAt, "startedAt");
    Objects.requireNonNull(endedAt, "endedAt");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(error, "error");
  }
}
