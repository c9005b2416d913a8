package dev.kvmq.it.queue;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** What the handlers and observers of the test WAR saw, for the tests to read. */
@ApplicationScoped
public class Recorder {

  /**
   * One handler run.
   *
   * @param queue the queue
   * @param label the job's label
   * @param jobId the job's id
   * @param attempt the attempt number
   * @param at when the handler started
   * @param thread the thread's name
   * @param managed whether the thread is a container-managed one
   * @param jndi whether {@code java:comp/DefaultManagedExecutorService} resolved inside the handler
   * @param cdi whether a CDI bean was injected into the handler
   * @param succeeded whether the run returned normally
   */
  public record Run(
      String queue,
      String label,
      String jobId,
      int attempt,
      Instant at,
      String thread,
      boolean managed,
      boolean jndi,
      boolean cdi,
      boolean succeeded) {}

  /**
   * One CDI event.
   *
   * @param kind {@code completed}, {@code failed}, {@code failed-dead}
   * @param async whether it came through {@code @ObservesAsync}
   * @param queued the queue given by the event
   * @param jobId the job's id
   * @param label the job's label
   */
  public record Seen(String kind, boolean async, String queued, String jobId, String label) {}

  private final List<Run> runs = new CopyOnWriteArrayList<>();
  private final List<Seen> events = new CopyOnWriteArrayList<>();
  private final Set<String> healed = ConcurrentHashMap.newKeySet();
  private final Map<String, Boolean> filtered = new ConcurrentHashMap<>();
  private final CountDownLatch together = new CountDownLatch(2);

  /**
   * A handler of a {@code together-} job has started: it waits up to 20 s for the other one to
   * start, so that both are running at once exactly when the worker runs two jobs together.
   *
   * @return true if both started within the wait; false if this one ran alone
   * @throws InterruptedException if the handler's thread is interrupted while it waits
   */
  boolean meet() throws InterruptedException {
    together.countDown();
    return together.await(20, TimeUnit.SECONDS);
  }

  void run(Run run) {
    runs.add(run);
  }

  void event(Seen seen) {
    events.add(seen);
  }

  void filtered(String queue) {
    filtered.put(queue, true);
  }

  /**
   * @return every handler run so far, in order
   */
  public List<Run> runs() {
    return List.copyOf(runs);
  }

  /**
   * @param label a label
   * @return the runs of jobs with that label
   */
  public List<Run> runs(String label) {
    return runs.stream().filter(r -> r.label().equals(label)).toList();
  }

  /**
   * @param label a label
   * @return the successful runs with that label
   */
  public List<Run> succeeded(String label) {
    return runs(label).stream().filter(Run::succeeded).toList();
  }

  /**
   * @return every event seen so far
   */
  public List<Seen> events() {
    return List.copyOf(events);
  }

  /**
   * @return the queues whose {@code @OnQueue} observer fired
   */
  public Set<String> filteredQueues() {
    return Set.copyOf(filtered.keySet());
  }

  /**
   * Makes jobs with this label succeed from now on.
   *
   * @param label the label
   */
  public void heal(String label) {
    healed.add(label);
  }

  boolean isHealed(String label) {
    return healed.contains(label);
  }
}
