package dev.kvmq.it.flow;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the handler of the {@code grouped} queue saw, and the gates that hold each of its jobs until
 * the test opens them: how many jobs of each group ran at once, at most, as the handler counted
 * them (in on entry, out on exit).
 */
@ApplicationScoped
public class Gates {

  /** How long a handler waits for its gate before it gives up (so that nothing hangs). */
  static final long GIVE_UP_SECONDS = 60;

  private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
  private final Map<String, Integer> running = new ConcurrentHashMap<>();
  private final Map<String, Integer> most = new ConcurrentHashMap<>();
  private final List<String> started = new CopyOnWriteArrayList<>();
  private final List<String> finished = new CopyOnWriteArrayList<>();
  private int runningAll;
  private int mostAll;

  /**
   * Counts a job of {@code group} in, waits for its gate, and counts it out.
   *
   * @param group the job's group, or {@code ""} for none
   * @param label the job's label
   * @throws InterruptedException if interrupted while waiting
   */
  void pass(String group, String label) throws InterruptedException {
    synchronized (this) {
      int now = running.merge(group, 1, Integer::sum);
      most.merge(group, now, Math::max);
      runningAll++;
      mostAll = Math.max(mostAll, runningAll);
      started.add(label);
    }
    try {
      if (!gate(label).await(GIVE_UP_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the gate of " + label + " was never opened");
      }
    } finally {
      synchronized (this) {
        running.merge(group, -1, Integer::sum);
        runningAll--;
        finished.add(label);
      }
    }
  }

  private CountDownLatch gate(String label) {
    return gates.computeIfAbsent(label, l -> new CountDownLatch(1));
  }

  /**
   * Opens a job's gate: its handler returns.
   *
   * @param label the job's label
   */
  public void open(String label) {
    gate(label).countDown();
  }

  /**
   * @return the labels of the jobs whose handler started, in order
   */
  public List<String> started() {
    return List.copyOf(started);
  }

  /**
   * @return the labels of the jobs whose handler returned, in order
   */
  public List<String> finished() {
    return List.copyOf(finished);
  }

  /**
   * @param group a group ({@code ""} for none)
   * @return how many of its jobs are in the handler now
   */
  public synchronized int running(String group) {
    return running.getOrDefault(group, 0);
  }

  /**
   * @param group a group ({@code ""} for none)
   * @return the most of its jobs that were in the handler at once
   */
  public synchronized int most(String group) {
    return most.getOrDefault(group, 0);
  }

  /**
   * @return the most jobs of any group that were in the handler at once
   */
  public synchronized int mostOfAll() {
    return mostAll;
  }
}
