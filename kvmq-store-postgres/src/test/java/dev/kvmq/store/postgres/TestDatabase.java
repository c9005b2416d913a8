package dev.kvmq.store.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/** A real PostgreSQL with a pool: the test JVM's one, shared through {@link PostgresExtension}. */
final class TestDatabase implements AutoCloseable {

  private static final AtomicInteger SCHEMAS = new AtomicInteger();

  private final EmbeddedPostgres postgres;
  private final TestPool pool;

  private TestDatabase(EmbeddedPostgres postgres) {
    this.postgres = postgres;
    this.pool = new TestPool(postgres.getPostgresDatabase());
  }

  /** Starts a throwaway PostgreSQL on a free port. */
  static TestDatabase start() {
    try {
      // prepared transactions: PostgresXaBranchTest commits XA branches in two phases
      return new TestDatabase(
          EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "8").start());
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start", e);
    }
  }

  /** Starts (or restarts) PostgreSQL on a given data directory and port, keeping its data. */
  static EmbeddedPostgres startOn(Path dataDirectory, int port) {
    try {
      return EmbeddedPostgres.builder()
          .setDataDirectory(dataDirectory)
          .setCleanDataDirectory(false)
          .setPort(port)
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start on " + dataDirectory, e);
    }
  }

  DataSource pool() {
    return pool;
  }

  /** A DataSource that opens a new connection per call (no pool). */
  DataSource unpooled() {
    return postgres.getPostgresDatabase();
  }

  /** A DataSource that connects as another role (no pool). */
  DataSource dataSourceAs(String role) {
    return postgres.getDatabase(role, "postgres");
  }

  /** A DataSource whose connections' search_path is {@code schema} (no pool). */
  DataSource withSearchPath(String schema) {
    return postgres.getDatabase("postgres", "postgres", java.util.Map.of("currentSchema", schema));
  }

  /** The JDBC URL of the database, for another process. */
  String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  /** A new, unused schema name. */
  static String freshSchemaName() {
    return "t" + SCHEMAS.incrementAndGet();
  }

  void execute(String sql) {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** The first column of the first row of {@code sql}'s result, as text ("null" for SQL NULL). */
  String queryText(String sql) {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      if (!rs.next()) {
        throw new IllegalStateException(sql + ": no row");
      }
      return String.valueOf(rs.getString(1));
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** The first column of every row of {@code sql}'s result, as text, in the result's order. */
  java.util.List<String> texts(String sql) {
    java.util.List<String> texts = new java.util.ArrayList<>();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        texts.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
    return texts;
  }

  /** The first column of the first row of {@code sql}'s result, a number. */
  long queryLong(String sql) {
    return Long.parseLong(queryText(sql));
  }

  void dropSchema(String schema) {
    execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  }

  @Override
  public void close() throws IOException {
    pool.close();
    postgres.close();
  }

  /** Polls {@code condition} until it holds, failing after {@code timeout}. */
  static void await(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Object monitor = new Object();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      synchronized (monitor) {
        try {
          monitor.wait(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError("interrupted waiting for " + what, e);
        }
      }
    }
  }
}
