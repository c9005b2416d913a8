package dev.kvmq;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Which jobs a listing, a count or a bulk operation takes ({@link Queue#list}, {@link Queue#count},
 * {@link Queue#cancelAll}, {@link Queue#deleteAll}): the jobs of some statuses. Immutable; made by
 * {@link #status}. Criteria are added as withers that narrow the filter (a job must match every
 * one), so that a filter by group or by unique-key prefix is one more wither, not a new method per
 * combination, and a filter made today keeps its meaning.
 */
public final class JobFilter {

  private final Set<JobStatus> statuses;

  private JobFilter(Set<JobStatus> statuses) {
    this.statuses = Set.copyOf(statuses);
  }

  /**
   * The jobs of one or more statuses.
   *
   * @param first a status
   * @param more more statuses
   * @return the filter
   * @throws NullPointerException if a status is null
   */
  public static JobFilter status(JobStatus first, JobStatus... more) {
    EnumSet<JobStatus> s = EnumSet.of(Objects.requireNonNull(first, "first"));
    for (JobStatus m : more) {
      s.add(Objects.requireNonNull(m, "status"));
    }
    return new JobFilter(s);
  }

  /**
   * Returns the statuses a job must have one of.
   *
   * @return the statuses, unmodifiable, never empty
   */
  public Set<JobStatus> statuses() {
    return statuses;
  }

  /**
   * Returns the one status the filter takes, for a listing or a count (which read one status's
   * index).
   *
   * @return the status
   * @throws IllegalStateException if the filter takes more than one status
   */
  public JobStatus status() {
    if (statuses.size() != 1) {
      throw new IllegalStateException(
          "a listing or count takes one status; this filter takes " + EnumSet.copyOf(statuses));
    }
    return statuses.iterator().next();
  }

  /** Whether job record {@code r} matches at {@code now}. */
  boolean matches(JobRecord r, long now) {
    return statuses.contains(r.statusAt(now));
  }

  /**
   * Compares the criteria.
   *
   * @param o the other object
   * @return true for a filter with the same criteria
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof JobFilter f && f.statuses.equals(statuses);
  }

  /**
   * Hashes the criteria.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return statuses.hashCode();
  }

  /**
   * Describes the criteria.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "JobFilter[statuses=" + EnumSet.copyOf(statuses) + "]";
  }
}
