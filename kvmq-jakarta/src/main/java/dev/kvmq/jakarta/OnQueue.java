package dev.kvmq.jakarta;

import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.inject.Qualifier;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Filters kvmq's CDI events by queue: {@code void on(@Observes @OnQueue("emails") JobFailed e)}. An
 * observer without it sees the events of every queue.
 */
@Qualifier
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.METHOD, ElementType.TYPE})
public @interface OnQueue {

  /**
   * The queue's name.
   *
   * @return the name
   */
  String value();

  /** An instance of the annotation, to fire events with. */
  final class Literal extends AnnotationLiteral<OnQueue> implements OnQueue {
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
