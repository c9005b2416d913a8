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

  private final String queue;
  private final S state;
  private final JobStatus status;

  /**
   * The record the job was read from, immutable: every other value is derived from it when asked
   * for, so that a job handed to a handler or carried by an event costs one object.
   */
  private final JobRecord record;

  private final byte[] undecoded; // the stored state when the codec could not decode it; or null

  private Job(String queue, JobRecord r, S state, byte[] undecoded, long now) {
    this.queue = Objects.requireNonNull(queue, "queue");
    this.record = r;
    this.state = state;
    this.status = r.statusAt(now);
    this.undecoded = undecoded;
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
    return record.id;
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
    return record.priority;
  }

  /**
   * Returns when the job was pushed (a repeat is a new job, with a new time).
   *
   * @return the creation time
   */
  public Instant createdAt() {
    return Instant.ofEpochMilli(record.createdAt());
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
    return Instant.ofEpochMilli(record.delayUntil);
  }

  /**
   * Returns when the current lease ends, if the job is leased.
   *
   * @return the lease's end, or empty
   */
  public Optional<Instant> leaseUntil() {
    return record.state == JobRecord.State.LEASED
        ? Optional.of(Instant.ofEpochMilli(record.leaseUntil))
        : Optional.empty();
  }

  /**
   * Returns the runs still to come after this one.
   *
   * @return the count, or {@link JobOptions#REPEAT_FOREVER}
   */
  public long repeatCount() {
    return record.repeatCount;
  }

  /**
   * Returns the wait between a completion and the next run.
   *
   * @return the wait
   */
  public Duration repeatDelay() {
    return Duration.ofMillis(record.repeatDelay);
  }

  /**
   * Returns the retries still allowed after a failure.
   *
   * @return the retries left
   */
  public int retriesLeft() {
    return record.retriesLeft;
  }

  /**
   * Returns the retries the job started with.
   *
   * @return the limit
   */
  public int retryLimit() {
    return record.retryLimit;
  }

  /**
   * Returns the wait before each retry.
   *
   * @return the backoff
   */
  public Backoff retryBackoff() {
    return record.backoff;
  }

  /**
   * Returns how many times the job has been claimed, this run included.
   *
   * @return the attempt
   */
  public int attempt() {
    return record.attempt;
  }

  /**
   * Returns the fencing token of the latest claim: it grows with every claim.
   *
   * @return the token
   */
  public long token() {
    return record.token;
  }

  /**
   * Returns the error of the latest failed attempt, if any.
   *
   * @return the error, or empty
   */
  public Optional<JobError> lastError() {
    return Optional.ofNullable(record.error);
  }

  /**
   * Returns the name of the recurring schedule that pushed this job, if one did ({@link
   * Queue#schedules()}).
   *
   * @return the schedule's name, or empty for a job pushed by {@link Queue#push}
   */
  public Optional<String> schedule() {
    return Optional.ofNullable(record.schedule);
  }

  /**
   * Returns the schedule slot this job runs for: the instant the schedule was due, which tells a
   * handler which run it is (the 02:00 report of which day). For a run triggered by hand it is the
   * instant of the trigger.
   *
   * @return the slot, or empty for a job no schedule pushed
   */
  public Optional<Instant> slot() {
    return record.slot == -1 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(record.slot));
  }

  /**
   * Returns the unique key the job was pushed with, if any ({@link JobOptions#unique}). The key
   * stays on the job after its scope ended; {@link #holdsUniqueKey()} tells whether it still holds
   * it.
   *
   * @return the unique key, or empty
   */
  public Optional<UniqueKey> unique() {
    return Optional.ofNullable(record.unique);
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
    return record.holdsUnique;
  }

  /**
   * Returns the group the job belongs to ({@link JobOptions#group(String)}), whose concurrency
   * limit it shares.
   *
   * @return the group, or empty for a job of no group
   */
  public Optional<String> group() {
    return Optional.ofNullable(record.group);
  }

  /**
   * Returns the job's own timeout ({@link JobOptions#timeout}).
   *
   * @return the timeout, or empty when the queue's default applies
   */
  public Optional<Duration> timeout() {
    return record.timeoutMillis == -1
        ? Optional.empty()
        : Optional.of(Duration.ofMillis(record.timeoutMillis));
  }

  /**
   * Tells whether the handler's thread is interrupted when the job is cancelled or times out
   * ({@link JobOptions#interruptOnCancel}).
   *
   * @return true to interrupt
   */
  public boolean interruptOnCancel() {
    return record.interruptOnCancel;
  }

  /**
   * Returns when the job was cancelled.
   *
   * @return the time of the cancel, or empty for a job that was not cancelled
   */
  public Optional<Instant> cancelledAt() {
    return record.cancelledAt == -1
        ? Optional.empty()
        : Optional.of(Instant.ofEpochMilli(record.cancelledAt));
  }

  /**
   * Returns how many times the job's lease expired (its worker died or hung) and it was reclaimed;
   * at {@link Queue#maxLeaseExpiries()} it becomes a dead letter instead.
   *
   * @return the count, 0 or more
   */
  public int leaseExpiries() {
    return record.leaseExpiries;
  }

  /**
   * Returns the result its handler set ({@link JobContext#result(String)}), kept with a completed
   * job.
   *
   * @return the result, or empty
   */
  public Optional<String> result() {
    return Optional.ofNullable(record.result);
  }

  /**
   * Returns the job's latest attempts, oldest first: {@link Attempt#KEPT} at most, so the first one
   * listed is attempt {@code attempt() - attempts().size() + 1}.
   *
   * @return the attempts, unmodifiable
   */
  public List<Attempt> attempts() {
    return record.attempts;
  }

  /**
   * Returns when the job ended for good: completed, or failed for the last time (dead), for a job
   * kept in the queue's history.
   *
   * @return the end, or empty for a job that has not ended
   */
  public Optional<Instant> finishedAt() {
    return record.finishedAt == -1
        ? Optional.empty()
        : Optional.of(Instant.ofEpochMilli(record.finishedAt));
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
    return Double.compare(priority(), j.priority()) == 0
        && repeatCount() == j.repeatCount()
        && retriesLeft() == j.retriesLeft()
        && retryLimit() == j.retryLimit()
        && attempt() == j.attempt()
        && token() == j.token()
        && id().equals(j.id())
        && queue.equals(j.queue)
        && Objects.equals(state, j.state)
        && createdAt().equals(j.createdAt())
        && status == j.status
        && delayUntil().equals(j.delayUntil())
        && leaseUntil().equals(j.leaseUntil())
        && repeatDelay().equals(j.repeatDelay())
        && retryBackoff().equals(j.retryBackoff())
        && lastError().equals(j.lastError())
        && schedule().equals(j.schedule())
        && slot().equals(j.slot())
        && unique().equals(j.unique())
        && holdsUniqueKey() == j.holdsUniqueKey()
        && group().equals(j.group())
        && timeout().equals(j.timeout())
        && interruptOnCancel() == j.interruptOnCancel()
        && cancelledAt().equals(j.cancelledAt())
        && leaseExpiries() == j.leaseExpiries()
        && result().equals(j.result())
        && attempts().equals(j.attempts())
        && finishedAt().equals(j.finishedAt())
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
            id(),
            queue,
            state,
            priority(),
            createdAt(),
            status,
            delayUntil(),
            leaseUntil(),
            repeatCount(),
            repeatDelay(),
            retriesLeft(),
            retryLimit(),
            retryBackoff(),
            attempt(),
            token(),
            lastError(),
            schedule(),
            slot(),
            unique(),
            holdsUniqueKey(),
            group(),
            timeout(),
            interruptOnCancel(),
            cancelledAt(),
            leaseExpiries(),
            result(),
            attempts(),
            finishedAt())
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
        + record.id
        + ", queue="
        + queue
        + ", status="
        + status
        + ", priority="
        + record.priority
        + ", attempt="
        + record.attempt
        + ", token="
        + record.token
        + ", delayUntil="
        + delayUntil()
        + ", state="
        + state
        + "]";
  }
}
