package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's own vacuums of its table ({@link PostgresKvStore.Builder#vacuumEvery}): after every
 * so many keys written the table is vacuumed (PostgreSQL's own statistics count it), never with the
 * option at 0, and a role that may not vacuum the table is told once and goes on committing.
 */
@PostgresTest
class PostgresVacuumTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private TestDatabase db;
  private String schema;

  /** Held strongly: java.util.logging keeps loggers weakly. */
  private Logger storeLogger;

  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          logged.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  @BeforeEach
  void freshSchema(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    storeLogger = Logger.getLogger(PostgresKvStore.class.getName());
    storeLogger.addHandler(capture);
  }

  @AfterEach
  void removeCapture() {
    storeLogger.removeHandler(capture);
  }

  @Test
  void afterEverySoManyKeysWrittenTheTableIsVacuumedAndCloseEndsTheThread() throws Exception {
    PostgresKvStore closed;
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.pool()).schema(schema).vacuumEvery(1_000).build()) {
      closed = store;
      // 400 keys set, then set again and deleted: 1,200 keys written, 800 dead rows
      churn(store, 400);
      TestDatabase.await("a vacuum of the store's own", WAIT, () -> store.vacuum().vacuums() >= 1);
      assertThat(vacuumCount()).as("vacuums of the table, by PostgreSQL's count").isPositive();
      assertThat(store.count(KeyRange.all())).isZero();
      assertThat(logged).noneMatch(r -> r.getLevel().intValue() >= Level.INFO.intValue());
      assertThat(store.vacuum().hasThread()).isTrue();
    }
    assertThat(closed.vacuum().hasThread()).as("close ended the vacuum thread").isFalse();
  }

  @Test
  void withVacuumEveryZeroTheStoreNeverVacuums() throws Exception {
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.pool()).schema(schema).vacuumEvery(0).build()) {
      churn(store, 1_000);
      // wrote() decides on the committing thread: with 0 it never asks for a vacuum
      assertThat(store.vacuum().vacuums()).isZero();
      assertThat(store.vacuum().hasThread()).as("no vacuum thread started").isFalse();
      assertThat(vacuumCount()).as("vacuums of the table, by PostgreSQL's count").isZero();
    }
  }

  @Test
  void aRoleThatMayNotVacuumTheTableIsToldOnceAndGoesOnCommitting() {
    try (PostgresKvStore owner = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      owner.commit(AtomicOperation.builder().set(Key.of("k"), new byte[] {1}).build());
    }
    db.execute("DROP ROLE IF EXISTS kvmq_dml");
    db.execute("CREATE ROLE kvmq_dml LOGIN");
    db.execute("GRANT USAGE ON SCHEMA " + schema + " TO kvmq_dml");
    db.execute(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO kvmq_dml");
    db.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + schema + " TO kvmq_dml");
    try (PostgresKvStore app =
        PostgresKvStore.builder(db.dataSourceAs("kvmq_dml"))
            .schema(schema)
            .vacuumEvery(1_000)
            .build()) {
      churn(app, 400);
      TestDatabase.await("the store to find it may not vacuum", WAIT, app.vacuum()::refused);
      churn(app, 400); // no more tries, and commits go on
      assertThat(app.vacuum().vacuums()).isZero();
      assertThat(app.get(Key.of("k")).orElseThrow().value()).containsExactly(1);
      assertThat(logged)
          .filteredOn(r -> r.getMessage().contains("may not VACUUM"))
          .singleElement()
          .satisfies(r -> assertThat(r.getLevel()).isEqualTo(Level.INFO));
    } finally {
      db.execute("DROP OWNED BY kvmq_dml");
      db.execute("DROP ROLE kvmq_dml");
    }
  }

  @Test
  void aVacuumEveryOfFewKeysOrBelowZeroIsRefusedWithTheLeastAllowed() {
    PostgresKvStore.Builder b = PostgresKvStore.builder(db.pool());
    assertThatThrownBy(() -> b.vacuumEvery(999))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1000")
        .hasMessageContaining("not 999");
    assertThatThrownBy(() -> b.vacuumEvery(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not -1");
  }

  /** Sets {@code n} keys, sets each again, and deletes them: 3n keys written, in batches. */
  private static void churn(PostgresKvStore store, int n) {
    for (int round = 0; round < 3; round++) {
      for (int from = 0; from < n; from += 50) {
        AtomicOperation.Builder op = AtomicOperation.builder();
        for (int i = from; i < Math.min(n, from + 50); i++) {
          Key k = Key.of("churn", (long) i);
          if (round < 2) {
            op.set(k, new byte[] {(byte) round});
          } else {
            op.delete(k);
          }
        }
        assertThat(store.commit(op.build()).ok()).isTrue();
      }
    }
  }

  private long vacuumCount() throws SQLException {
    return stat("vacuum_count");
  }

  private long stat(String column) throws SQLException {
    try (Connection c = db.pool().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT "
                    + column
                    + " FROM pg_stat_user_tables WHERE schemaname = ? AND relname = 'kvmq_kv'")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("statistics of " + schema + ".kvmq_kv").isTrue();
        return rs.getLong(1);
      }
    }
  }
}
