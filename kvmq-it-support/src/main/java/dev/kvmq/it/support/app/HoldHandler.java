package dev.kvmq.it.support.app;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/** The handler of the queue {@code hold}: one at a time, a one-second lease. */
@ApplicationScoped
@QueueHandler(
    value = "hold",
    concurrency = 1,
    lease = "PT1S",
    renewEvery = "PT0.25S",
    pollEvery = "PT1S")
public class HoldHandler implements JobHandler<Task> {

  @Inject Greeter greeter;

  @Override
  public void handle(Job<Task> job, JobContext<Task> ctx) throws Exception {
    Steps.run(job, ctx, greeter);
  }
}
