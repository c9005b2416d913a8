package dev.kvmq.store.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Vacuums the kv table between autovacuum's visits, once this node has written enough keys.
 *
 * <p>Why: a queue deletes and rewrites rows at the rate it runs jobs (a job pushed, claimed and
 * completed writes about seven keys and leaves about four dead rows), and autovacuum visits a table
 * at most once per {@code autovacuum_naptime}, a server setting (1 min by default). At a few
 * thousand jobs a second the table then holds hundreds of thousands of dead rows between visits,
 * and every claim's index scan steps over the dead entries at the head of the {@code ready} range.
 * {@code PostgresBloatBench} measured a drain at 0.49x of a fresh table's after 1M jobs churned
 * with autovacuum alone, and at 1.17x right after a {@code VACUUM} of the same table: the dead rows
 * slowed it, not the table's size.
 *
 * <p>What: after every {@code everyKeys} keys this node's commits write (set or deleted), one
 * thread of the store's runs {@code VACUUM (SKIP_LOCKED)} on the kv table, on a connection of the
 * pool in auto-commit mode. At most one runs at a time per node, and one started while another
 * session (a node, autovacuum) vacuums the table is skipped at once by PostgreSQL. A vacuum takes
 * no lock that blocks reads or writes. A role that may not vacuum the table (PostgreSQL lets its
 * owner, a superuser, and from version 17 a role with the {@code MAINTAIN} privilege) is told once
 * in the log and leaves the table to autovacuum. A failed vacuum is logged at DEBUG and tried again
 * after the next {@code everyKeys}.
 *
 * <p><b>Locking.</b> {@link #wrote} is lock-free (an atomic counter, called on committing threads);
 * the thread's hand-off and the running statement are guarded by {@code monitor}.
 */
final class Vacuum {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** How long {@link #close} waits for a cancelled vacuum's thread to end. */
  private static final long CLOSE_MILLIS = 5_000;

  private final DataSource dataSource;
  private final Tables tables;
  private final ThreadFactory threads;
  private final long everyKeys;
  private final AtomicLong written = new AtomicLong();
  private final AtomicLong vacuums = new AtomicLong();
  private final Object monitor = new Object();
  private boolean requested; // guarded by monitor
  private boolean closed; // guarded by monitor
  private boolean refused; // guarded by monitor: the role may not vacuum the table
  private Thread thread; // guarded by monitor
  private Statement running; // guarded by monitor

  /**
   * @param everyKeys keys written between two vacuums; 0 for none
   */
  Vacuum(DataSource dataSource, Tables tables, ThreadFactory threads, long everyKeys) {
    this.dataSource = dataSource;
    this.tables = tables;
    this.threads = threads;
    this.everyKeys = everyKeys;
  }

  /**
   * This node's commit wrote {@code keys} keys: asks for a vacuum each time the count passes
   * another {@code everyKeys}. Returns at once and never throws (it runs after a commit).
   */
  void wrote(int keys) {
    if (everyKeys == 0 || keys == 0) {
      return;
    }
    long before = written.getAndAdd(keys);
    if (before / everyKeys == (before + keys) / everyKeys) {
      return;
    }
    synchronized (monitor) {
      if (closed || refused) {
        return;
      }
      requested = true;
      if (thread == null && !startThread()) {
        return;
      }
      monitor.notifyAll();
    }
  }

  /** The vacuums this store ran to their end. */
  long vacuums() {
    return vacuums.get();
  }

  /** Whether this store's vacuum thread runs (it starts at the first vacuum asked for). */
  boolean hasThread() {
    synchronized (monitor) {
      return thread != null;
    }
  }

  /** Whether the store found that its role may not vacuum the table, and stopped trying. */
  boolean refused() {
    synchronized (monitor) {
      return refused;
    }
  }

  /** Stops the thread: a vacuum under way is cancelled (PostgreSQL rolls its last step back). */
  void close() {
    Thread t;
    synchronized (monitor) {
      closed = true;
      monitor.notifyAll();
      t = thread;
      if (running != null) {
        try {
          running.cancel();
        } catch (SQLException e) {
          LOG.log(Level.DEBUG, tables + ": could not cancel the running VACUUM", e);
        }
      }
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(CLOSE_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Starts the thread; false (logged, and no more tries) if the factory makes none. */
  private boolean startThread() {
    Thread t;
    try {
      t = threads.newThread(this::run);
      if (t != null) {
        t.start();
      }
    } catch (RuntimeException e) {
      t = null;
      LOG.log(Level.WARNING, tables + ": the thread factory failed to make the vacuum thread", e);
    }
    if (t == null) {
      LOG.log(
          Level.WARNING,
          tables + ": no vacuum thread; the kv table is left to autovacuum (see vacuumEvery)");
      refused = true;
      return false;
    }
    thread = t;
    return true;
  }

  private void run() {
    try {
      while (awaitRequest()) {
        vacuumOnce();
      }
    } finally {
      synchronized (monitor) {
        if (thread == Thread.currentThread()) {
          thread = null; // the next request starts another
        }
      }
    }
  }

  /** Waits for a request; false once the store is closing. */
  private boolean awaitRequest() {
    synchronized (monitor) {
      while (!requested && !closed) {
        try {
          monitor.wait();
        } catch (InterruptedException e) {
          closed = true;
        }
      }
      requested = false;
      return !closed;
    }
  }

  private void vacuumOnce() {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true); // VACUUM can't run in a transaction block
      if (!mayVacuum(c)) {
        LOG.log(
            Level.INFO,
            tables
                + ": this role may not VACUUM the kv table (it is not its owner), so the table is"
                + " left to autovacuum; make the role the owner (or, on PostgreSQL 17, GRANT"
                + " MAINTAIN), or turn this off with vacuumEvery(0)");
        synchronized (monitor) {
          refused = true;
        }
        return;
      }
      try (Statement s = c.createStatement()) {
        synchronized (monitor) {
          if (closed) {
            return;
          }
          running = s;
        }
        try {
          s.execute("VACUUM (SKIP_LOCKED) " + tables.kv);
        } finally {
          synchronized (monitor) {
            running = null;
          }
        }
        vacuums.incrementAndGet();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.log(
          Level.DEBUG,
          tables + ": VACUUM of the kv table failed; tried again after more writes",
          e);
    }
  }

  /**
   * Whether the connection's role may vacuum the kv table: a member of its owner (a superuser is),
   * or on PostgreSQL 17 and later a role with the {@code MAINTAIN} privilege on it.
   */
  private boolean mayVacuum(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_has_role(c.relowner, 'USAGE') OR CASE WHEN"
                + " current_setting('server_version_num')::int >= 170000 THEN"
                + " has_table_privilege(c.oid, 'MAINTAIN') ELSE false END"
                + " FROM pg_class c WHERE c.oid = to_regclass(?)")) {
      ps.setString(1, tables.kv);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }
}
