package dev.kvmq.it.dashboard;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The handler of a queue whose very name looks like markup: it fails a job whose state says so,
 * with the state's text as the error message, so the dead letter's error is markup too.
 */
@ApplicationScoped
@QueueHandler(value = MarkupHandler.QUEUE, pollEvery = "PT1S")
public class MarkupHandler implements JobHandler<Mark> {

  /** The queue's name: HTML, quotes and an event handler attribute. */
  public static final String QUEUE = "q\"'<img src=x onerror=window.kvmqPwned=1>&amp;";

  @Override
  public void handle(Job<Mark> job, JobContext<Mark> ctx) {
    if (job.state().fail()) {
      throw new IllegalStateException(job.state().text());
    }
  }
}
