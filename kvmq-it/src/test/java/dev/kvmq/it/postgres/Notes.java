package dev.kvmq.it.postgres;

import dev.kvmq.jakarta.JobCompleted;
import dev.kvmq.jakarta.OnQueue;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records the ids of the {@code notes} jobs that completed, from {@code @Observes JobCompleted}.
 */
@ApplicationScoped
public class Notes {

  private final List<String> completed = new CopyOnWriteArrayList<>();

  void onCompleted(@Observes @OnQueue("notes") JobCompleted event) {
    completed.add(event.job().id());
  }

  /**
   * @return the ids seen so far
   */
  public List<String> completed() {
    return List.copyOf(completed);
  }
}
