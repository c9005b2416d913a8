package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testkit.FakeClock;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Schema versions 2, 3 and 4 to 5 in place: a database of the older version that holds jobs in
 * every state is upgraded by the store's first call, the commit function of version 2 or 3 is gone
 * (so a node still running it fails loudly instead of locking keys the old way), version 4's is
 * replaced by one that plans with {@code enable_seqscan} off, the jobs show in the {@code
 * kvmq_jobs} view as they are, and a worker then runs every one that can run.
 */
@PostgresTest
class PostgresMigrationTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration LEASE = Duration.ofMinutes(5);
  private static final String QUEUE = "émails/ü";

  @Test
  void aPopulatedVersionTwoDatabaseIsUpgradedInPlaceAndItsJobsStillRun(
      TestSchema scratch, TestSchema old) throws Exception {
    upgradesInPlace(2, scratch, old);
  }

  @Test
  void aPopulatedVersionThreeDatabaseIsUpgradedInPlaceAndItsJobsStillRun(
      TestSchema scratch, TestSchema old) throws Exception {
    upgradesInPlace(3, scratch, old);
  }

  @Test
  void aPopulatedVersionFourDatabaseIsUpgradedInPlaceAndItsJobsStillRun(
      TestSchema scratch, TestSchema old) throws Exception {
    upgradesInPlace(4, scratch, old);
  }

  private void upgradesInPlace(int from, TestSchema scratch, TestSchema old) throws Exception {
    TestDatabase db = old.db();
    FakeClock clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));

    // Jobs in every state, written by the kernel through the store (the rows a version-2, 3 or 4
    // store writes: the rows are the same), in a scratch schema.
    Map<String, String> idOf = new HashMap<>();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch holding = new CountDownLatch(1);
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(4);
    try (PostgresKvStore store = scratch.store().build()) {
      Queue<String> queue = Queue.builder(store, QUEUE, Codecs.utf8()).clock(clock).build();
      // one slot, no claims ahead: "fails" first (by priority), then "held by a worker", which
      // holds the slot, so the jobs pushed after stay where they are
      idOf.put("fails", queue.push("fails", JobOptions.defaults().priority(1)).id());
      idOf.put("held by a worker", queue.push("held by a worker").id());
      Worker<String> first =
          queue.worker(
              (job, ctx) -> {
                if (job.state().equals("fails")) {
                  throw new IllegalStateException("the remote side said no");
                }
                holding.countDown();
                release.await();
              },
              WorkerOptions.defaults()
                  .concurrency(1)
                  .lease(LEASE, LEASE.dividedBy(3))
                  .pollInterval(Duration.ofMillis(50)),
              executor);
      first.start();
      assertThat(holding.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      TestDatabase.await("one dead", WAIT, () -> queue.counts().dead() == 1);
      idOf.put("urgent", queue.push("urgent", JobOptions.defaults().priority(2.5)).id());
      idOf.put("low", queue.push("low", JobOptions.defaults().priority(-0.125)).id());
      idOf.put(
          "later", queue.push("later", JobOptions.defaults().delay(Duration.ofMinutes(10))).id());
      for (int i = 0; i < 20; i++) {
        idOf.put("plain-" + i, queue.push("plain-" + i).id());
      }
      assertThat(queue.counts()).isEqualTo(new QueueCounts(22, 1, 1, 1, 0));

      // The older database: its shipped file, then these rows and the sequence's position.
      String oldSql;
      try (InputStream in =
          PostgresMigrationTest.class.getResourceAsStream(
              "/dev/kvmq/store/postgres/schema-v" + from + ".sql")) {
        oldSql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      db.execute("CREATE SCHEMA " + old.name());
      try (Connection c = db.unpooled().getConnection();
          Statement s = c.createStatement()) {
        s.execute("SET search_path TO " + old.name());
        s.execute(oldSql);
        s.execute("INSERT INTO kvmq_kv SELECT * FROM " + scratch.name() + ".kvmq_kv");
        s.execute(
            "SELECT setval('kvmq_versionstamp', (SELECT last_value FROM "
                + scratch.name()
                + ".kvmq_versionstamp))");
      }
      release.countDown();
      first.stop(Duration.ofSeconds(10));
    } finally {
      executor.shutdownNow();
    }
    if (from == 4) {
      // a DBA tuned the table: the upgrade must leave that alone
      db.execute("ALTER TABLE " + old.name() + ".kvmq_kv SET (fillfactor = 90)");
      db.execute("ALTER TABLE " + old.name() + ".kvmq_kv RESET (autovacuum_analyze_threshold)");
    }
    assertThat(version(db, old.name())).isEqualTo(from);
    assertThat(commitFunctions(db, old.name())).containsExactly(from < 4 ? 11 : 13);
    assertThat(commitFunctionSettings(db, old.name())).doesNotContain("enable_seqscan=off");
    long rows = count(db, "SELECT count(*) FROM " + old.name() + ".kvmq_kv");

    // A store that may not migrate refuses, naming the file to run; nothing changes.
    try (PostgresKvStore refusing = old.store().createSchema(false).build()) {
      assertThatThrownBy(() -> refusing.get(Key.of("x")))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("schema version " + from + ", older")
          .hasMessageContaining("/dev/kvmq/store/postgres/schema-v5.sql");
    }
    assertThat(version(db, old.name())).isEqualTo(from);

    clock.advance(Duration.ofHours(1)); // past the lease and the delay
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    ScheduledExecutorService again = Executors.newScheduledThreadPool(4);
    try (PostgresKvStore store = old.store().build()) {
      Queue<String> queue = Queue.builder(store, QUEUE, Codecs.utf8()).clock(clock).build();
      assertThat(queue.counts()).as("the first call upgraded").isNotNull();
      assertThat(version(db, old.name())).isEqualTo(5);
      assertThat(commitFunctions(db, old.name()))
          .as("the older commit function is gone: a node still running it fails its commits")
          .containsExactly(13);
      assertThat(commitFunctionSettings(db, old.name()))
          .as("version 5's commit function, not version 4's")
          .contains("enable_seqscan=off");
      assertThat(count(db, "SELECT count(*) FROM " + old.name() + ".kvmq_kv"))
          .as("no row added or lost")
          .isEqualTo(rows);
      String settings = reloptions(db, old.name() + ".kvmq_kv");
      assertThat(settings)
          .contains(
              from == 4 ? "fillfactor=90" : "fillfactor=70",
              "autovacuum_vacuum_threshold=1000",
              "autovacuum_vacuum_cost_delay=0");
      if (from == 4) {
        assertThat(settings).doesNotContain("autovacuum_analyze_threshold");
      }

      Map<String, List<Object>> view = jobsView(db, old.name());
      assertThat(view).hasSize(idOf.size());
      assertThat(view.get(idOf.get("fails")).subList(0, 4))
          .containsExactly(QUEUE, "dead", "dead", 1);
      assertThat(view.get(idOf.get("fails")).get(6)).isEqualTo("the remote side said no");
      assertThat(view.get(idOf.get("held by a worker")).subList(0, 4))
          .containsExactly(QUEUE, "leased", "processing", 1);
      Job<String> leased = queue.job(idOf.get("held by a worker")).orElseThrow();
      assertThat(view.get(idOf.get("held by a worker")).get(5))
          .isEqualTo(leased.leaseUntil().orElseThrow());
      assertThat(view.get(idOf.get("later")).subList(0, 4))
          .containsExactly(QUEUE, "delayed", "delayed", 0);
      assertThat(view.get(idOf.get("later")).get(4))
          .isEqualTo(queue.job(idOf.get("later")).orElseThrow().delayUntil());
      assertThat(view.get(idOf.get("urgent")).subList(0, 4))
          .containsExactly(QUEUE, "ready", "waiting", 0);
      assertThat(view.get(idOf.get("urgent")).get(7)).isEqualTo(2.5);
      assertThat(view.get(idOf.get("low")).get(7)).isEqualTo(-0.125);
      assertThat(view.get(idOf.get("plain-3")).get(7)).isEqualTo(0.0);

      Worker<String> worker =
          queue.worker(
              (job, ctx) -> {
                if (job.state().equals("fails")) {
                  throw new IllegalStateException("the dead job ran again");
                }
                runs.merge(job.state(), 1, Integer::sum);
              },
              WorkerOptions.defaults().concurrency(4).pollInterval(Duration.ofMillis(50)),
              again);
      worker.start();
      Set<String> runnable = new java.util.HashSet<>(idOf.keySet());
      runnable.remove("fails");
      TestDatabase.await("every job that can run ran", WAIT, () -> runs.keySet().equals(runnable));
      TestDatabase.await(
          "only the dead job is left",
          WAIT,
          () -> queue.counts().equals(new QueueCounts(0, 0, 0, 1, 0)));
      worker.stop(Duration.ofSeconds(10));
      assertThat(runs.values()).as("each once").allMatch(n -> n == 1);
      Map<String, List<Object>> after = jobsView(db, old.name());
      assertThat(after).as("completed jobs are kept by default").hasSize(idOf.size());
      assertThat(after.get(idOf.get("fails")).subList(0, 3)).containsExactly(QUEUE, "dead", "dead");
      runnable.forEach(
          name ->
              assertThat(after.get(idOf.get(name)).subList(0, 3))
                  .as(name)
                  .containsExactly(QUEUE, "completed", "completed"));
    } finally {
      again.shutdownNow();
    }
  }

  @Test
  void theJobsViewDecodesPrioritiesAndTimesExactlyOnAFreshSchema(TestSchema fresh)
      throws Exception {
    FakeClock clock = new FakeClock(Instant.parse("2031-05-06T07:08:09.123Z"));
    Map<Double, String> ids = new HashMap<>();
    try (PostgresKvStore store = fresh.store().build()) {
      Queue<String> queue = Queue.builder(store, "plain", Codecs.utf8()).clock(clock).build();
      for (double p : new double[] {1e-310, -3.75, Double.MAX_VALUE, -1e-320, 1234567.875}) {
        ids.put(p, queue.push("p", JobOptions.defaults().priority(p)).id());
      }
      Job<String> later =
          queue.push(
              "later", JobOptions.defaults().delayUntil(Instant.parse("9000-01-01T00:00:00Z")));
      Map<String, List<Object>> view = jobsView(fresh.db(), fresh.name());
      assertThat(view).hasSize(6);
      ids.forEach((p, id) -> assertThat((Double) view.get(id).get(7)).isEqualTo(p));
      assertThat(view.get(later.id()).subList(0, 5))
          .containsExactly("plain", "delayed", "delayed", 0, Instant.parse("9000-01-01T00:00:00Z"));
      assertThat(view.get(ids.get(-3.75)).subList(0, 6))
          .containsExactly(
              "plain", "ready", "waiting", 0, Instant.parse("2031-05-06T07:08:09.123Z"), null);
    }
  }

  /** The jobs view: per id, queue, state, status, attempt, due, lease until, error, priority. */
  private static Map<String, List<Object>> jobsView(TestDatabase db, String schema)
      throws SQLException {
    Map<String, List<Object>> rows = new HashMap<>();
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT id, queue, state, status, attempt, due, lease_until, error_message,"
                    + " priority FROM "
                    + schema
                    + ".kvmq_jobs")) {
      while (rs.next()) {
        List<Object> row = new ArrayList<>();
        row.add(rs.getString(2));
        row.add(rs.getString(3));
        row.add(rs.getString(4));
        row.add(rs.getInt(5));
        row.add(instant(rs, 6));
        row.add(instant(rs, 7));
        row.add(rs.getString(8));
        row.add(rs.getDouble(9));
        rows.put(rs.getString(1), row);
      }
    }
    return rows;
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    java.sql.Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }

  private static int version(TestDatabase db, String schema) throws SQLException {
    return (int) count(db, "SELECT max(version) FROM " + schema + ".kvmq_schema_version");
  }

  /** The number of arguments of each commit function in {@code schema}. */
  private static List<Integer> commitFunctions(TestDatabase db, String schema) throws SQLException {
    List<Integer> arities = new ArrayList<>();
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT p.pronargs FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                    + " WHERE n.nspname = '"
                    + schema
                    + "' AND p.proname = 'kvmq_commit'")) {
      while (rs.next()) {
        arities.add(rs.getInt(1));
      }
    }
    return arities;
  }

  /** The settings ({@code SET} clauses) of the commit functions in {@code schema}. */
  private static String commitFunctionSettings(TestDatabase db, String schema) {
    return db.queryText(
        "SELECT string_agg(array_to_string(p.proconfig, ','), ';')"
            + " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            + " WHERE n.nspname = '"
            + schema
            + "' AND p.proname = 'kvmq_commit'");
  }

  private static String reloptions(TestDatabase db, String table) {
    return db.queryText(
        "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = '"
            + table
            + "'::regclass");
  }

  private static long count(TestDatabase db, String sql) throws SQLException {
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
