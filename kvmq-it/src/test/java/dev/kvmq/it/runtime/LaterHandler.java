package dev.kvmq.it.runtime;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;

/** The handler of queue {@code later}, whose jobs the data directory test delays by an hour. */
@QueueHandler("later")
public class LaterHandler implements JobHandler<Bill> {

  @Override
  public void handle(Job<Bill> job, JobContext<Bill> context) {
    // nothing: the test only needs the job to wait, durably
  }
}
