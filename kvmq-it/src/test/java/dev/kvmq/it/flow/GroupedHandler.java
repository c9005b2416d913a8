package dev.kvmq.it.flow;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * The handler of the test queue {@code grouped} (concurrency 5; {@code
 * kvmq.queue.grouped.group-limit=1} in the test WAR's configuration): each job passes the {@link
 * Gates}, which count its group in and out.
 */
@ApplicationScoped
@QueueHandler(value = "grouped", concurrency = 5)
public class GroupedHandler implements JobHandler<Call> {

  @Inject Gates gates;

  @Override
  public void handle(Job<Call> job, JobContext<Call> ctx) throws Exception {
    gates.pass(job.group().orElse(""), job.state().label());
  }
}
