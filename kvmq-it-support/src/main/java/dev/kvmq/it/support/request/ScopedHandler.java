package dev.kvmq.it.support.request;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import java.util.UUID;

/**
 * A {@code @RequestScoped} handler (the scope on the class takes precedence over the stereotype's).
 */
@RequestScoped
@QueueHandler(value = "request-scoped", retries = 1, retryDelay = "PT0.05S")
public class ScopedHandler implements JobHandler<Visit> {

  private final String id = "handler-" + UUID.randomUUID();

  @Inject Tally tally;
  @Inject Scratch scratch;

  /** Made by CDI. */
  public ScopedHandler() {}

  @Override
  public void handle(Job<Visit> job, JobContext<Visit> context) {
    tally.call(
        new Tally.Call("request-scoped", job.state().label(), context.attempt(), id, scratch.id()));
    if (context.attempt() <= job.state().failures()) {
      throw new IllegalStateException("attempt " + context.attempt() + " fails on purpose");
    }
  }

  @PreDestroy
  void destroyed() {
    tally.destroyed(id);
  }
}
