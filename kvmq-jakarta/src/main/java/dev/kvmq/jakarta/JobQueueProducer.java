package dev.kvmq.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.inject.Inject;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;

/** Produces {@code @QueueName("...") JobQueue<S>} for injection points. */
@ApplicationScoped
public class JobQueueProducer {

  @Inject KvmqRuntime runtime;

  /** Made by CDI. */
  public JobQueueProducer() {}

  /**
   * Produces the named queue with a JSON-B codec for the injection point's type argument.
   *
   * @param <S> the state type
   * @param ip the injection point
   * @return the queue
   * @throws IllegalStateException if the injection point has no type argument, or the queue is
   *     already open with another state type
   */
  @Produces
  @Dependent
  @QueueName("")
  public <S> JobQueue<S> produce(InjectionPoint ip) {
    QueueName name =
        ip.getQualifiers().stream()
            .filter(QueueName.class::isInstance)
            .map(QueueName.class::cast)
            .findFirst()
            .orElseThrow();
    Type type = ip.getType();
    if (!(type instanceof ParameterizedType p)) {
      throw new IllegalStateException(
          "inject JobQueue with its state type, as JobQueue<MyState>: " + ip);
    }
    return runtime.jobQueue(name.value(), p.getActualTypeArguments()[0]);
  }
}
