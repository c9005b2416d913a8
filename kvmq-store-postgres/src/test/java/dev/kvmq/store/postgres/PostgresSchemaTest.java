package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvStoreException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The schema: created on first use, or from the shipped SQL file; checked either way. */
@PostgresTest
class PostgresSchemaTest {

  private TestDatabase db;
  private String schema;

  @BeforeEach
  void freshSchema(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
  }

  @Test
  void withoutCreateSchemaMissingTablesAreReportedWithTheFileToRun() {
    db.execute("CREATE SCHEMA " + schema);
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.pool()).schema(schema).createSchema(false).build()) {
      assertThatThrownBy(() -> store.get(Key.of("k")))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("do not exist")
          .hasMessageContaining("/dev/kvmq/store/postgres/schema-v5.sql")
          .hasMessageContaining("createSchema(true)");
      assertThat(store.isHealthy()).isFalse();
    }
  }

  @Test
  void theShippedSqlFileRunsAsIsAndTheStoreUsesIt() throws Exception {
    String sql;
    try (InputStream in =
        PostgresKvStore.class.getResourceAsStream("/dev/kvmq/store/postgres/schema-v5.sql")) {
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    db.execute("CREATE SCHEMA " + schema);
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET search_path TO " + schema);
      s.execute(sql); // as a migration tool would: the whole file
      s.execute(sql); // and it is idempotent
    }
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.pool()).schema(schema).createSchema(false).build()) {
      assertThat(
              store
                  .commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build())
                  .versionstamp())
          .isEqualTo(1);
      assertThat(store.get(Key.of("k"))).isPresent();
      assertThat(store.isHealthy()).isTrue();
      assertThat(store.failure()).isEmpty();
    }
  }

  @Test
  void aNewerSchemaVersionIsRefused() {
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      store.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
    }
    db.execute("INSERT INTO " + schema + ".kvmq_schema_version (version) VALUES (6)");
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      assertThatThrownBy(() -> store.get(Key.of("k")))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("schema version 6")
          .hasMessageContaining("upgrade kvmq");
    }
  }

  @Test
  void aVersionOneSchemaIsUpgradedInPlaceAndVersionstampsContinue() throws Exception {
    String v1;
    try (InputStream in =
        PostgresSchemaTest.class.getResourceAsStream("/dev/kvmq/store/postgres/schema-v1.sql")) {
      v1 = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    db.execute("CREATE SCHEMA " + schema);
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET search_path TO " + schema);
      s.execute(v1);
      // Two commits through the version-1 function: key k at versionstamp 2.
      for (int i = 0; i < 2; i++) {
        s.execute(
            "SELECT kvmq_commit(1, '{}', '{}', '{}', '{1}', ARRAY['\\x6b'::bytea], ARRAY['\\x0"
                + i
                + "'::bytea], 'kvmq_changes', '{}')");
      }
    }
    try (PostgresKvStore refusing =
        PostgresKvStore.builder(db.pool()).schema(schema).createSchema(false).build()) {
      assertThatThrownBy(() -> refusing.get(Key.of("x")))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("schema version 1, older")
          .hasMessageContaining("schema-v5.sql");
    }
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      assertThat(store.count(KeyRange.all())).isEqualTo(1);
      long next =
          store
              .commit(AtomicOperation.builder().set(Key.of("new"), new byte[] {1}).build())
              .versionstamp();
      assertThat(next).as("after the version-1 counter's 2").isEqualTo(3);
    }
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement();
        var rs =
            s.executeQuery(
                "SELECT (SELECT max(version) FROM "
                    + schema
                    + ".kvmq_schema_version),"
                    + " to_regclass('"
                    + schema
                    + ".kvmq_meta') IS NULL,"
                    + " (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                    + "  WHERE n.nspname = '"
                    + schema
                    + "' AND p.proname = 'kvmq_commit')")) {
      rs.next();
      assertThat(rs.getInt(1)).isEqualTo(5);
      assertThat(rs.getBoolean(2)).as("the counter row's table is gone").isTrue();
      assertThat(rs.getInt(3)).as("only the version-5 commit function is left").isEqualTo(1);
    }
  }

  @Test
  void storesWithDifferentPrefixesAreIndependent() {
    try (PostgresKvStore one =
            PostgresKvStore.builder(db.pool()).schema(schema).tablePrefix("one").build();
        PostgresKvStore two =
            PostgresKvStore.builder(db.pool()).schema(schema).tablePrefix("two").build()) {
      one.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
      one.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {2}).build());
      assertThat(two.count(KeyRange.all())).isZero();
      assertThat(
              two.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {3}).build())
                  .versionstamp())
          .as("each prefix has its own versionstamps")
          .isEqualTo(1);
      assertThat(one.get(Key.of("k")).orElseThrow().value()).containsExactly(2);
    }
  }

  @Test
  void anInstalledSchemaNeedsOnlyDataPrivilegesEvenWithCreateSchema() {
    try (PostgresKvStore owner = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      owner.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
    }
    db.execute("DROP ROLE IF EXISTS kvmq_app");
    db.execute("CREATE ROLE kvmq_app LOGIN");
    db.execute("GRANT USAGE ON SCHEMA " + schema + " TO kvmq_app");
    db.execute(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO kvmq_app");
    db.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + schema + " TO kvmq_app");
    try (PostgresKvStore app =
        PostgresKvStore.builder(db.dataSourceAs("kvmq_app")).schema(schema).build()) {
      // The role may not create anything in the schema: the store must not try.
      assertThat(
              app.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {2}).build()).ok())
          .isTrue();
      assertThat(app.get(Key.of("k")).orElseThrow().value()).containsExactly(2);
      assertThat(app.count(KeyRange.all())).isEqualTo(1);
    } finally {
      db.execute("DROP OWNED BY kvmq_app");
      db.execute("DROP ROLE kvmq_app");
    }
  }

  @Test
  void aRoleWithCreateOnItsSchemaAloneInstallsTheTablesThere() {
    // PostgreSQL checks CREATE on the database for CREATE SCHEMA IF NOT EXISTS even when the
    // schema exists: the store must not run it then.
    db.execute("CREATE SCHEMA " + schema);
    db.execute("DROP ROLE IF EXISTS kvmq_creator");
    db.execute("CREATE ROLE kvmq_creator LOGIN");
    db.execute("GRANT USAGE, CREATE ON SCHEMA " + schema + " TO kvmq_creator");
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.dataSourceAs("kvmq_creator")).schema(schema).build()) {
      assertThat(
              store.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build()).ok())
          .isTrue();
      assertThat(store.get(Key.of("k")).orElseThrow().value()).containsExactly(1);
    } finally {
      db.execute("DROP OWNED BY kvmq_creator");
      db.execute("DROP ROLE kvmq_creator");
    }
  }

  @Test
  void runningTheFileAgainLeavesADbasTableSettingsAlone() throws Exception {
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      store.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
    }
    db.execute(
        "ALTER TABLE "
            + schema
            + ".kvmq_kv SET (fillfactor = 90, autovacuum_vacuum_cost_delay = 5)");
    db.execute("ALTER TABLE " + schema + ".kvmq_kv RESET (autovacuum_analyze_threshold)");
    String before = reloptions();
    assertThat(before).contains("fillfactor=90").doesNotContain("autovacuum_analyze_threshold");
    String sql;
    try (InputStream in =
        PostgresKvStore.class.getResourceAsStream("/dev/kvmq/store/postgres/schema-v5.sql")) {
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET search_path TO " + schema);
      s.execute(sql); // as a migration tool would, again
    }
    assertThat(reloptions()).isEqualTo(before);
  }

  private String reloptions() {
    return db.queryText(
        "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = '"
            + schema
            + ".kvmq_kv'::regclass");
  }

  @Test
  void commitsRefuseToRunUnderRepeatableRead() {
    // Under REPEATABLE READ the commit's snapshot would predate its lock: checks could pass
    // on stale data. The commit function refuses, with a message naming the setting.
    db.execute("DROP ROLE IF EXISTS kvmq_rr");
    db.execute("CREATE ROLE kvmq_rr LOGIN SUPERUSER");
    db.execute("ALTER ROLE kvmq_rr SET default_transaction_isolation = 'repeatable read'");
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.dataSourceAs("kvmq_rr")).schema(schema).build()) {
      assertThatThrownBy(
              () ->
                  store.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build()))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("READ COMMITTED")
          .hasMessageContaining("repeatable read");
      assertThat(store.get(Key.of("k"))).isEmpty();
    } finally {
      db.execute("DROP OWNED BY kvmq_rr");
      db.execute("DROP ROLE kvmq_rr");
    }
  }

  @Test
  void namesThatAreNotPlainIdentifiersAreRefused() {
    PostgresKvStore.Builder builder = PostgresKvStore.builder(db.pool());
    assertThatThrownBy(() -> builder.tablePrefix("Kvmq"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lower-case SQL identifier");
    assertThatThrownBy(() -> builder.tablePrefix("kv; DROP TABLE x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder.schema("a".repeat(21)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 20");
    assertThatThrownBy(() -> builder.tablePrefix(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> PostgresKvStore.builder(null))
        .isInstanceOf(NullPointerException.class);
  }

  /**
   * The names go into SQL unquoted, so a reserved word is refused by name, not by a syntax error.
   */
  @Test
  void aSchemaNamedAfterAReservedWordIsRefusedByName() {
    for (String reserved : java.util.List.of("user", "order", "left")) {
      try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(reserved).build()) {
        assertThatThrownBy(() -> store.get(Key.of("k")))
            .isInstanceOf(KvStoreException.class)
            .hasMessageContaining(
                "the schema name \"" + reserved + "\" is a word PostgreSQL reserves");
      }
    }
    // an unreserved keyword is a fine schema name
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema("national").build()) {
      store.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
      assertThat(store.get(Key.of("k"))).isPresent();
    } finally {
      db.dropSchema("national");
    }
  }

  @Test
  void buildingTouchesNoDatabase() throws SQLException {
    try (PostgresKvStore store = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      assertThat(store.isHealthy()).isTrue();
      try (Connection c = db.unpooled().getConnection();
          var rs =
              c.createStatement()
                  .executeQuery(
                      "SELECT count(*) FROM information_schema.schemata WHERE schema_name = '"
                          + schema
                          + "'")) {
        rs.next();
        assertThat(rs.getInt(1)).isZero();
      }
      store.count(KeyRange.all());
      try (Connection c = db.unpooled().getConnection();
          var rs =
              c.createStatement()
                  .executeQuery(
                      "SELECT count(*) FROM information_schema.tables WHERE table_schema = '"
                          + schema
                          + "' AND table_type = 'BASE TABLE'")) {
        rs.next();
        assertThat(rs.getInt(1)).as("kv and schema_version").isEqualTo(2);
      }
    }
  }
}
