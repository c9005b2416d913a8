package dev.kvmq.it.schedule;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import dev.kvmq.jakarta.QueueSchedule;

/** A handler with a cron expression that is not one and a zone that does not exist. */
@QueueHandler("bad-schedules")
@QueueSchedule(name = "bad-cron", cron = "61 * * * *")
@QueueSchedule(name = "bad-zone", cron = "@daily", zone = "Mars/Olympus")
public class BadScheduleHandler implements JobHandler<Tick> {

  @Override
  public void handle(Job<Tick> job, JobContext<Tick> context) {
    throw new IllegalStateException("never deployed");
  }
}
