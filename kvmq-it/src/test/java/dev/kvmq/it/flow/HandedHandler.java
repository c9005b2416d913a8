package dev.kvmq.it.flow;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The handler of the test queue {@code handed}, which takes handoffs ({@code handoff = true}): it
 * records the label and fencing token of every job it runs.
 */
@ApplicationScoped
@QueueHandler(value = "handed", concurrency = 1, handoff = true)
public class HandedHandler implements JobHandler<Call> {

  private final List<String> ran = new CopyOnWriteArrayList<>();

  @Override
  public void handle(Job<Call> job, JobContext<Call> ctx) {
    ran.add(job.state().label() + "@" + ctx.token());
  }

  /**
   * @return every job run so far, as {@code label@token}, in start order
   */
  public List<String> ran() {
    return List.copyOf(ran);
  }
}
