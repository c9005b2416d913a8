package dev.kvmq.store;

/**
 * A store could not do what was asked for a reason outside the caller's control: an I/O error, a
 * lost database connection, a corrupted file. Whether a commit that ended in this exception was
 * applied is unknown; callers that retry must make their operation safe to repeat (the kernel's
 * transitions are, through their checks).
 */
public class KvStoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Makes the exception.
   *
   * @param message what failed, naming the store and the operation
   * @param cause the underlying error, or null
   */
  public KvStoreException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Makes the exception.
   *
   * @param message what failed, naming the store and the operation
   */
  public KvStoreException(String message) {
    super(message);
  }
}
