package dev.kvmq.it.dashboard;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import dev.kvmq.jakarta.QueueSchedule;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The handler of a queue whose very name looks like markup: it fails a job whose state says so,
 * with the state's text as the error message, so the dead letter's error is markup too. Its two
 * schedules (which fire in 2027 and 2030 at the earliest) have names and states that are markup.
 */
@ApplicationScoped
@QueueHandler(value = MarkupHandler.QUEUE, pollEvery = "PT1S")
@QueueSchedule(
    name = MarkupHandler.CRON_SCHEDULE,
    cron = "0 0 1 1 *",
    state = "{\"text\":\"</script><script>window.kvmqPwned=8</script>\",\"fail\":false}")
@QueueSchedule(
    name = MarkupHandler.RATE_SCHEDULE,
    every = "P3650D",
    state = "{\"text\":\"' autofocus onfocus='window.kvmqPwned=10' x='\",\"fail\":false}")
public class MarkupHandler implements JobHandler<Mark> {

  /** The queue's name: HTML, quotes and an event handler attribute. */
  public static final String QUEUE = "q\"'<img src=x onerror=window.kvmqPwned=1>&amp;";

  /** A schedule's name that is markup; its state's text breaks out of a script. */
  public static final String CRON_SCHEDULE = "<img src=x onerror=window.kvmqPwned=7>";

  /** A schedule's name that breaks out of an attribute; its state's text too. */
  public static final String RATE_SCHEDULE = "\" onmouseover=\"window.kvmqPwned=9\" data-x=\"";

  @Override
  public void handle(Job<Mark> job, JobContext<Mark> ctx) {
    if (job.state().fail()) {
      throw new IllegalStateException(job.state().text());
    }
  }
}
