package dev.kvmq.store.postgres;

import dev.kvmq.Codecs;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Table bloat: drain throughput on a fresh {@code kvmq_kv} against the same table after {@code
 * kvmq.bloat.jobs} (default 1,000,000) jobs were pushed and completed through it, with the server's
 * autovacuum at its defaults; once with the table settings the schema ships (since version 3)
 * (fillfactor, per-table autovacuum) and once with PostgreSQL's defaults for the table ({@code
 * ALTER TABLE ... RESET}), so that the effect of the shipped settings shows; then once more after a
 * {@code VACUUM} of the table (dead rows gone, the size kept), which tells the dead rows' share of
 * a slowdown from the larger table's. Prints figures and asserts nothing: speed is never asserted
 * in a test. Not run by {@code mvn verify} (the class name does not end in Test); run it with
 *
 * <pre>
 * mvn -B -q -pl kvmq-store-postgres -am verify -Dkvmq.bench=true \
 *     -Dtest=PostgresBloatBench -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * <p>Options (system properties): {@code kvmq.bloat.jobs} (jobs pushed and completed between the
 * two drains), {@code kvmq.bloat.drain} (jobs per measured drain, default 20,000), {@code
 * kvmq.bloat.settings} ({@code both}, {@code shipped} or {@code defaults}), {@code
 * kvmq.bloat.vacuum-every} (the store's {@code vacuumEvery}, default its default; 0 leaves the
 * table to autovacuum alone). A drain is measured as kvmq-bench measures one: the jobs are pushed
 * in batches of 500 by 8 threads, the table is {@code ANALYZE}d, then a worker of concurrency 8
 * (prefetch 24, on 10 threads) drains them; drain = jobs / (last completion - first start).
 * PostgreSQL runs with {@code synchronous_commit=on}.
 */
@EnabledIfSystemProperty(named = "kvmq.bench", matches = "true")
class PostgresBloatBench {

  private static final int CONCURRENCY = 8;
  private static final int PREFETCH = 24;
  private static final int BATCH = 500;
  private static final int PUSH_THREADS = 8;
  private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(30);

  @Test
  void measure() throws Exception {
    long churn = Long.getLong("kvmq.bloat.jobs", 1_000_000);
    int drain = Integer.getInteger("kvmq.bloat.drain", 20_000);
    String settings = System.getProperty("kvmq.bloat.settings", "both");
    EmbeddedPostgres pg =
        EmbeddedPostgres.builder().setServerConfig("synchronous_commit", "on").start();
    try (TestPool pool = new TestPool(pg.getPostgresDatabase())) {
      print(
          "PostgreSQL "
              + query(pool, "SHOW server_version")
              + ", "
              + Runtime.getRuntime().availableProcessors()
              + " cores, autovacuum="
              + query(pool, "SHOW autovacuum")
              + " (naptime "
              + query(pool, "SHOW autovacuum_naptime")
              + ", vacuum_cost_delay "
              + query(pool, "SHOW autovacuum_vacuum_cost_delay")
              + "), churn "
              + churn
              + " jobs, drains of "
              + drain);
      run(pool, "warmup", "shipped", 0, drain / 4, false);
      if (!settings.equals("defaults")) {
        run(pool, "b1", "shipped", churn, drain, true);
      }
      if (!settings.equals("shipped")) {
        run(pool, "b2", "defaults", churn, drain, true);
      }
    } finally {
      pg.close();
    }
  }

  private static void run(
      DataSource pool, String schema, String settings, long churn, int drain, boolean report)
      throws Exception {
    int vacuumEvery =
        Integer.getInteger("kvmq.bloat.vacuum-every", PostgresKvStore.Builder.DEFAULT_VACUUM_EVERY);
    try (PostgresKvStore store =
        PostgresKvStore.builder(pool).schema(schema).vacuumEvery(vacuumEvery).build()) {
      Queue<String> queue = Queue.builder(store, "bloat", Codecs.utf8()).build();
      queue.counts(); // creates the schema
      String table = schema + ".kvmq_kv";
      if (settings.equals("defaults")) {
        execute(
            pool,
            "ALTER TABLE "
                + table
                + " RESET (fillfactor, autovacuum_vacuum_threshold,"
                + " autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_threshold,"
                + " autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_threshold,"
                + " autovacuum_analyze_scale_factor, autovacuum_vacuum_cost_delay)");
      }
      double fresh = drain(pool, queue, table, drain);
      if (!report) {
        return;
      }
      print(settings + " table settings: fresh table " + state(pool, schema));
      long started = System.nanoTime();
      churn(queue, churn);
      double churnSeconds = (System.nanoTime() - started) / 1e9;
      print(
          String.format(
              Locale.ROOT,
              "%s (vacuumEvery %d): %,d jobs pushed and completed in %.0f s (%,.0f jobs/s); then %s",
              settings,
              vacuumEvery,
              churn,
              churnSeconds,
              churn / churnSeconds,
              state(pool, schema)));
      double after = drain(pool, queue, table, drain);
      print(
          String.format(
              Locale.ROOT,
              "%s table settings: drain fresh %,.0f jobs/s, after the churn %,.0f jobs/s: %.2fx;"
                  + " %s",
              settings,
              fresh,
              after,
              after / fresh,
              state(pool, schema)));
      // What a vacuum gives back: dead rows removed (and their index entries), the table's size
      // kept. A drain near the fresh one here says the dead rows slowed the drain, not the size.
      execute(pool, "VACUUM " + table);
      print(settings + " table settings: after VACUUM " + state(pool, schema));
      double vacuumed = drain(pool, queue, table, drain);
      print(
          String.format(
              Locale.ROOT,
              "%s table settings: drain after the churn and a VACUUM %,.0f jobs/s: %.2fx of the"
                  + " fresh table's; %s",
              settings,
              vacuumed,
              vacuumed / fresh,
              state(pool, schema)));
    }
  }

