package dev.kvmq.it.control;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;
import java.time.Duration;

/**
 * The handler of queue {@code overruns}: every run takes longer than the queue's timeout. The
 * annotation says a minute; the test WAR's configuration ({@code kvmq.queue.overruns.timeout})
 * makes it one second, so the test also shows configuration winning over the annotation.
 */
@QueueHandler(value = "overruns", timeout = "PT1M", retries = 1, retryDelay = "PT0.2S")
public class OverrunHandler implements JobHandler<Chore> {

  @Inject Chores chores;

  @Override
  public void handle(Job<Chore> job, JobContext<Chore> ctx) throws InterruptedException {
    String label = job.state().label();
    chores.saw(label, "started " + ctx.attempt());
    boolean told = ctx.awaitCancellation(Duration.ofMinutes(1));
    chores.saw(label, told ? "told " + ctx.cancelReason().map(Enum::name).orElse("?") : "not told");
  }
}
