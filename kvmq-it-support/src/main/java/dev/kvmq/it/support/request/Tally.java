package dev.kvmq.it.support.request;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** What the handlers and the request-scoped beans saw, across calls. */
@ApplicationScoped
public class Tally {

  /**
   * One handler call.
   *
   * @param queue the handler's queue
   * @param label the job's label
   * @param attempt the attempt's number
   * @param handler the id of the handler instance that ran it
   * @param scratch the id of the {@link Scratch} it called
   */
  public record Call(String queue, String label, int attempt, String handler, String scratch) {}

  private final List<Call> calls = new ArrayList<>();
  private final Set<String> destroyed = ConcurrentHashMap.newKeySet();

  /** Made by CDI. */
  public Tally() {}

  public synchronized void call(Call call) {
    calls.add(call);
  }

  public synchronized List<Call> calls(String queue) {
    return calls.stream().filter(c -> c.queue().equals(queue)).toList();
  }

  /**
   * @param id the id of a request-scoped instance ({@link Scratch}, {@link ScopedHandler}) whose
   *     {@code @PreDestroy} ran
   */
  public void destroyed(String id) {
    destroyed.add(id);
  }

  public Set<String> destroyed() {
    return Set.copyOf(destroyed);
  }
}
