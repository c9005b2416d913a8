package dev.kvmq.it.control;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;
import java.time.Duration;

/**
 * The handler of queue {@code cancellable}: works until it is told to stop (at most a minute), then
 * records why and returns.
 */
@QueueHandler("cancellable")
public class StubbornHandler implements JobHandler<Chore> {

  @Inject Chores chores;

  @Override
  public void handle(Job<Chore> job, JobContext<Chore> ctx) throws InterruptedException {
    String label = job.state().label();
    chores.saw(label, "started " + ctx.attempt());
    boolean told = ctx.awaitCancellation(Duration.ofMinutes(1));
    chores.saw(label, told ? "told " + ctx.cancelReason().map(Enum::name).orElse("?") : "not told");
    chores.saw(label, "returned");
  }
}
