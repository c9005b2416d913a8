package dev.kvmq.it.support.traced;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/** Fails each job's first attempt and completes its retry: two runs, two outcomes. */
@ApplicationScoped
@QueueHandler(value = "traced", retries = 1, retryDelay = "PT0.2S", pollEvery = "PT0.5S")
public class TracedHandler implements JobHandler<String> {

  @Override
  public void handle(Job<String> job, JobContext<String> ctx) {
    if (ctx.attempt() == 1) {
      throw new IllegalStateException("first attempt of " + job.state() + " fails");
    }
  }
}
