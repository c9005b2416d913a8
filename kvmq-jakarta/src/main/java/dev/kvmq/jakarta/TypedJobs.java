package dev.kvmq.jakarta;

import dev.kvmq.Job;
import java.util.Objects;

/** The typed view of an event's job, for {@code JobCompleted#job(Class)} and its siblings. */
final class TypedJobs {

  private TypedJobs() {}

  @SuppressWarnings("unchecked")
  static <S> Job<S> as(String queue, Job<?> job, Class<S> type) {
    Objects.requireNonNull(type, "type");
    Object state = job.state();
    if (state != null && !type.isInstance(state)) {
      throw new ClassCastException(
          "the jobs of queue \""
              + queue
              + "\" hold "
              + state.getClass().getName()
              + ", not "
              + type.getName());
    }
    return (Job<S>) job;
  }
}
