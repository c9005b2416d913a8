package dev.kvmq.jakarta;

import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.enterprise.util.Nonbinding;
import jakarta.inject.Qualifier;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the queue of an injected {@link JobQueue}: {@code @Inject @QueueName("emails")
 * JobQueue<Email> emails;}
 */
@Qualifier
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.METHOD, ElementType.TYPE})
public @interface QueueName {

  /**
   * The queue's name.
   *
   * @return the name
   */
  @Nonbinding
  String value();

  /** An instance of the annotation, for programmatic lookup. */
  final class Literal extends AnnotationLiteral<QueueName> implements QueueName {
    private static final long serialVersionUID = 1L;

    /** The queue's name, this literal's {@link #value()}. */
    private final String value;

    /**
     * Makes the literal.
     *
     * @param value the queue's name
     */
    public Literal(String value) {
      this.value = value;
    }

    @Override
    public String value() {
      return value;
    }
  }
}
