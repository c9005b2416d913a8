package dev.kvmq.it.broken;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/** Part of a WAR that must not deploy (see {@link BrokenHandlersIT}). */
@ApplicationScoped
@QueueHandler(value = "twins")
public class SecondTwinHandler implements JobHandler<String> {

  @Override
  public void handle(Job<String> job, JobContext<String> ctx) {
    // never runs
  }
}
