package dev.kvmq.it.schedule;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.MissedRuns;
import dev.kvmq.jakarta.QueueHandler;
import dev.kvmq.jakarta.QueueSchedule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The handler of queue {@code ticks}, with a schedule every second that runs each missed slot (up
 * to 100, more than a restart takes) and a yearly one for the REST checks. Each run appends {@code
 * slot jobId schedule label node} to the file that the system property {@code kvmq.it.ticks} names
 * (the test reads it from outside the server; several servers append to one file, one short line
 * per write).
 */
@QueueHandler("ticks")
@QueueSchedule(
    name = "every-second",
    every = "PT1S",
    state = "{\"label\":\"tick\"}",
    missed = MissedRuns.Kind.RUN_EACH,
    missedLimit = 100)
@QueueSchedule(
    name = "yearly",
    cron = "0 0 1 1 *",
    zone = "Europe/Paris",
    state = "{\"label\":\"new year\"}")
public class TickHandler implements JobHandler<Tick> {

  @Override
  public void handle(Job<Tick> job, JobContext<Tick> context) {
    String line =
        job.slot().map(t -> Long.toString(t.toEpochMilli())).orElse("-")
            + " "
            + job.id()
            + " "
            + job.schedule().orElse("-")
            + " "
            + job.state().label().replace(' ', '_')
            + " "
            + System.getProperty("kvmq.it.node", "-")
            + "\n";
    try {
      Files.writeString(
          Path.of(System.getProperty("kvmq.it.ticks")),
          line,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
