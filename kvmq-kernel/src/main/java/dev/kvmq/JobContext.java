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
    WORKER_STOPPING
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
   * @return true once the lease is lost or the worker is stopping
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
}
