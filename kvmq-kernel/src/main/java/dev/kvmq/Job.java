package dev.kvmq;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A job as read from its queue: its state and everything the queue knows about it. Immutable. Jobs
 * are made by the queue (pushes, reads, listings, events), not by callers, so fields can be added
 * without breaking anyone.
 *
 * <p>Two jobs are equal when every field is: the same job read twice, unchanged, in the same
 * status. The state is compared with its own {@code equals}.
 *
 * @param <S> the state type
 */
public final class Job<S> {

  private final String id;
  private final String queue;
  private final S state;
  private final double priority;
  private final Instant createdAt;
  private final JobStatus status;
  private final Instant delayUntil;
  private final Optional<Instant> leaseUntil;
  private final long repeatCount;
  private final Duration repeatDelay;
  private final int retriesLeft;
  private final int retryLimit;
  private final Backoff retryBackoff;
  private final int attempt;
  private final long token;
  private final Optional<JobError> lastError;
  private final Optional<String> schedule;
  private final Optional<Instant> slot;
  private final Optional<UniqueKey> unique;
  private final boolean holdsUnique;
  private final Optional<String> group;
  private final Optional<Duration> timeout;
  private final boolean interruptOnCancel;
  private final Optional<Instant> cancelledAt;
  private final int leaseExpiries;
  private final Optional<String> result;
  private final List<Attempt> attempts;
  private final Optional<Instant> finishedAt;
  private final byte[] undecoded; // the stored state when the codec could not decode it; or null

