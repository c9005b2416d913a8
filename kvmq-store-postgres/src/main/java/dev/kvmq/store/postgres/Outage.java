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
    String what = operation + " failed: " + e.getMessage();
    if (failure.compareAndSet(null, what)) {
      LOG.log(
          Level.WARNING,
          subject + ": " + what + " (further failures are not logged until it works again)",
          e);
    }
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
