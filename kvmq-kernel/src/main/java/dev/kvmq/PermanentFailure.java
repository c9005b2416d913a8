package dev.kvmq;

/**
 * The failure a worker records when a handler called {@link JobContext#failPermanently} and then
 * returned normally: its class name is {@link JobError#PERMANENT_FAILURE}. Never thrown.
 */
final class PermanentFailure extends RuntimeException {

  private static final long serialVersionUID = 1L;

  PermanentFailure(String message) {
    super(message, null, false, false);
  }
}
