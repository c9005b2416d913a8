package dev.kvmq.it.runtime;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;

/**
 * A handler with no scope annotation of its own, in a WAR without beans.xml (discovery mode
 * "annotated"): {@code @QueueHandler} alone makes it a bean.
 */
@QueueHandler("unscoped")
public class UnscopedHandler implements JobHandler<Bill> {

  @Inject Ledger ledger;

  @Override
  public void handle(Job<Bill> job, JobContext<Bill> context) {
    ledger.add("handled unscoped " + job.state().customer());
  }
}
