package dev.kvmq;

import java.util.Objects;

/**
 * Which jobs a listing or count takes ({@link Queue#list}, {@link Queue#count}): the jobs of one
 * status. Immutable; further criteria (a group, a unique key) are added as withers, so a filter
 * made today keeps its meaning.
 */
public final class JobFilter {

  private final JobStatus status;

  private JobFilter(JobStatus status) {
    this.status = status;
  }

  /**
   * The jobs of {@code status}.
   *
   * @param status the status
   * @return the filter
   * @throws NullPointerException if {@code status} is null
   */
  public static JobFilter status(JobStatus status) {
    return new JobFilter(Objects.requireNonNull(status, "status"));
  }

  /**
   * Returns the status the filter takes.
   *
   * @return the status
   */
  public JobStatus status() {
    return status;
  }

  /**
   * Compares the criteria.
   *
   * @param o the other object
   * @return true for a filter with the same criteria
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof JobFilter f && f.status == status;
  }

  /**
   * Hashes the criteria.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return status.hashCode();
  }

  /**
   * Describes the criteria.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "JobFilter[status=" + status + "]";
  }
}