  private Job(String queue, JobRecord r, S state, byte[] undecoded, long now) {
    this.undecoded = undecoded;
    this.id = r.id;
    this.queue = Objects.requireNonNull(queue, "queue");
    this.state = state;
    this.priority = r.priority;
    this.createdAt = Instant.ofEpochMilli(r.createdAt());
    this.status = r.statusAt(now);
    this.delayUntil = Instant.ofEpochMilli(r.delayUntil);
    this.leaseUntil =
        r.state == JobRecord.State.LEASED
            ? Optional.of(Instant.ofEpochMilli(r.leaseUntil))
            : Optional.empty();
    this.repeatCount = r.repeatCount;
    this.repeatDelay = Duration.ofMillis(r.repeatDelay);
    this.retriesLeft = r.retriesLeft;
    this.retryLimit = r.retryLimit;
    this.retryBackoff = r.backoff;
    this.attempt = r.attempt;
    this.token = r.token;
    this.lastError = Optional.ofNullable(r.error);
    this.schedule = Optional.ofNullable(r.schedule);
    this.slot = r.slot == -1 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(r.slot));
    this.unique = Optional.ofNullable(r.unique);
    this.holdsUnique = r.holdsUnique;
    this.group = Optional.ofNullable(r.group);
    this.timeout =
        r.timeoutMillis == -1 ? Optional.empty() : Optional.of(Duration.ofMillis(r.timeoutMillis));
    this.interruptOnCancel = r.interruptOnCancel;
    this.cancelledAt =
        r.cancelledAt == -1 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(r.cancelledAt));
    this.leaseExpiries = r.leaseExpiries;
    this.result = Optional.ofNullable(r.result);
    this.attempts = r.attempts;
    this.finishedAt =
        r.finishedAt == -1 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(r.finishedAt));
  }

  /** The job of record {@code r} of queue {@code queue}, with its status at {@code now}. */
  static <S> Job<S> of(String queue, JobRecord r, S state, long now) {
    return new Job<>(queue, r, state, null, now);
  }

  /**
   * The job of record {@code r} of queue {@code queue} whose state the queue's codec could not
   * decode: its state is null, and its stored bytes are kept ({@link #undecodedState()}).
   */
  static <S> Job<S> undecodable(String queue, JobRecord r, long now) {
    return new Job<>(queue, r, null, r.payload.clone(), now);
  }

  /**
   * Returns the job's id: a ULID, unique, ordered by creation.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * Returns the queue's name.
   *
   * @return the name
   */
  public String queue() {
    return queue;
  }

  /**
   * Returns the payload the handler gets.
   *
   * @return the state; null in a listing when the queue's codec can't decode it (then see {@link
   *     #undecodedState()})
   */
  public S state() {
    return state;
  }

  /**
   * Returns the state's bytes as stored when the queue's codec could not decode them ({@link
   * #state()} is then null): what an operator can still read of a job that an application's new
   * version no longer understands (a JSON codec's bytes are JSON text in UTF-8).
   *
   * @return a copy of the stored bytes; empty when the state decoded
   */
  public Optional<byte[]> undecodedState() {
    return undecoded == null ? Optional.empty() : Optional.of(undecoded.clone());
  }

  /**
   * Returns the priority: higher runs first.
   *
   * @return the priority
   */
  public double priority() {
    return priority;
  }

  /**
   * Returns when the job was pushed (a repeat is a new job, with a new time).
   *
   * @return the creation time
   */
  public Instant createdAt() {
    return createdAt;
  }

  /**
   * Returns the status when the job was read.
   *
   * @return the status
   */
  public JobStatus status() {
    return status;
  }

  /**
   * Returns when the job is (or was) due.
   *
   * @return the due time
   */
  public Instant delayUntil() {
    return delayUntil;
  }

  /**
   * Returns when the current lease ends, if the job is leased.
   *
   * @return the lease's end, or empty
   */
  public Optional<Instant> leaseUntil() {
    return leaseUntil;
  }

  /**
   * Returns the runs still to come after this one.
   *
   * @return the count, or {@link JobOptions#REPEAT_FOREVER}
   */
  public long repeatCount() {
    return repeatCount;
  }

  /**
   * Returns the wait between a completion and the next run.
   *
   * @return the wait
   */
  public Duration repeatDelay() {
    return repeatDelay;
  }

  /**
   * Returns the retries still allowed after a failure.
   *
   * @return the retries left
   */
  public int retriesLeft() {
    return retriesLeft;
  }

  /**
   * Returns the retries the job started with.
   *
   * @return the limit
   */
  public int retryLimit() {
    return retryLimit;
  }

  /**
   * Returns the wait before each retry.
   *
   * @return the backoff
   */
  public Backoff retryBackoff() {
    return retryBackoff;
  }

  /**
   * Returns how many times the job has been claimed, this run included.
   *
   * @return the attempt
   */
  public int attempt() {
    return attempt;
  }

  /**
   * Returns the fencing token of the latest claim: it grows with every claim.
   *
   * @return the token
   */
  public long token() {
    return token;
  }

  /**
   * Returns the error of the latest failed attempt, if any.
   *
   * @return the error, or empty
   */
  public Optional<JobError> lastError() {
    return lastError;
  }

  /**
   * Returns the name of the recurring schedule that pushed this job, if one did ({@link
   * Queue#schedules()}).
   *
   * @return the schedule's name, or empty for a job pushed by {@link Queue#push}
   */
  public Optional<String> schedule() {
    return schedule;
  }

  /**
   * Returns the schedule slot this job runs for: the instant the schedule was due, which tells a
   * handler which run it is (the 02:00 report of which day). For a run triggered by hand it is the
   * instant of the trigger.
   *
   * @return the slot, or empty for a job no schedule pushed
   */
  public Optional<Instant> slot() {
    return slot;
  }

  /**
   * Returns the unique key the job was pushed with, if any ({@link JobOptions#unique}). The key
   * stays on the job after its scope ended; {@link #holdsUniqueKey()} tells whether it still holds
   * it.
   *
   * @return the unique key, or empty
   */
  public Optional<UniqueKey> unique() {
    return unique;
  }

  /**
   * Tells whether the job holds its unique key now, so that a push of the same key is a duplicate
   * of this job. False for a job without a key, after its scope ended (a {@link
   * UniqueKey.Scope#WAITING} key after the first claim), and for a {@link UniqueKey.Scope#PERIOD}
   * key, which is held by time, not by its job.
   *
   * @return true if the job holds its unique key
   */
  public boolean holdsUniqueKey() {
    return holdsUnique;
  }

  /**
   * Returns the group the job belongs to ({@link JobOptions#group(String)}), whose concurrency
   * limit it shares.
   *
   * @return the group, or empty for a job of no group
   */
  public Optional<String> group() {
    return group;
  }

  /**
   * Returns the job's own timeout ({@link JobOptions#timeout}).
   *
   * @return the timeout, or empty when the queue's default applies
   */
  public Optional<Duration> timeout() {
    return timeout;
  }

  /**
   * Tells whether the handler's thread is interrupted when the job is cancelled or times out
   * ({@link JobOptions#interruptOnCancel}).
   *
   * @return true to interrupt
   */
  public boolean interruptOnCancel() {
    return interruptOnCancel;
  }

  /**
   * Returns when the job was cancelled.
   *
   * @return the time of the cancel, or empty for a job that was not cancelled
   */
  public Optional<Instant> cancelledAt() {
    return cancelledAt;
  }

  /**
   * Returns how many times the job's lease expired (its worker died or hung) and it was reclaimed;
   * at {@link Queue#maxLeaseExpiries()} it becomes a dead letter instead.
   *
   * @return the count, 0 or more
   */
  public int leaseExpiries() {
    return leaseExpiries;
  }

  /**
   * Returns the result its handler set ({@link JobContext#result(String)}), kept with a completed
   * job.
   *
   * @return the result, or empty
   */
  public Optional<String> result() {
    return result;
  }

  /**
   * Returns the job's latest attempts, oldest first: {@link Attempt#KEPT} at most, so the first one
   * listed is attempt {@code attempt() - attempts().size() + 1}.
   *
   * @return the attempts, unmodifiable
   */
  public List<Attempt> attempts() {
    return attempts;
  }

  /**
   * Returns when the job ended for good: completed, or failed for the last time (dead), for a job
   * kept in the queue's history.
   *
   * @return the end, or empty for a job that has not ended
   */
  public Optional<Instant> finishedAt() {
    return finishedAt;
  }

  /**
   * Compares every field.
   *
   * @param o the other object
   * @return true if {@code o} is a job with the same fields
   */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Job<?> j)) {
      return false;
    }
    return Double.compare(priority, j.priority) == 0
        && repeatCount == j.repeatCount
        && retriesLeft == j.retriesLeft
        && retryLimit == j.retryLimit
        && attempt == j.attempt
        && token == j.token
        && id.equals(j.id)
        && queue.equals(j.queue)
        && Objects.equals(state, j.state)
        && createdAt.equals(j.createdAt)
        && status == j.status
        && delayUntil.equals(j.delayUntil)
        && leaseUntil.equals(j.leaseUntil)
        && repeatDelay.equals(j.repeatDelay)
        && retryBackoff.equals(j.retryBackoff)
        && lastError.equals(j.lastError)
        && schedule.equals(j.schedule)
        && slot.equals(j.slot)
        && unique.equals(j.unique)
        && holdsUnique == j.holdsUnique
        && group.equals(j.group)
        && timeout.equals(j.timeout)
        && interruptOnCancel == j.interruptOnCancel
        && cancelledAt.equals(j.cancelledAt)
        && leaseExpiries == j.leaseExpiries
        && result.equals(j.result)
        && attempts.equals(j.attempts)
        && finishedAt.equals(j.finishedAt)
        && Arrays.equals(undecoded, j.undecoded);
  }

  /**
   * Hashes every field.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return Objects.hash(
            id,
            queue,
            state,
            priority,
            createdAt,
            status,
            delayUntil,
            leaseUntil,
            repeatCount,
            repeatDelay,
            retriesLeft,
            retryLimit,
            retryBackoff,
            attempt,
            token,
            lastError,
            schedule,
            slot,
            unique,
            holdsUnique,
            group,
            timeout,
            interruptOnCancel,
            cancelledAt,
            leaseExpiries,
            result,
            attempts,
            finishedAt)
        + 31 * Arrays.hashCode(undecoded);
  }

  /**
   * Describes the job: its id, queue, status, priority, attempt, token and state.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "Job[id="
        + id
        + ", queue="
        + queue
        + ", status="
        + status
        + ", priority="
        + priority
        + ", attempt="
        + attempt
        + ", token="
        + token
        + ", delayUntil="
        + delayUntil
        + ", state="
        + state
        + "]";
  }
}
