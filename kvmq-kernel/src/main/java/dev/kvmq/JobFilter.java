package dev.kvmq;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which jobs a listing, a count or a bulk operation takes ({@link Queue#list}, {@link Queue#count},
 * {@link Queue#cancelAll}, {@link Queue#deleteAll}): the jobs of some statuses. Immutable; made by
 * {@link #status}, narrowed by withers (a job must match every criterion):
 *
 * <pre>{@code
 * JobFilter.status(JobStatus.COMPLETED).group("customer-42").uniqueKeyPrefix("sync-")
 * }</pre>
 *
 * <p>A status selects an index, so a listing or count of a status alone reads only that status's
 * jobs. A group or unique-key prefix is checked on each job record of those statuses: a listing
 * reads up to {@link #MAX_SCAN} index entries per page to fill it (a page may then hold fewer jobs
 * than asked, with a cursor to go on), and a count reads every job of the status
 * (docs/semantics.md, "History").
 */
public final class JobFilter {

  /**
   * The most index entries one page of a filtered listing ({@link #group} or {@link
   * #uniqueKeyPrefix}) reads: 10,000. A page that found fewer matching jobs than asked within them
   * ends early, with a cursor where the scan stopped.
   */
  public static final int MAX_SCAN = 10_000;

  private final Set<JobStatus> statuses;
  private final String group;
  private final String uniquePrefix;

  private JobFilter(Set<JobStatus> statuses, String group, String uniquePrefix) {
    this.statuses = Set.copyOf(statuses);
    this.group = group;
    this.uniquePrefix = uniquePrefix;
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
    return new JobFilter(s, null, null);
  }

  /**
   * Returns this filter narrowed to the jobs of one group ({@link JobOptions#group}).
   *
   * @param group the group's name, as the jobs were pushed with
   * @return the narrower filter
   * @throws NullPointerException if {@code group} is null
   * @throws IllegalArgumentException if {@code group} is not a valid group name (empty, over {@link
   *     JobOptions#MAX_GROUP_LENGTH} characters, or with no UTF-8 form)
   */
  public JobFilter group(String group) {
    Objects.requireNonNull(group, "group");
    JobOptions.checkGroup(group);
    return new JobFilter(statuses, group, uniquePrefix);
  }

  /**
   * Returns this filter narrowed to the jobs pushed with a unique key ({@link JobOptions#unique})
   * that starts with {@code prefix}, whether or not they hold the key now.
   *
   * @param prefix the start of the key, 1 to {@link UniqueKey#MAX_KEY_LENGTH} characters
   * @return the narrower filter
   * @throws NullPointerException if {@code prefix} is null
   * @throws IllegalArgumentException if {@code prefix} is empty or longer than {@link
   *     UniqueKey#MAX_KEY_LENGTH}
   */
  public JobFilter uniqueKeyPrefix(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.isEmpty() || prefix.length() > UniqueKey.MAX_KEY_LENGTH) {
      throw new IllegalArgumentException(
          "a unique key prefix has 1 to "
              + UniqueKey.MAX_KEY_LENGTH
              + " characters: this one has "
              + prefix.length());
    }
    return new JobFilter(statuses, group, prefix);
  }

  /**
   * Returns the group the filter takes.
   *
   * @return the group, or empty for jobs of any group or none
   */
  public Optional<String> group() {
    return Optional.ofNullable(group);
  }

  /**
   * Returns the unique-key prefix the filter takes.
   *
   * @return the prefix, or empty for jobs with any key or none
   */
  public Optional<String> uniqueKeyPrefix() {
    return Optional.ofNullable(uniquePrefix);
  }

  /** Whether the filter checks job records beyond their status (and so scans its indexes). */
  boolean narrowed() {
    return group != null || uniquePrefix != null;
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
    return statuses.contains(r.statusAt(now)) && matchesBeyondStatus(r);
  }

  /** Whether job record {@code r} has the filter's group and unique-key prefix, if it has them. */
  boolean matchesBeyondStatus(JobRecord r) {
    return (group == null || group.equals(r.group))
        && (uniquePrefix == null || (r.unique != null && r.unique.key().startsWith(uniquePrefix)));
  }

  /**
   * Compares the criteria.
   *
   * @param o the other object
   * @return true for a filter with the same criteria
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof JobFilter f
        && f.statuses.equals(statuses)
        && Objects.equals(f.group, group)
        && Objects.equals(f.uniquePrefix, uniquePrefix);
  }

  /**
   * Hashes the criteria.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return Objects.hash(statuses, group, uniquePrefix);
  }

  /**
   * Describes the criteria.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "JobFilter[statuses="
        + EnumSet.copyOf(statuses)
        + (group == null ? "" : ", group=" + group)
        + (uniquePrefix == null ? "" : ", uniqueKeyPrefix=" + uniquePrefix)
        + "]";
  }
}
