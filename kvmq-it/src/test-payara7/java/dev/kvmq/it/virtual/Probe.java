package dev.kvmq.it.virtual;

import dev.kvmq.Job;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/** Records what a handler's thread is and carries. */
final class Probe {

  private Probe() {}

  static void record(String queue, ThreadLog log, Job<Fetch> job, Class<?> handler) {
    Thread t = Thread.currentThread();
    boolean jndi;
    try {
      jndi = new InitialContext().lookup("java:comp/DefaultManagedExecutorService") != null;
    } catch (NamingException e) {
      jndi = false;
    }
    log.add(
        new ThreadLog.Call(
            queue,
            job.state().label(),
            t.toString(),
            isVirtual(t),
            log.alive(),
            jndi,
            t.getContextClassLoader() == handler.getClassLoader()));
  }

  /** {@code Thread.isVirtual()}: these tests compile for Java 17, and run on 21+. */
  static boolean isVirtual(Thread t) {
    try {
      return (Boolean) Thread.class.getMethod("isVirtual").invoke(t);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Payara 7 runs on Java 21+, which has Thread.isVirtual", e);
    }
  }
}
