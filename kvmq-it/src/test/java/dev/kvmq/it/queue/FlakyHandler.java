package dev.kvmq.it.queue;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/** The handler of the test queue {@code flaky}: records each run in the {@link Recorder}. */
@ApplicationScoped
@QueueHandler(value = "flaky", concurrency = 2)
public class FlakyHandler implements JobHandler<Task> {

  @Inject Recorder recorder;

  @Override
  public void handle(Job<Task> job, JobContext<Task> ctx) throws Exception {
    Probe.handle("flaky", recorder, job, ctx);
  }
}
