package dev.kvmq;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A job as read from its queue: its state and everything the queue knows about it.
 *
 * @param <S> the state type
 * @param id the job's id: a ULID, unique, ordered by creation
 * @param queue the queue's name
 * @param state the payload the handler gets
 * @param priority higher runs first
 * @param createdAt when the job was pushed (a repeat is a new job, with a new time)
 * @param status the status when the job was read
 * @param delayUntil when the job is (or was) due
 * @param leaseUntil when the current lease ends, if the job is leased
 * @param repeatCount runs still to come after this one, or {@link JobOptions#REPEAT_FOREVER}
 * @param repeatDelay the wait between a completion and the next run
 * @param retriesLeft retries still allowed after a failure
 * @param retryLimit the retries the job started with
 * @param retryBackoff the wait before each retry
 * @param attempt how many times the job has been claimed, this run included
 * @param token the fencing token of the latest claim: it grows with every claim
 * @param lastError the error of the latest failed attempt, if any
 */
public record Job<S>(
    String id,
    String queue,
    S state,
    double priority,
    Instant createdAt,
    JobStatus status,
    Instant delayUntil,
    Optional<Instant> leaseUntil,
    long repeatCount,
    Duration repeatDelay,
    int retriesLeft,
    int retryLimit,
    Backoff retryBackoff,
    int attempt,
    long token,
    Optional<JobError> lastError) {

  /**
   * Checks the components.
   *
   * @throws NullPointerException if a component other than {@code state} is null
   */
  public Job {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(delayUntil, "delayUntil");
    Objects.requireNonNull(leaseUntil, "leaseUntil");
    Objects.requireNonNull(repeatDelay, "repeatDelay");
    Objects.requireNonNull(retryBackoff, "retryBackoff");
    Objects.requireNonNull(lastError, "lastError");
  }

  static <S> Job<S> of(String queue, JobRecord r, S state, long now) {
    return new Job<>(r.id, queue, state, r.priority, Instant.ofEpochMilli(r.createdAt()), r.statusAt(now),
        Instant.ofEpochMilli(r.delayUntil),
        r.state == JobRecord.State.LEASED ? Optional.of(Instant.ofEpochMilli(r.leaseUntil)) : Optional.empty(),
        r.repeatCount, Duration.ofMillis(r.repeatDelay), r.retriesLeft, r.retryLimit, r.backoff, r.attempt,
        r.token, Optional.ofNullable(r.error));
  }
}
