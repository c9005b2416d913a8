package dev.kvmq.it.threads;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;

/**
 * Part of a WAR that must not start (see {@link ThreadFactoryProblemIT}): its thread factory's name
 * is bound to an executor, not to a {@code ManagedThreadFactory}.
 */
@QueueHandler(value = "misnamed", threadFactory = "java:comp/DefaultManagedExecutorService")
public class NotAFactoryHandler implements JobHandler<String> {

  @Override
  public void handle(Job<String> job, JobContext<String> ctx) {
    // never runs
  }
}
