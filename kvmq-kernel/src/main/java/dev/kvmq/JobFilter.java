package dev.kvmq;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Which jobs a bulk operation ({@link Queue#cancelAll}, {@link Queue#deleteAll}) takes: the jobs of
 * some statuses. Immutable; made by {@link #status}. Criteria are added as withers that narrow the
 * filter (a job must match every one), so that a filter by group or by unique-key prefix is one
 * more wither, not a new method per combination.
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

  /** Whether job record {@code r} matches at {@code now}. */
  boolean matches(JobRecord r, long now) {
    return statuses.contains(r.statusAt(now));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JobFilter f && f.statuses.equals(statuses);
  }

  @Override
  public int hashCode() {
    return statuses.hashCode();
  }

  @Override
  public String toString() {
    return "JobFilter[statuses=" + EnumSet.copyOf(statuses) + "]";
  }
}
