package dev.kvmq;

import java.time.Instant;
import java.util.Objects;

/**
 * The error of a job's last failed attempt.
 *
 * @param type the exception's class name
 * @param message the exception's message, or the empty string
 * @param failedAt when the attempt failed
 */
public record JobError(String type, String message, Instant failedAt) {

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
