package dev.kvmq.store.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Schema and migration: reads the installed schema version, creates the schema (or upgrades version
 * 1) when it is missing and the builder allows, and refuses versions this release does not know
 * (see {@code docs/postgres-store.md}, Schema).
 *
 * <p><b>Locking.</b> {@link #prepare} is called by one thread at a time (the store holds its schema
 * monitor); across nodes, creation runs under a session-level advisory lock taken before the DDL's
 * transaction begins. Stateless otherwise.
 */
final class SchemaSetup {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** The first key of the advisory lock that guards schema creation: "kvmq". */
  private static final int SCHEMA_LOCK = 0x6b766d71;

  private final Tables tables;
  private final boolean createSchema;

  SchemaSetup(Tables tables, boolean createSchema) {
    this.tables = tables;
    this.createSchema = createSchema;
  }

  /**
   * Checks the installed schema version; creates the schema first if it is missing (or upgrades it
   * if it is older) and the builder allows. An installed current schema is left alone: no DDL, no
   * lock, so that nodes that may not own the tables start too, and a running cluster sees no DDL at
   * every start.
   */
  void prepare(Connection c) throws SQLException {
    SQLException missing = null;
    Integer version;
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    refuseReservedSchemaName(c);
    try {
      version = installedVersion(c);
    } catch (SQLException e) {
      if (!"42P01".equals(e.getSQLState()) && !"3F000".equals(e.getSQLState())) {
        throw e;
      }
      missing = e;
      version = null;
    }
    if ((version == null || version < Tables.SCHEMA_VERSION) && createSchema) {
      version = createSchema(c);
    }
    if (version == null) {
      String why =
          missing != null
              ? missing.getMessage().replaceAll("\\s+", " ").strip()
              : tables.schemaVersion + " is empty";
      throw new SQLException(
          "the kvmq tables do not exist or have no schema version ("
              + why
              + "): run "
              + Tables.SCHEMA_RESOURCE
              + " from the kvmq-store-postgres jar, or build"
              + " the store with createSchema(true)",
          missing != null ? missing.getSQLState() : "55000",
          missing);
    }
    if (version > Tables.SCHEMA_VERSION) {
      throw new SQLException(
          "the kvmq tables have schema version "
              + version
              + ", but this"
              + " kvmq-store-postgres knows version "
              + Tables.SCHEMA_VERSION
              + ": upgrade kvmq",
          "55000");
    }
    if (version < Tables.SCHEMA_VERSION) {
      throw olderVersion(version);
    }
    tables.resolved(tableSchema(c));
  }

  /** The schema PostgreSQL finds the table in, on this connection (its search_path, if needed). */
  private String tableSchema(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT n.nspname FROM pg_catalog.pg_class t"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace"
                + " WHERE t.oid = to_regclass(?)")) {
      ps.setString(1, tables.kv);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the kvmq table " + tables.kv + " is missing", "42P01");
        }
        return rs.getString(1);
      }
    }
  }

  private static SQLException olderVersion(int version) {
    return new SQLException(
        "the kvmq tables have schema version "
            + version
            + ", older than this"
            + " kvmq-store-postgres's "
            + Tables.SCHEMA_VERSION
            + ": run "
            + Tables.SCHEMA_RESOURCE
            + " from the kvmq-store-postgres jar (it upgrades them in place; stop the nodes of the"
            + " older version first), or build the store with createSchema(true)",
        "55000");
  }

  /**
   * Refuses a schema name that is a reserved word of this server (pg_get_keywords: "reserved", or
   * "reserved (can be function or type name)"): the store writes names unquoted, and such a name
   * would make every statement a syntax error that does not say why. The builder accepts it, since
   * the list is the server's.
   */
  private void refuseReservedSchemaName(Connection c) throws SQLException {
    if (tables.schema == null) {
      return;
    }
    try (PreparedStatement p =
        c.prepareStatement(
            "SELECT catdesc FROM pg_get_keywords() WHERE word = ? AND catcode IN ('R', 'T')")) {
      p.setString(1, tables.schema);
      try (ResultSet rs = p.executeQuery()) {
        if (rs.next()) {
          throw new SQLException(
              "the schema name \""
                  + tables.schema
                  + "\" is a word PostgreSQL reserves ("
                  + rs.getString(1)
                  + "), which kvmq can't use as a schema name: choose another",
              "42939");
        }
      }
    }
  }

  /**
   * What the schema lock is taken on: the schema the store's tables live in (empty for the search
   * path's), not the tables, so that stores of different prefixes starting together in one new
   * schema create it one after the other: {@code CREATE SCHEMA IF NOT EXISTS} alone can collide.
   */
  private String lockName() {
    return "schema " + (tables.schema == null ? "" : tables.schema);
  }

  /** The installed schema version, or null if the version table is empty. */
  private Integer installedVersion(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(tables.readVersion)) {
      rs.next();
      return (Integer) rs.getObject(1);
    }
  }

  /**
   * Runs the schema file (which also upgrades versions 1 to 4) under a session-level advisory lock,
   * so that nodes starting together create it once; returns the installed version. The lock is
   * taken before the DDL's transaction begins, because a transaction that starts before another
   * node's DDL commits can miss it in its catalog caches (and then fail on CREATE ... IF NOT
   * EXISTS); and the version is read again under the lock, so that the nodes that waited run no
   * DDL.
   */
  private boolean schemaExists(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ?")) {
      ps.setString(1, tables.schema);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private Integer createSchema(Connection c) throws SQLException {
    try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_lock(?, hashtext(?))")) {
      lock.setInt(1, SCHEMA_LOCK);
      lock.setString(2, lockName());
      lock.executeQuery().close();
    }
    try {
      Integer version;
      try {
        version = installedVersion(c);
      } catch (SQLException e) {
        if (!"42P01".equals(e.getSQLState()) && !"3F000".equals(e.getSQLState())) {
          throw e;
        }
        version = null;
      }
      if (version != null && version >= Tables.SCHEMA_VERSION) {
        return version;
      }
      c.setAutoCommit(false);
      try {
        try (Statement s = c.createStatement()) {
          if (tables.schema != null && !schemaExists(c)) {
            // only when missing: PostgreSQL checks CREATE on the database even for a schema that
            // exists, and a role may have CREATE on its schema alone
            s.execute("CREATE SCHEMA IF NOT EXISTS " + tables.schema);
          }
          for (String sql : tables.schemaStatements()) {
            s.execute(sql);
          }
        }
        version = installedVersion(c);
        c.commit();
        return version;
      } catch (SQLException | RuntimeException e) {
        Jdbc.rollbackQuietly(c);
        throw e;
      } finally {
        Jdbc.resetAutoCommit(c);
      }
    } finally {
      try (PreparedStatement unlock =
          c.prepareStatement("SELECT pg_advisory_unlock(?, hashtext(?))")) {
        unlock.setInt(1, SCHEMA_LOCK);
        unlock.setString(2, lockName());
        unlock.executeQuery().close();
      } catch (SQLException e) {
        // The connection is broken, and its session lock went with it.
        LOG.log(Level.DEBUG, "releasing the schema lock failed", e);
      }
    }
  }
}
