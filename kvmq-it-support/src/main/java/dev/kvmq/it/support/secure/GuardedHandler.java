package dev.kvmq.it.support.secure;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.it.support.app.Task;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/** Opens the queue {@code guarded}, which the security tests pause and resume. */
@ApplicationScoped
@QueueHandler("guarded")
public class GuardedHandler implements JobHandler<Task> {

  /** Made by the container. */
  public GuardedHandler() {}

  @Override
  public void handle(Job<Task> job, JobContext<Task> ctx) {
    // nothing to do: the tests look at the queue's state, not at its jobs
  }
}
