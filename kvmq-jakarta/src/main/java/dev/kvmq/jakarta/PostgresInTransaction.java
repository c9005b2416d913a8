package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.PushResult;
import dev.kvmq.Queue;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.store.postgres.ConnectionStore;
import dev.kvmq.store.postgres.PostgresKvStore;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * A push in the JTA transaction on the PostgreSQL store: through a connection of {@code
 * kvmq.postgres.jta-datasource}, which the container enlists in the active transaction. Nothing is
 * notified in the transaction (PostgreSQL refuses to prepare a transaction that notified, and an XA
 * transaction with two resources is prepared): the workers are woken after the commit, by an
 * interposed synchronization; a wake-up lost to a crash right after the commit costs a poll
 * interval. Touched only when the PostgreSQL store is configured.
 */
final class PostgresInTransaction implements InTransactionPush {

  static final String KEY = "kvmq.postgres.jta-datasource";

  /** SQLState no_active_sql_transaction. */
  private static final String NO_TRANSACTION = "25P01";

  private final PostgresKvStore store;
  private final String jndiName;
  private volatile DataSource dataSource; // looked up on first use: bound late on some servers

  PostgresInTransaction(PostgresKvStore store, String jndiName) {
    this.store = store;
    this.jndiName = jndiName;
  }

  @Override
  public <S> List<Job<S>> pushAll(
      Queue<S> queue,
      List<S> states,
      JobOptions options,
      TransactionSynchronizationRegistry transactions) {
    try (Connection c = enlisted()) {
      ConnectionStore view = store.inTransaction(c, false);
      List<Job<S>> jobs = queue.withStore(view).pushAll(states, options);
      wakeAfterCommit(view, transactions);
      return jobs;
    } catch (SQLException e) {
      throw noConnection(queue, e);
    }
  }

  @Override
  public <S> PushResult<S> offer(
      Queue<S> queue,
      S state,
      JobOptions options,
      TransactionSynchronizationRegistry transactions) {
    try (Connection c = enlisted()) {
      ConnectionStore view = store.inTransaction(c, false);
      PushResult<S> result = queue.withStore(view).offer(state, options);
      wakeAfterCommit(view, transactions);
      return result;
    } catch (SQLException e) {
      throw noConnection(queue, e);
    }
  }

  /**
   * A connection of the JTA DataSource, checked to be enlisted: in a transaction block. A local
   * DataSource's enlisted connection is out of auto-commit mode; pgjdbc's XA connections open their
   * branch with {@code BEGIN} and still say auto-commit, so for those the database is asked.
   */
  private Connection enlisted() throws SQLException {
    Connection c = dataSource().getConnection();
    try {
      if (c.getAutoCommit() && !inTransactionBlock(c)) {
        throw new IllegalStateException(
            KEY
                + " \""
                + jndiName
                + "\" gave a connection in auto-commit mode inside a JTA transaction: it is not"
                + " enlisted, so it is not a transactional DataSource; nothing was pushed");
      }
      return c;
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /**
   * Whether the connection is in a transaction block: PostgreSQL refuses a savepoint outside one
   * (SQLState 25P01), and a savepoint released at once changes nothing inside one.
   */
  private static boolean inTransactionBlock(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SAVEPOINT kvmq_enlisted; RELEASE SAVEPOINT kvmq_enlisted");
      return true;
    } catch (SQLException e) {
      if (NO_TRANSACTION.equals(e.getSQLState())) {
        return false;
      }
      throw e;
    }
  }

  /** Wakes the workers once the transaction has committed (nothing is notified inside it). */
  private static void wakeAfterCommit(
      ConnectionStore view, TransactionSynchronizationRegistry transactions) {
    InTransactionPush.whenEnded(
        transactions,
        committed -> {
          if (committed) {
            view.afterCommit();
          }
        });
  }

  private KvStoreException noConnection(Queue<?> queue, SQLException e) {
    return new KvStoreException(
        "queue "
            + queue.name()
            + ": no connection from "
            + KEY
            + " \""
            + jndiName
            + "\" for a push in the transaction: "
            + e.getMessage()
            + "; nothing was pushed",
        e);
  }

  private DataSource dataSource() {
    DataSource ds = dataSource;
    if (ds == null) {
      try {
        ds = (DataSource) new InitialContext().lookup(jndiName);
      } catch (NamingException | ClassCastException e) {
        throw new IllegalStateException(
            KEY + " \"" + jndiName + "\" is not a DataSource in JNDI: " + e, e);
      }
      dataSource = ds;
    }
    return ds;
  }
}
