package dev.kvmq;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of a listing ({@link Queue#list}): its jobs, and the cursor of the next page, an opaque
 * token naming where that page starts. A page costs O(page + log n) whatever the queue holds.
 *
 * @param <S> the state type
 * @param jobs the page's jobs, in the listing's order
 * @param next the cursor of the next page, or empty on the last page
 */
public record JobPage<S>(List<Job<S>> jobs, Optional<String> next) {

  /**
   * Checks and copies the components.
   *
   * @param jobs the {@code jobs} component
   * @param next the {@code next} component
   * @throws NullPointerException if a component or a job is null
   */
  public JobPage {
    jobs = List.copyOf(jobs);
    Objects.requireNonNull(next, "next");
  }
}
