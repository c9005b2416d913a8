package dev.kvmq.it.runtime;

import jakarta.enterprise.context.RequestScoped;
import java.util.concurrent.atomic.AtomicInteger;

/** A request-scoped bean an observer calls: one instance per event. */
@RequestScoped
public class PerEvent {

  private static final AtomicInteger MADE = new AtomicInteger();

  private final int id = MADE.incrementAndGet();

  /**
   * @return which instance this is, counted from 1
   */
  public int id() {
    return id;
  }
}
