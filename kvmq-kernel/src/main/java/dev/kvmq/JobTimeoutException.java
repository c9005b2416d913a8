package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * What an attempt that ran over its timeout ({@link JobOptions#timeout}, or the queue's {@link
 * Queue.Builder#defaultTimeout default}) failed with: its {@link JobError#type()} is this class's
 * name, and retries and backoff apply as for any failure. Made by the worker, never thrown into the
 * handler: the handler is told through {@link JobContext#isCancelled()} ({@link
 * JobContext.CancelReason#TIMED_OUT}).
 */
public final class JobTimeoutException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The timeout the run went over. */
  private final transient Duration timeout;

  /**
   * Makes the error of a run that went over {@code timeout}.
   *
   * @param jobId the job's id
   * @param timeout the timeout it went over
   * @throws NullPointerException if an argument is null
   */
  public JobTimeoutException(String jobId, Duration timeout) {
    super(
        "job "
            + Objects.requireNonNull(jobId, "jobId")
            + " ran longer than its timeout of "
            + Objects.requireNonNull(timeout, "timeout"));
    this.timeout = timeout;
  }

  /**
   * Returns the timeout the run went over.
   *
   * @return the timeout
   */
  public Duration timeout() {
    return timeout;
  }
}
