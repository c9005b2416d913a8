package dev.kvmq.it.control;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;

/**
 * The handler of queue {@code kept}, which keeps its completed jobs (a day, 1,000 at most): each
 * job completes with a result.
 */
@QueueHandler(value = "kept", keepCompleted = "P1D,1000")
public class KeptHandler implements JobHandler<Chore> {

  @Override
  public void handle(Job<Chore> job, JobContext<Chore> ctx) {
    ctx.result("done " + job.state().label());
  }
}
