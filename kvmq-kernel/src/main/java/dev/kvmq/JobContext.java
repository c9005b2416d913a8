package dev.kvmq;

import java.time.Duration;
import java.util.Optional;

/**
 * What a running handler knows and can do about its lease.
 *
 * @param <S> the state type
 */
public interface JobContext<S> {

  /** Why a handler is asked to stop. */
  enum CancelReason {
    /** The lease could not be renewed or was taken over: another worker may run the job. */
    LEASE_LOST,
    /** The worker is stopping; the job will run again later if the handler does not finish. */
    WORKER_STOPPING,
    /**
     * An operator cancelled the job ({@link Queue#cancel}): it is {@link JobStatus#CANCELLED} and
     * this run's outcome will be refused.
     */
    CANCELLED,
    /**
     * The run took longer than the job's timeout ({@link JobOptions#timeout}): the attempt counts
     * as failed with a {@link JobTimeoutException}, whatever the handler does next.
     */
    TIMED_OUT
  }

  /**
   * The fencing token of this lease. It grows with every claim of the job, so a downstream system
   * that remembers the largest token it has seen can refuse writes from a stale run.
   *
   * @return the token, 1 or more
   */
  long token();

  /**
   * Which attempt this is: 1 for the first claim.
   *
   * @return the attempt number
   */
  int attempt();

  /**
   * Saves a new state for the job and renews the lease. The seed's {@code updateJob}.
   *
   * @param state the new state
   * @throws LeaseLostException if the lease is lost; nothing was written
   * @throws NullPointerException if {@code state} is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  void update(S state);

  /**
   * Saves a new state and changes the job's options, and renews the lease.
   *
   * @param state the new state
   * @param change the changes to repeats and retries
   * @throws LeaseLostException if the lease is lost; nothing was written
   * @throws NullPointerException if an argument is null
   * @throws dev.kvmq.store.KvStoreException if the store fails
   */
  void update(S state, JobChange change);

  /**
   * Tells whether the handler has been asked to stop.
   *
   * @return true once the lease is lost, the job is cancelled, its run has timed out, or the worker
   *     is stopping
   */
  boolean isCancelled();

  /**
   * Tells why the handler was asked to stop.
   *
   * @return the reason, or empty if it was not
   */
  Optional<CancelReason> cancelReason();

  /**
   * Waits until the handler is asked to stop, or the timeout passes.
   *
   * @param timeout the longest wait
   * @return true if cancelled, false if the time ran out
   * @throws InterruptedException if the thread is interrupted while waiting
   */
  boolean awaitCancellation(Duration timeout) throws InterruptedException;

  /**
   * Runs {@code action} when the handler is asked to stop (at once if it already was).
   *
   * @param action what to run, on the thread that cancels; must be quick
   * @throws NullPointerException if {@code action} is null
   */
  void onCancel(Runnable action);

  /**
   * Fails this job for good when the handler returns: it becomes a dead letter at once, whatever
   * retries it has left. If the handler then returns normally, the error kept is of type {@link
   * JobError#PERMANENT_FAILURE} with {@code message}; if it throws, the error of what it throws is
   * kept. The last call of this method or {@link #snooze} decides.
   *
   * @param message why the job can never succeed
   * @throws NullPointerException if {@code message} is null
   */
  void failPermanently(String message);

  /**
   * Puts the job back when the handler returns normally, due {@code delay} later, without using a
   * retry: its retries left stay as they are (its attempt count still counts this run). A handler
   * that throws after calling it fails as usual. The last call of this method or {@link
   * #failPermanently} decides.
   *
   * @param delay how long until the job is due again, zero or more, at most {@link
   *     JobOptions#MAX_DELAY}
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code delay} is negative or over {@link
   *     JobOptions#MAX_DELAY}
   */
  void snooze(Duration delay);

  /**
   * Sets the job's result: a small value (at most {@link Queue#MAX_RESULT_BYTES} bytes of UTF-8)
   * kept with the completed job for the queue's {@link Retention#completed() retention} ({@link
   * Job#result()}). Takes effect when the handler returns normally; the last value set wins. Kept
   * only if the job completes and completed jobs are kept.
   *
   * @param value the result, such as an id or a short JSON document
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if {@code value} is over {@link Queue#MAX_RESULT_BYTES} bytes
   *     in UTF-8
   * @throws UnsupportedOperationException if this context keeps no result (an implementation that
   *     predates results)
   */
  default void result(String value) {
    throw new UnsupportedOperationException("this JobContext keeps no result");
  }

  /**
   * Stops the worker from claiming more jobs (the seed's {@code stopProcessing}); running handlers,
   * this one included, are told and may finish.
   */
  void stopProcessing();

  /**
   * Tells the queue that the remote side limits us (an HTTP 429, a quota): no job of this queue
   * starts on any node for {@code pause}, and this job goes back to wait, due when the pause ends,
   * without using a retry or counting the attempt. Return from the handler after calling it: its
   * outcome (a return or an exception) is then not recorded as a completion or a failure. Calls
   * that overlap keep the latest end. Recorded when the handler returns, in the commit that puts
   * the job back (docs/flow-control.md, "Rate limits").
   *
   * @param pause how long no job of the queue starts, 1 ms to {@link JobOptions#MAX_DELAY}
   * @throws NullPointerException if {@code pause} is null
   * @throws IllegalArgumentException if {@code pause} is shorter than 1 ms or too long
   */
  void pauseQueueStarts(Duration pause);

  /**
   * Tells the queue that the remote side limits this job's group (an HTTP 429 for one tenant, a
   * quota per customer): no job of this job's group starts on any node for {@code pause}, and this
   * job goes back to wait, due when the pause ends, without using a retry or counting the attempt.
   * Jobs of other groups and of no group keep starting. Return from the handler after calling it:
   * its outcome (a return or an exception) is then not recorded as a completion or a failure. Calls
   * that overlap keep the latest end; with {@link #pauseQueueStarts} too, the queue's pause applies
   * as well. Recorded when the handler returns, in the commit that puts the job back
   * (docs/flow-control.md, "The remote side limits a group").
   *
   * @param pause how long no job of the group starts, 1 ms to {@link JobOptions#MAX_DELAY}
   * @throws NullPointerException if {@code pause} is null
   * @throws IllegalArgumentException if {@code pause} is shorter than 1 ms or too long
   * @throws IllegalStateException if this job belongs to no group (pause the queue's starts
   *     instead)
   * @throws UnsupportedOperationException if this context can't pause a group (an implementation
   *     that predates group pauses)
   */
  default void pauseGroupStarts(Duration pause) {
    throw new UnsupportedOperationException("this JobContext can't pause a group's starts");
  }
}
