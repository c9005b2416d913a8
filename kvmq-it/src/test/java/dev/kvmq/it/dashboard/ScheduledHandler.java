package dev.kvmq.it.dashboard;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import dev.kvmq.jakarta.QueueSchedule;

/** A queue with one yearly schedule for the dashboard's schedule buttons; its jobs do nothing. */
@QueueHandler(value = ScheduledHandler.QUEUE, pollEvery = "PT1S")
@QueueSchedule(
    name = "new-year",
    cron = "0 0 1 1 *",
    zone = "Europe/Paris",
    state = "{\"text\":\"happy\",\"fail\":false}")
public class ScheduledHandler implements JobHandler<Mark> {

  /** The queue's name. */
  public static final String QUEUE = "scheduled";

  @Override
  public void handle(Job<Mark> job, JobContext<Mark> context) {}
}
