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

  /** A connection of the JTA DataSource, checked to be enlisted (not in auto-commit mode). */
  private Connection enlisted() throws SQLException {
    Connection c = dataSource().getConnection();
    try {
      if (c.getAutoCommit()) {
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
