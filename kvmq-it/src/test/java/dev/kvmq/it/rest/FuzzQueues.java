package dev.kvmq.it.rest;

import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.List;

/**
 * Opens the fuzzed queues at start, by injection only: no handler, so nothing but the REST requests
 * changes them and a refused request's "no write" can be checked exactly.
 */
@ApplicationScoped
public class FuzzQueues {

  @Inject
  @QueueName("fuzz")
  JobQueue<FuzzState> fuzz;

  @Inject
  @QueueName("fuzz-names")
  JobQueue<List<String>> names;

  void open(@Observes @Initialized(ApplicationScoped.class) Object start) {
    fuzz.counts();
    names.counts();
  }
}
