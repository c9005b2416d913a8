package dev.kvmq.demo;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * The handler of the queue {@code demo}: works for {@code workMs}, fails the first {@code
 * failAttempts} attempts, and on success appends {@code <label> <jobId> <attempt>} to the {@link
 * Journal}.
 */
@ApplicationScoped
@QueueHandler(value = "demo", concurrency = 2, lease = "PT30S", renewEvery = "PT10S")
public class DemoHandler implements JobHandler<DemoJob> {

  /** Made by CDI. */
  public DemoHandler() {}

  @Inject Journal journal;

  @Override
  public void handle(Job<DemoJob> job, JobContext<DemoJob> ctx) throws Exception {
    DemoJob work = job.state();
    // The simulated work. It finishes even when the server stops (undeploy waits for it).
    Thread.sleep(Math.max(0, work.workMs()));
    if (ctx.attempt() <= work.failAttempts()) {
      throw new IllegalStateException(
          "attempt "
              + ctx.attempt()
              + " of job "
              + job.id()
              + " fails on purpose (failAttempts="
              + work.failAttempts()
              + ")");
    }
    journal.append(work.label() + " " + job.id() + " " + ctx.attempt());
  }
}
