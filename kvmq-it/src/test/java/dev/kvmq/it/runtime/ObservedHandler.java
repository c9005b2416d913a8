package dev.kvmq.it.runtime;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;

/** A short lease, two at a time: its jobs' completions must not wait for a slow observer. */
@QueueHandler(value = "observed", concurrency = 2, lease = "PT2S", renewEvery = "PT0.5S")
public class ObservedHandler implements JobHandler<Bill> {

  @Inject Ledger ledger;

  @Override
  public void handle(Job<Bill> job, JobContext<Bill> context) {
    ledger.add("handled " + job.state().customer() + " attempt " + context.attempt());
  }
}
