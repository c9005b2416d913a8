package dev.kvmq.it.wildfly;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.MissedRuns;
import dev.kvmq.it.support.app.Journal;
import dev.kvmq.jakarta.QueueHandler;
import dev.kvmq.jakarta.QueueSchedule;

/**
 * The handler of queue {@code ticks}, with a schedule every second that runs each missed slot (up
 * to 100, more than a restart of WildFly takes). Each run writes a {@code tick} fact to the
 * journal: the job's label is its state's, its detail {@code slot-epoch-ms,schedule}.
 */
@QueueHandler("ticks")
@QueueSchedule(
    name = "every-second",
    every = "PT1S",
    state = "{\"label\":\"tick\"}",
    missed = MissedRuns.Kind.RUN_EACH,
    missedLimit = 100)
public class TickHandler implements JobHandler<Tick> {

  @Override
  public void handle(Job<Tick> job, JobContext<Tick> context) {
    String slot = job.slot().map(t -> Long.toString(t.toEpochMilli())).orElse("-");
    Journal.add(
        "tick",
        job,
        context.attempt(),
        context.token(),
        slot + "," + job.schedule().orElse("-") + "," + job.state().label());
  }
}
