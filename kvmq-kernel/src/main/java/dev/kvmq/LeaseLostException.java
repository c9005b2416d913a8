package dev.kvmq;

/**
 * A lease holder's write was refused: its lease on the job is gone (expired and taken over by
 * another worker, or the job was deleted). Nothing was written.
 */
public class LeaseLostException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Makes the exception.
   *
   * @param message names the job, the queue and the token
   */
  public LeaseLostException(String message) {
    super(message);
  }
}
