package dev.kvmq.store.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The one long-lived {@code LISTEN} connection of a store, on a thread of its own.
 *
 * <p>It connects, listens on the store's channel, hands each notification's payload to the store,
 * and reconnects with a growing pause after any failure. After every (re)connect it reports {@code
 * null} (wake everyone): notifications sent while it was not listening are lost, and a spurious
 * wake-up is allowed where a missed one is not.
 */
final class ChangeListener implements Runnable {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** How long one wait for notifications lasts before the connection is checked. */
  private static final int POLL_MILLIS = 250;

  /** How often an idle connection is checked to be alive. */
  private static final long VALIDATE_NANOS = TimeUnit.SECONDS.toNanos(10);

  private static final long FIRST_PAUSE_MILLIS = 50;
  private static final long MAX_PAUSE_MILLIS = 5_000;

  private final DataSource dataSource;
  private final Tables tables;
  private final Runnable schemaReady;
  private final Consumer<String> payloads;
  private final Outage outage;
  private final Thread thread;
  private final Object monitor = new Object();
  private volatile boolean stopping;
  private volatile boolean listening;
  private Connection connection; // guarded by monitor

  /**
   * @param payloads receives each payload, or null for "wake everyone"; runs on the listener thread
   */
  ChangeListener(
      DataSource dataSource,
      Tables tables,
      Runnable schemaReady,
      Consumer<String> payloads,
      Outage outage,
      ThreadFactory threads) {
    this.dataSource = dataSource;
    this.tables = tables;
    this.schemaReady = schemaReady;
    this.payloads = payloads;
    this.outage = outage;
    this.thread = threads.newThread(this);
    if (thread == null) {
      throw new IllegalStateException("the thread factory refused to make the listener thread");
    }
  }

  void start() {
    thread.start();
  }

  /** Tells whether the listener currently holds a working LISTEN connection. */
  boolean isListening() {
    return listening;
  }

  /**
   * Stops the thread. It leaves its wait for notifications within {@link #POLL_MILLIS} and gives
   * its connection back to the pool without its LISTEN; only a thread that has not ended by then (a
   * connection stuck in the network) has its connection aborted. Aborting at once would make a pool
   * such as HikariCP log the aborted connection as broken, with a stack trace, in the application's
   * log at every shutdown.
   */
  void stop() {
    stopping = true;
    synchronized (monitor) {
      monitor.notifyAll();
    }
    if (Thread.currentThread() == thread) {
      return;
    }
    try {
      thread.join(POLL_MILLIS + 500);
      if (thread.isAlive()) {
        synchronized (monitor) {
          if (connection != null) {
            try {
              connection.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
              LOG.log(Level.DEBUG, "aborting the listener connection failed; it will time out", e);
            }
          }
        }
        thread.join(TimeUnit.SECONDS.toMillis(5));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void run() {
    long pause = FIRST_PAUSE_MILLIS;
    while (!stopping) {
      try {
        listenOnce();
        pause = FIRST_PAUSE_MILLIS;
      } catch (SQLException | RuntimeException e) {
        listening = false;
        if (stopping) {
          break;
        }
        outage.failed("listening for changes on channel " + tables.channel, e);
        waitQuietly(pause);
        pause = Math.min(pause * 2, MAX_PAUSE_MILLIS);
      }
    }
    listening = false;
  }

  /** One connection's life: returns when stopping, throws when the connection fails. */
  private void listenOnce() throws SQLException {
    schemaReady.run(); // the channel is named after the table's schema, known once it is ready
    Connection c = dataSource.getConnection();
    try {
      synchronized (monitor) {
        if (stopping) {
          return;
        }
        connection = c;
      }
      PGConnection pg = unwrap(c);
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      try (Statement s = c.createStatement()) {
        s.execute(tables.listenStatement());
      }
      // Wake everyone first: notifications sent while not listening are lost.
      payloads.accept(null);
      listening = true;
      outage.succeeded();
      long lastCheck = System.nanoTime();
      while (!stopping) {
        PGNotification[] got = pg.getNotifications(POLL_MILLIS);
        if (got != null && got.length > 0) {
          for (PGNotification n : got) {
            payloads.accept(n.getParameter());
          }
          lastCheck = System.nanoTime();
        } else if (System.nanoTime() - lastCheck > VALIDATE_NANOS) {
          if (!c.isValid(5)) {
            throw new SQLException("the LISTEN connection is no longer valid", "08006");
          }
          lastCheck = System.nanoTime();
        }
      }
    } finally {
      listening = false;
      synchronized (monitor) {
        connection = null;
      }
      release(c);
    }
  }

  private static PGConnection unwrap(Connection c) throws SQLException {
    if (!c.isWrapperFor(PGConnection.class)) {
      throw new SQLException(
          "the DataSource's connections are not PostgreSQL connections"
              + " (they don't unwrap to org.postgresql.PGConnection): LISTEN/NOTIFY needs the"
              + " pgjdbc driver; pass listenerDataSource(...) if the pool hides it");
    }
    return c.unwrap(PGConnection.class);
  }

  /** Returns the connection to its pool without its LISTEN, so that a pool can reuse it. */
  private void release(Connection c) {
    try {
      if (!c.isClosed()) {
        try (Statement s = c.createStatement()) {
          s.execute("UNLISTEN *");
        }
      }
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "UNLISTEN on a failed listener connection failed", e);
    }
    try {
      c.close();
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "closing a listener connection failed", e);
    }
  }

  private void waitQuietly(long millis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    synchronized (monitor) {
      long left;
      while (!stopping && (left = deadline - System.nanoTime()) > 0) {
        try {
          TimeUnit.NANOSECONDS.timedWait(monitor, left);
        } catch (InterruptedException e) {
          stopping = true;
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
