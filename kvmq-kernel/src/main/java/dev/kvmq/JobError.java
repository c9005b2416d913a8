package dev.kvmq;

import java.time.Instant;
import java.util.Objects;

/**
 * The error of a job's last failed attempt.
 *
 * @param type the exception's class name, or one of the kernel's own types: {@link
 *     #PERMANENT_FAILURE}, {@link #LEASE_EXPIRED}
 * @param message the exception's message, or the empty string
 * @param failedAt when the attempt failed
 */
public record JobError(String type, String message, Instant failedAt) {

  /**
   * The type of the error a handler's {@link JobContext#failPermanently} leaves when the handler
   * then returns normally.
   */
  public static final String PERMANENT_FAILURE = "dev.kvmq.PermanentFailure";

  /**
   * The type of the error of a poison job: its lease expired {@link Queue#maxLeaseExpiries()} times
   * (its worker died or hung each time), so it became a dead letter instead of being reclaimed
   * again.
   */
  public static final String LEASE_EXPIRED = "dev.kvmq.LeaseExpired";

  /**
   * Checks the components.
   *
   * @param type the {@code type} component
   * @param message the {@code message} component
   * @param failedAt the {@code failedAt} component
   * @throws NullPointerException if a component is null
   */
  public JobError {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(failedAt, "failedAt");
  }
}
