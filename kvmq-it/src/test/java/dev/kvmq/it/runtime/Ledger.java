package dev.kvmq.it.runtime;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the handlers and observers of the test WAR saw, for the tests to read. */
@ApplicationScoped
public class Ledger {

  private final List<String> lines = new CopyOnWriteArrayList<>();

  void add(String line) {
    lines.add(line);
  }

  /**
   * @return every line so far, in order
   */
  public List<String> lines() {
    return List.copyOf(lines);
  }
}
