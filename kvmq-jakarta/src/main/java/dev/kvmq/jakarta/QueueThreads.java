package dev.kvmq.jakarta;

import jakarta.enterprise.concurrent.ManagedThreadFactory;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import javax.naming.NameNotFoundException;
import javax.naming.NamingException;

/**
 * A queue's own threads: the {@link ManagedThreadFactory} that its {@code
 * QueueHandler#threadFactory()} (or {@code kvmq.queue.NAME.thread-factory}) names in JNDI, such as
 * one an application declares on Jakarta EE 11 with {@code @ManagedThreadFactoryDefinition(name =
 * "java:app/concurrent/virtual", virtual = true)}. The queue's worker then runs on a pool of its
 * own made from that factory, sized to the queue's concurrency and one more thread for its passes
 * and lease renewals.
 *
 * <p>kvmq compiles against Jakarta EE 10 and Java 17: it does not ask for virtual threads itself.
 * It takes the factory's threads as they come and tells, once per queue at start, whether they are
 * virtual ({@code Thread.isVirtual()}, called reflectively where the JVM has it). A server may
 * ignore {@code virtual = true} (the specification allows it, as does a JVM older than 21): the
 * queue then runs on platform threads of that factory, as many as with kvmq's own pool, and the log
 * line says so.
 *
 * @param jndiName the factory's JNDI name
 * @param source where the name came from, for messages: {@code @QueueHandler(threadFactory)} or the
 *     configuration key
 */
record QueueThreads(String jndiName, String source) {

  /** {@code Thread.isVirtual()}, or null on a JVM without virtual threads (before 21). */
  private static final Method IS_VIRTUAL = isVirtualMethod();

  /**
   * Checks a setting's value.
   *
   * @param value the name as given, stripped
   * @return why it is not a JNDI name, or null if it may be one
   */
  static String problem(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isWhitespace(c) || Character.isISOControl(c)) {
        return "\"" + value + "\" is not a JNDI name (it has white space or control characters)";
      }
    }
    return null;
  }

  /**
   * Looks the factory up.
   *
   * @param queue the queue's name, for the message
   * @param jndi looks a name up ({@code new InitialContext()::lookup} in the server)
   * @return the factory
   * @throws NotBound naming the queue, the setting and the name, if nothing is bound at a {@code
   *     java:} name (yet: the server binds the application's own definitions after CDI has started)
   * @throws IllegalStateException naming them, if nothing is bound at another name (a server
   *     resource, which exists before the application starts), if the object is not a {@link
   *     ManagedThreadFactory}, or if the look-up fails otherwise
   */
  ManagedThreadFactory lookUp(String queue, Jndi jndi) {
    Object found;
    try {
      found = jndi.lookup(jndiName);
    } catch (NamingException e) {
      if (e instanceof NameNotFoundException || e.getRootCause() instanceof NameNotFoundException) {
        if (jndiName.startsWith("java:")) {
          // an application's own definition (java:app/..., java:global/...) may be bound later
          throw new NotBound(what(queue) + " is not bound in JNDI", source, e);
        }
        // a server resource (asadmin create-managed-thread-factory) is there before the app
        throw new IllegalStateException(what(queue) + " is not bound in JNDI", e);
      }
      throw new IllegalStateException(what(queue) + " can't be looked up: " + e, e);
    }
    if (found instanceof ManagedThreadFactory f) {
      return f;
    }
    throw new IllegalStateException(
        what(queue)
            + " is a "
            + (found == null ? "null" : found.getClass().getName())
            + ", not a jakarta.enterprise.concurrent.ManagedThreadFactory");
  }

  private String what(String queue) {
    return "queue \"" + queue + "\": " + source + " \"" + jndiName + "\"";
  }

  /**
   * A pool of the factory's threads for one queue's worker, which reports once, when it makes its
   * first thread, whether that thread is virtual.
   *
   * @param queue the queue's name, for the report
   * @param factory the looked-up factory
   * @param concurrency the queue's concurrency
   * @param report gets the one line
   * @return the pool, with one thread started (so the report is made now)
   */
  ScheduledThreadPoolExecutor pool(
      String queue, ThreadFactory factory, int concurrency, Consumer<String> report) {
    AtomicBoolean reported = new AtomicBoolean();
    ThreadFactory reporting =
        task -> {
          Thread t = factory.newThread(task);
          if (t != null && reported.compareAndSet(false, true)) {
            report.accept(describe(queue, concurrency + 1, isVirtual(t)));
          }
          return t;
        };
    ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(concurrency + 1, reporting);
    pool.setRemoveOnCancelPolicy(true);
    pool.prestartCoreThread();
    return pool;
  }

  /** The start line of a queue with its own threads. */
  String describe(String queue, int threads, Optional<Boolean> virtual) {
    String kind =
        virtual.isEmpty()
            ? "platform threads (this JVM has no virtual threads)"
            : virtual.get()
                ? "virtual threads"
                : "platform threads (the factory made no virtual thread; see docs/jakarta.md)";
    return "kvmq: queue \""
        + queue
        + "\" runs its handlers on up to "
        + threads
        + " "
        + kind
        + " of "
        + jndiName
        + " ("
        + source
        + ")";
  }

  /**
   * Tells whether a thread is virtual.
   *
   * @param t the thread
   * @return {@code t.isVirtual()}, or empty on a JVM before 21, which has no virtual threads
   */
  static Optional<Boolean> isVirtual(Thread t) {
    if (IS_VIRTUAL == null) {
      return Optional.empty();
    }
    try {
      return Optional.of((Boolean) IS_VIRTUAL.invoke(t));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Thread.isVirtual() failed. Indicates a bug.", e);
    }
  }

  private static Method isVirtualMethod() {
    try {
      return Thread.class.getMethod("isVirtual");
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  /** Looks a name up in JNDI. */
  @FunctionalInterface
  interface Jndi {
    /**
     * @param name the JNDI name
     * @return what is bound there
     * @throws NamingException if the look-up fails
     */
    Object lookup(String name) throws NamingException;
  }
}
