package dev.kvmq.it.support.request;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.inject.Inject;
import java.util.UUID;

/**
 * A handler of the stereotype's scope (@ApplicationScoped) that calls a {@code @RequestScoped}
 * bean.
 */
@QueueHandler(value = "wired", retries = 1, retryDelay = "PT0.05S")
public class WiredHandler implements JobHandler<Visit> {

  private final String id = "handler-" + UUID.randomUUID();

  @Inject Tally tally;
  @Inject Scratch scratch;

  /** Made by CDI. */
  public WiredHandler() {}

  @Override
  public void handle(Job<Visit> job, JobContext<Visit> context) {
    tally.call(new Tally.Call("wired", job.state().label(), context.attempt(), id, scratch.id()));
    if (context.attempt() <= job.state().failures()) {
      throw new IllegalStateException("attempt " + context.attempt() + " fails on purpose");
    }
  }
}
