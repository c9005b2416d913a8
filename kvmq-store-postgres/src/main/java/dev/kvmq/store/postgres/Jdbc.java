package dev.kvmq.store.postgres;

import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * JDBC plumbing shared by the store's paths: a unit of work on a borrowed connection and what its
 * attempt reached, how failures are classified (connection lost, may have committed), reading a row
 * as an entry, and quiet rollback, reset and close.
 *
 * <p><b>Locking.</b> None: stateless; an {@link Attempt} belongs to one call on one thread.
 */
final class Jdbc {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  private Jdbc() {}

  /** A unit of JDBC work on a borrowed connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c, Attempt attempt) throws SQLException;
  }

  /**
   * What one attempt reached: a connection failure after {@code commitSent} may have committed (an
   * error PostgreSQL reports means it did not).
   */
  static final class Attempt {
    boolean commitSent;
  }

  /**
   * Whether a failed attempt may have committed: only if its {@code COMMIT} was sent and the
   * failure is not an error PostgreSQL reported (after which it skips the {@code COMMIT}).
   */
  static boolean mayHaveCommitted(Attempt attempt, Exception e) {
    return attempt.commitSent
        && (!(e instanceof SQLException s)
            || s.getSQLState() == null
            || (isConnectionFailure(s) && !neverSent(s)));
  }

  /**
   * Whether the call failed before anything went to the server: SQLState 08003 ("connection does
   * not exist"), which the PostgreSQL driver raises when a call is made on a connection it had
   * already closed after an earlier failure (a pool that keeps such connections hands them out: a
   * {@code web.xml} {@code <data-source>} on WildFly does), before it writes to the socket. A
   * failure while sending or waiting has another SQLState (08006 and the like).
   */
  static boolean neverSent(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && s.getSQLState() != null) {
        return s.getSQLState().equals("08003");
      }
    }
    return false;
  }

  /** Connection classes (08), and the server shutting down or starting (57P01-57P03). */
  static boolean isConnectionFailure(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && s.getSQLState() != null) {
        String state = s.getSQLState();
        if (state.startsWith("08")
            || state.equals("57P01")
            || state.equals("57P02")
            || state.equals("57P03")) {
          return true;
        }
      }
    }
    return false;
  }

  static SQLException missingCounterRow() {
    return new SQLException(
        "the kvmq versionstamp sequence returned no row:" + " the schema was altered by hand",
        "55000");
  }

  /** " [SQLState X]" for messages, or nothing if the exception has none. */
  static String state(SQLException e) {
    return e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]";
  }

  static KvEntry entry(ResultSet rs) throws SQLException {
    byte[] key = rs.getBytes(1);
    try {
      return new KvEntry(Key.decode(key), rs.getBytes(2), rs.getLong(3));
    } catch (IllegalArgumentException e) {
      throw new SQLException(
          "a row of the kv table is not a valid kvmq entry (written by hand?): " + e.getMessage(),
          "XX001",
          e);
    }
  }

  /**
   * The encodings of {@code keys}, to bind as a {@code bytea[]} with {@code setObject} (in the
   * binary array format).
   */
  static byte[][] encoded(List<Key> keys) {
    byte[][] encoded = new byte[keys.size()][];
    for (int i = 0; i < encoded.length; i++) {
      encoded[i] = keys.get(i).encoded();
    }
    return encoded;
  }

  static void rollbackQuietly(Connection c) {
    try {
      if (!c.isClosed() && !c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "rollback after a failure failed too", e);
    }
  }

  static void resetAutoCommit(Connection c) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "resetting autocommit failed", e);
    }
  }

  static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "closing a connection failed", e);
    }
  }
}
