package dev.kvmq;

import dev.kvmq.store.KvStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The attempts a job record keeps (docs/semantics.md, "History"): pure list arithmetic for {@link
 * Transitions}. A record keeps its latest {@link Attempt#KEPT} attempts; an attempt's error type
 * and message are cut to {@link JobRecord#ATTEMPT_TEXT_CHARS} characters, and {@link #fit} drops
 * attempts' messages, then older attempts, before a record grows past the store's value limit.
 */
final class History {

  /** The error type of an attempt whose lease expired before it ended (its worker died or hung). */
  static final String LEASE_EXPIRED = "dev.kvmq.LeaseExpired";

  private History() {}

  /**
   * {@code attempts} with {@code started} appended, the oldest dropped beyond {@link Attempt#KEPT}.
   */
  static List<Attempt> started(List<Attempt> attempts, Attempt started) {
    int n = attempts.size();
    int from = Math.max(0, n + 1 - Attempt.KEPT);
    Attempt[] next = new Attempt[n + 1 - from];
    for (int i = from; i < n; i++) {
      next[i - from] = attempts.get(i);
    }
    next[next.length - 1] = started;
    return List.of(next);
  }

  /**
   * {@code attempts} with the last one ended at {@code now} with {@code error} (null: it
   * succeeded), unless it has ended already (or there is none: a record written before attempts
   * were kept).
   */
  static List<Attempt> ended(List<Attempt> attempts, long now, JobError error) {
    if (attempts.isEmpty()) {
      return attempts;
    }
    Attempt last = attempts.get(attempts.size() - 1);
    if (last.endedAt().isPresent()) {
      return attempts;
    }
    List<Attempt> next = new ArrayList<>(attempts);
    next.set(
        next.size() - 1,
        new Attempt(
            last.number(),
            last.startedAt(),
            Optional.of(Instant.ofEpochMilli(now)),
            last.node(),
            Optional.ofNullable(error).map(History::cut)));
    return List.copyOf(next);
  }

  /** {@code attempts} without attempt {@code number}, which never started (it was released). */
  static List<Attempt> unstarted(List<Attempt> attempts, int number) {
    if (attempts.isEmpty() || attempts.get(attempts.size() - 1).number() != number) {
      return attempts;
    }
    return List.copyOf(attempts.subList(0, attempts.size() - 1));
  }

  /** The error of an attempt whose lease expired and was reclaimed at {@code now}. */
  static JobError leaseExpired(long now) {
    return new JobError(
        LEASE_EXPIRED,
        "the lease expired before the attempt ended: its worker died, hung or lost the store",
        Instant.ofEpochMilli(now));
  }

  private static JobError cut(JobError e) {
    return new JobError(cut(e.type()), cut(e.message()), e.failedAt());
  }

  private static String cut(String s) {
    int max = JobRecord.ATTEMPT_TEXT_CHARS;
    return s.length() <= max ? s : s.substring(0, max - 3) + "...";
  }

  /**
   * Makes {@code d} fit the store's value limit: its attempts' messages, then its older attempts
   * first (the latest stays), and if that is not enough, the job's last error keeps its type and
   * time and loses its message ({@link Transitions#MESSAGE_DROPPED}). With its state within {@link
   * Queue#MAX_STATE_BYTES} and every other field within its own limit, the record then fits: a
   * transition that lengthens a job's history (a claim's new attempt, a failure's error) never
   * makes it too large to store.
   *
   * @param encoded the length of {@code d} as it is, encoded
   */
  static JobRecord.Draft shrink(JobRecord.Draft d, int encoded) {
    if (encoded <= KvStore.MAX_VALUE_BYTES) {
      return d;
    }
    fit(d, encoded);
    if (d.error != null
        && !d.error.message().equals(Transitions.MESSAGE_DROPPED)
        && d.build().encode().length > KvStore.MAX_VALUE_BYTES) {
      d.error = new JobError(d.error.type(), Transitions.MESSAGE_DROPPED, d.error.failedAt());
    }
    return d;
  }

  /**
   * Makes {@code d} fit the store's value limit by what it keeps of its attempts: first their error
   * messages go, then the older attempts (the latest stays). The job's own fields, its error and
   * its result are not touched here.
   */
  private static JobRecord.Draft fit(JobRecord.Draft d, int encoded) {
    if (d.attempts.isEmpty() || encoded <= KvStore.MAX_VALUE_BYTES) {
      return d;
    }
    List<Attempt> bare = new ArrayList<>(d.attempts.size());
    for (Attempt a : d.attempts) {
      bare.add(
          new Attempt(
              a.number(),
              a.startedAt(),
              a.endedAt(),
              a.node(),
              a.error().map(e -> new JobError(e.type(), "", e.failedAt()))));
    }
    d.attempts = List.copyOf(bare);
    if (d.build().encode().length > KvStore.MAX_VALUE_BYTES) {
      d.attempts = List.of(bare.get(bare.size() - 1));
    }
    return d;
  }
}
