package dev.kvmq.store.postgres;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Tracks whether something that talks to the database is failing, and logs once when an outage
 * starts and once when it ends: never once per failed call.
 */
final class Outage {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  private final String subject;

  /** The failure that started the current outage, or null while healthy. */
  private final AtomicReference<String> failure = new AtomicReference<>();

  /**
   * @param subject what fails, for the log ("PostgreSQL store kvmq_kv")
   */
  Outage(String subject) {
    this.subject = subject;
  }

  /** Records a failure; logs it if it starts an outage. */
  void failed(String operation, Exception e) {
    String what = operation + " failed: " + describe(e);
    if (failure.compareAndSet(null, what)) {
      LOG.log(
          Level.WARNING,
          subject + ": " + what + " (further failures are not logged until it works again)",
          e);
    }
  }

  /**
   * What a failure says: its message, or, when it has none (a pool's connection proxy throws an
   * {@link java.lang.reflect.UndeclaredThrowableException} around the driver's exception, whose own
   * message is null), the first message among its causes, with the cause's type. The type alone
   * when no cause has a message.
   */
  static String describe(Throwable e) {
    if (e.getMessage() != null) {
      return e.getMessage();
    }
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      if (c.getMessage() != null) {
        String state = c instanceof java.sql.SQLException sql ? Jdbc.state(sql) : "";
        return c.getClass().getName() + ": " + c.getMessage() + state;
      }
    }
    return e.getClass().getName();
  }

  /** Records a success; logs the end of an outage. */
  void succeeded() {
    String was = failure.get();
    if (was != null && failure.compareAndSet(was, null)) {
      LOG.log(Level.INFO, subject + " works again");
    }
  }

  /** Tells whether the latest attempt failed. */
  boolean isDown() {
    return failure.get() != null;
  }

  /** The failure that started the current outage, or null. */
  String failure() {
    return failure.get();
  }
}
