package dev.kvmq.it.control;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** What the control handlers did, per job label, in order ({@link ChoreServlet} reads it). */
@ApplicationScoped
public class Chores {

  private final Map<String, List<String>> seen = new ConcurrentHashMap<>();

  /**
   * Records a step of the job of this label.
   *
   * @param label the job's label
   * @param step what happened
   */
  public void saw(String label, String step) {
    List<String> steps = seen.computeIfAbsent(label, k -> new ArrayList<>());
    synchronized (steps) {
      steps.add(step);
    }
  }

  /**
   * The steps of the job of this label so far.
   *
   * @param label the job's label
   * @return a copy, oldest first
   */
  public List<String> of(String label) {
    List<String> steps = seen.getOrDefault(label, List.of());
    synchronized (steps) {
      return List.copyOf(steps);
    }
  }
}
