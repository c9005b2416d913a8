package dev.kvmq.it.virtual;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.concurrent.ManagedThreadFactoryDefinition;
import jakarta.inject.Inject;

/**
 * The handler of the queue {@code virtual}: it runs on the application's virtual managed thread
 * factory, which this class declares (Jakarta Concurrency 3.1), as a user's would.
 */
@ManagedThreadFactoryDefinition(name = "java:app/concurrent/virtual", virtual = true)
@QueueHandler(value = "virtual", concurrency = 8, threadFactory = "java:app/concurrent/virtual")
public class VirtualHandler implements JobHandler<Fetch> {

  @Inject ThreadLog log;

  @Override
  public void handle(Job<Fetch> job, JobContext<Fetch> context) {
    Probe.record("virtual", log, job, VirtualHandler.class);
  }
}
