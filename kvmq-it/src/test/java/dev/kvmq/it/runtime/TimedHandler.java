package dev.kvmq.it.runtime;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;

/** Works {@code failures} milliseconds per job: the handler time that the metrics report. */
@QueueHandler(value = "timed", concurrency = 2)
public class TimedHandler implements JobHandler<Bill> {

  @Override
  public void handle(Job<Bill> job, JobContext<Bill> context) throws InterruptedException {
    Thread.sleep(job.state().failures()); // the job's simulated work
  }
}
