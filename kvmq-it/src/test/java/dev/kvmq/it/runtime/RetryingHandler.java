package dev.kvmq.it.runtime;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;

/** Declares its queue's retries; fails the first {@code failures} attempts of a job. */
@QueueHandler(value = "retrying", retries = 2, retryDelay = "PT0.05S")
public class RetryingHandler implements JobHandler<Bill> {

  @Inject Ledger ledger;

  @Override
  public void handle(Job<Bill> job, JobContext<Bill> context) {
    ledger.add("attempt " + context.attempt() + " of " + job.state().customer());
    if (context.attempt() <= job.state().failures()) {
      throw new IllegalStateException("attempt " + context.attempt() + " fails on purpose");
    }
  }
}