  /** Pushes {@code jobs} (batches, 8 threads), ANALYZE, drains them: jobs per second. */
  private static double drain(DataSource pool, Queue<String> queue, String table, int jobs)
      throws Exception {
    push(queue, jobs);
    execute(pool, "ANALYZE " + table);
    AtomicLong firstStart = new AtomicLong(Long.MAX_VALUE);
    AtomicLong lastEnd = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(CONCURRENCY + 2);
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> firstStart.accumulateAndGet(System.nanoTime(), Math::min),
            WorkerOptions.defaults()
                .concurrency(CONCURRENCY)
                .prefetch(PREFETCH)
                .pollInterval(Duration.ofMillis(100)),
            executor);
    worker.addListener(
        e -> {
          if (e instanceof JobEvent.Completed<?>) {
            lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
            completed.incrementAndGet();
          }
        });
    try {
      worker.start();
      TestDatabase.await("the drain", DRAIN_TIMEOUT, () -> completed.get() >= jobs);
      worker.stop(Duration.ofSeconds(30));
    } finally {
      executor.shutdownNow();
    }
    return jobs / ((lastEnd.get() - firstStart.get()) / 1e9);
  }

  /** Pushes and completes {@code jobs} with a worker running beside the pushes. */
  private static void churn(Queue<String> queue, long jobs) throws Exception {
    AtomicLong completed = new AtomicLong();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(CONCURRENCY + 2);
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {},
            WorkerOptions.defaults()
                .concurrency(CONCURRENCY)
                .prefetch(PREFETCH)
                .pollInterval(Duration.ofMillis(100)),
            executor);
    worker.addListener(
        e -> {
          if (e instanceof JobEvent.Completed<?>) {
            completed.incrementAndGet();
          }
        });
    try {
      worker.start();
      long pushed = 0;
      while (pushed < jobs) {
        int round = (int) Math.min(20_000, jobs - pushed);
        push(queue, round);
        pushed += round;
        long target = pushed - 20_000; // keep at most about one round waiting
        TestDatabase.await("the churn", DRAIN_TIMEOUT, () -> completed.get() >= target);
      }
      TestDatabase.await("the churn", DRAIN_TIMEOUT, () -> completed.get() >= jobs);
      worker.stop(Duration.ofSeconds(30));
    } finally {
      executor.shutdownNow();
    }
  }

  private static void push(Queue<String> queue, int jobs) throws Exception {
    List<Thread> threads = new ArrayList<>();
    AtomicLong next = new AtomicLong();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < PUSH_THREADS; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  for (long from; (from = next.getAndAdd(BATCH)) < jobs; ) {
                    List<String> batch = new ArrayList<>(BATCH);
                    for (long i = from; i < Math.min(jobs, from + BATCH); i++) {
                      batch.add("job-" + i);
                    }
                    queue.pushAll(batch, JobOptions.defaults());
                  }
                } catch (RuntimeException e) {
                  failures.add(e);
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException("a push failed", failures.get(0));
    }
  }

  /**
   * The table's size, dead rows and vacuums, from pg_stat_user_tables, and its live rows by kind
   * (the third part of their keys: {@code job}, {@code ready}, {@code completed}, ...).
   */
  private static String state(DataSource pool, String schema) throws Exception {
    return tableState(pool, schema) + "; rows by kind " + rowsByKind(pool, schema);
  }

  private static String rowsByKind(DataSource pool, String schema) throws Exception {
    StringBuilder kinds = new StringBuilder();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT ("
                    + schema
                    + ".kvmq_key_parts(key))[3] AS kind, count(*) FROM "
                    + schema
                    + ".kvmq_kv GROUP BY kind ORDER BY kind")) {
      while (rs.next()) {
        kinds.append(kinds.length() == 0 ? "" : ", ").append(rs.getString(1)).append(' ');
        kinds.append(String.format(Locale.ROOT, "%,d", rs.getLong(2)));
      }
    }
    return kinds.toString();
  }

  private static String tableState(DataSource pool, String schema) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT pg_size_pretty(pg_table_size(relid)), pg_size_pretty(pg_indexes_size(relid)),"
                    + " n_live_tup, n_dead_tup, autovacuum_count, autoanalyze_count,"
                    + " n_tup_hot_upd, n_tup_upd, vacuum_count"
                    + " FROM pg_stat_user_tables WHERE schemaname = '"
                    + schema
                    + "' AND relname = 'kvmq_kv'")) {
      if (!rs.next()) {
        return "(no statistics)";
      }
      return String.format(
          Locale.ROOT,
          "table %s, index %s, %,d live and %,d dead rows, %d autovacuums, %d other vacuums"
              + " (the store's, and this bench's), %d autoanalyzes, %,d of %,d updates HOT",
          rs.getString(1),
          rs.getString(2),
          rs.getLong(3),
          rs.getLong(4),
          rs.getLong(5),
          rs.getLong(9),
          rs.getLong(6),
          rs.getLong(7),
          rs.getLong(8));
    }
  }

  private static String query(DataSource pool, String sql) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void execute(DataSource pool, String sql) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static void print(String line) {
    System.out.println("[bloat] " + line);
    System.out.flush();
  }
}
