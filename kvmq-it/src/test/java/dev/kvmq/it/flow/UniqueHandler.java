package dev.kvmq.it.flow;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/** The handler of the test queue {@code unique}: its jobs are pushed delayed, to wait. */
@ApplicationScoped
@QueueHandler("unique")
public class UniqueHandler implements JobHandler<Call> {

  @Override
  public void handle(Job<Call> job, JobContext<Call> ctx) {}
}
