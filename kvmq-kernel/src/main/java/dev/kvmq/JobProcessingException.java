package dev.kvmq;

/**
 * A job could not be deleted because it is being processed under a live lease. Delete it after it
 * completes or its lease expires.
 */
public class JobProcessingException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /**
   * Makes the exception.
   *
   * @param message names the job, the queue and the lease's end
   */
  public JobProcessingException(String message) {
    super(message);
  }
}
