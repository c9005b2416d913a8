package dev.kvmq.store.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;

/**
 * Sends a store's change notifications ({@code NOTIFY}) after its commits, in transactions of their
 * own, on a thread of its own.
 *
 * <p>Why not in the committing transaction: PostgreSQL serializes the commits of all transactions
 * that notify, on one lock held until the commit is flushed, so commits that notify can't share a
 * flush with each other. Here a commit's payloads wait in a set (the same payload once), and the
 * thread sends what gathered in one transaction with {@code synchronous_commit} off: it holds that
 * lock only briefly, and a notification needs no durability. A notification leaves after its commit
 * is visible, never before; one can be lost if the process dies in between, or if the database
 * fails several times in a row: other nodes then see the change at their next poll (notifications
 * are wake-up hints, see {@code KvStore.subscribe}).
 */
final class Notifier {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** Tries of one batch before it is given up (logged). */
  private static final int TRIES = 3;

  private static final long PAUSE_MILLIS = 200;

  /** How long {@link #close} waits for the last notifications to go out. */
  private static final long CLOSE_MILLIS = 5_000;

  private final DataSource dataSource;
  private final Tables tables;
  private final ThreadFactory threads;
  private final String nodeId;
  private final String everyone;
  private final int maxPayloads;
  private final Object monitor = new Object();

  /** Logs once when sending starts failing and once when it works again, not per batch. */
  private final Outage outage;

  private Set<String> pending = new LinkedHashSet<>(); // guarded by monitor
  private Thread thread; // guarded by monitor
  private boolean closed; // guarded by monitor

  /**
   * @param nodeId what every payload starts with, before a colon: the sending store
   * @param everyone the prefix that wakes every subscriber of every node
   * @param maxPayloads the most distinct prefixes one notification transaction sends; more go out
   *     as {@code everyone}
   */
  Notifier(
      DataSource dataSource,
      Tables tables,
      ThreadFactory threads,
      String nodeId,
      String everyone,
      int maxPayloads) {
    this.dataSource = dataSource;
    this.tables = tables;
    this.threads = threads;
    this.nodeId = nodeId;
    this.everyone = everyone;
    this.maxPayloads = maxPayloads;
    this.outage =
        new Outage("PostgreSQL store " + tables.describe() + " (node " + nodeId + ", notifier)");
  }

  /**
   * Queues the announced prefixes of a commit to send; returns at once and never throws (it runs
   * after a commit, whose outcome must not look like a failure). Starts the thread on first use,
   * and again if it ended; if the thread factory makes no thread, the notifications are dropped
   * with a warning, and other nodes see the changes at their next poll.
   */
  void send(Collection<String> prefixes) {
    if (prefixes.isEmpty()) {
      return;
    }
    synchronized (monitor) {
      if (closed) {
        return;
      }
      pending.addAll(prefixes);
      if (thread == null && !startThread()) {
        pending.clear();
        return;
      }
      monitor.notifyAll();
    }
  }

  /** Starts the thread; false (logged) if the factory makes none. Holds the monitor. */
  private boolean startThread() {
    Thread t;
    try {
      t = threads.newThread(this::run);
      if (t != null) {
        t.start();
      }
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING,
          tables
              + ": the thread factory failed to make the notifier thread; change"
              + " notifications to other nodes are dropped, which see the changes at their next poll",
          e);
      return false;
    }
    if (t == null) {
      LOG.log(
          Level.WARNING,
          tables
              + ": the thread factory made no notifier thread; change notifications"
              + " to other nodes are dropped, which see the changes at their next poll");
      return false;
    }
    thread = t;
    return true;
  }

  /** Sends what is queued, then stops the thread (waiting a few seconds at most). */
  void close() {
    Thread t;
    synchronized (monitor) {
      closed = true;
      monitor.notifyAll();
      t = thread;
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(CLOSE_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void run() {
    try {
      loop();
    } finally {
      synchronized (monitor) {
        if (thread == Thread.currentThread()) {
          thread = null; // the next send starts another
        }
      }
    }
  }

  private void loop() {
    while (true) {
      Set<String> batch;
      synchronized (monitor) {
        while (pending.isEmpty() && !closed) {
          try {
            monitor.wait();
          } catch (InterruptedException e) {
            closed = true;
          }
        }
        if (pending.isEmpty()) {
          return;
        }
        batch = pending;
        pending = new LinkedHashSet<>();
      }
      deliver(batch.size() > maxPayloads ? Set.of(everyone) : batch);
    }
  }

  private void deliver(Set<String> batch) {
    for (int tried = 1; ; tried++) {
      try {
        notifyNow(batch);
        outage.succeeded();
        return;
      } catch (SQLException | RuntimeException e) {
        if (tried == TRIES || isClosed()) {
          // once per outage: during one, every failed commit hands its notifications over
          outage.failed(
              "sending "
                  + batch.size()
                  + " change notification(s), "
                  + tried
                  + " tries (other nodes see those changes at their next poll),",
              e);
          return;
        }
        pause();
      }
    }
  }

  /**
   * One transaction, one round trip: {@code synchronous_commit} off, the notifications, {@code
   * COMMIT}.
   */
  private void notifyNow(Set<String> batch) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(tables.notifyAndEnd)) {
        ps.setString(1, tables.channel);
        ps.setArray(
            2,
            c.createArrayOf(
                "text", batch.stream().map(p -> nodeId + ":" + p).toArray(String[]::new)));
        ps.execute();
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException ignored) {
          e.addSuppressed(ignored);
        }
        throw e;
      } finally {
        try {
          c.setAutoCommit(true);
        } catch (SQLException ignored) {
          // the connection is broken; closing it gives it back (or drops it)
        }
      }
    }
  }

  private boolean isClosed() {
    synchronized (monitor) {
      return closed;
    }
  }

  private void pause() {
    synchronized (monitor) {
      if (!closed) {
        try {
          monitor.wait(PAUSE_MILLIS);
        } catch (InterruptedException e) {
          closed = true;
        }
      }
    }
  }
}
