package dev.kvmq.it.postgres;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/** The handler of {@code notes}: does nothing; {@link Notes} sees its completions. */
@ApplicationScoped
@QueueHandler(value = "notes", concurrency = 2)
public class NoteHandler implements JobHandler<Note> {

  @Override
  public void handle(Job<Note> job, JobContext<Note> ctx) {
    if (job.state().label().isEmpty()) {
      throw new IllegalArgumentException("a note needs a label");
    }
  }
}
