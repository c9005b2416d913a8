package dev.kvmq.it.support.app;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * The handler of the queue {@code work}: two at a time, a short lease renewed twice a second. A
 * test that needs one slot sets {@code kvmq.queue.work.concurrency=1} on the server.
 */
@ApplicationScoped
@QueueHandler(
    value = "work",
    concurrency = 2,
    lease = "PT2S",
    renewEvery = "PT0.5S",
    pollEvery = "PT1S")
public class WorkHandler implements JobHandler<Task> {

  @Inject Greeter greeter;

  @Override
  public void handle(Job<Task> job, JobContext<Task> ctx) throws Exception {
    Steps.run(job, ctx, greeter);
  }
}
