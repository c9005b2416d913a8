package dev.kvmq.it.virtual;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;

/** The handler of the queue {@code platform}, in the same WAR, on kvmq's own pool. */
@QueueHandler(value = "platform", concurrency = 2)
public class PlatformHandler implements JobHandler<Fetch> {

  @Inject ThreadLog log;

  @Override
  public void handle(Job<Fetch> job, JobContext<Fetch> context) {
    Probe.record("platform", log, job, PlatformHandler.class);
  }
}
