package dev.kvmq.it.virtual;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the handlers saw of their threads, for the test to read. */
@ApplicationScoped
public class ThreadLog {

  /**
   * One handler call.
   *
   * @param queue the queue
   * @param label the job's label
   * @param thread the thread's {@code toString()}
   * @param virtual {@code Thread.isVirtual()} of the thread
   * @param cdi whether a CDI bean was injected into the handler and answered
   * @param jndi whether {@code java:comp/DefaultManagedExecutorService} resolved on the thread
   * @param applicationLoader whether the thread's context class loader is the application's
   */
  public record Call(
      String queue,
      String label,
      String thread,
      boolean virtual,
      boolean cdi,
      boolean jndi,
      boolean applicationLoader) {}

  private final List<Call> calls = new CopyOnWriteArrayList<>();

  void add(Call call) {
    calls.add(call);
  }

  /**
   * @return the calls so far, oldest first
   */
  public List<Call> calls() {
    return List.copyOf(calls);
  }

  /**
   * Answers, to show that an injected bean works on the handler's thread.
   *
   * @return true
   */
  public boolean alive() {
    return true;
  }
}
