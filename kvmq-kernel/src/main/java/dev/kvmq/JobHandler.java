package dev.kvmq;

/**
 * Processes one job. Returning completes the job; throwing fails the attempt (retried or
 * dead-lettered by its options).
 *
 * <p>Delivery is at least once: a job can run again after a crash or a lost lease, so a handler's
 * effects should be idempotent, or fenced with {@link JobContext#token()}.
 *
 * @param <S> the state type
 */
@FunctionalInterface
public interface JobHandler<S> {

  /**
   * Processes a job.
   *
   * @param job the job, with its decoded state
   * @param context the lease: token, updates, cancellation
   * @throws Exception to fail the attempt
   */
  void handle(Job<S> job, JobContext<S> context) throws Exception;
}
