package dev.kvmq.store.postgres;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Retention;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Where a pickup's time goes on PostgreSQL: kvmq-bench's pickup scenario (one job pushed every 10
 * ms to an idle worker of concurrency 8, prefetch 24, on 10 threads, {@link Retention#none()}),
 * with the store wrapped so that each claim's phases are timed on the claiming thread. For every
 * job it splits the time from just before the push call to the handler's first line into: the push
 * call, the wake (push returned to the claim's start), the claim's first round trip (lock and read
 * the ready rows, until the planner is called), the plan, the commit (the commit function and
 * {@code COMMIT}, until the claim returns), and the dispatch (to the handler's first line). Prints
 * the median, p90 and p99 of each phase; then the statements PostgreSQL ran (pg_stat_statements,
 * those nested in the commit function included) per job with their mean time, and the floor of one
 * round trip ({@code SELECT 1} on a pooled connection, after the run). It asserts nothing: speed is
 * never asserted in a test. Not run by {@code mvn verify}; run it with
 *
 * <pre>
 * mvn -B -q -pl kvmq-store-postgres -am verify -Dkvmq.bench=true \
 *     -Dtest=PostgresPickupBench -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * <p>Options: {@code kvmq.pickup.jobs} (measured jobs, default 1,000, after 200 not measured).
 * PostgreSQL runs with {@code synchronous_commit=on}; the pool is the tests' {@link TestPool}.
 */
@EnabledIfSystemProperty(named = "kvmq.bench", matches = "true")
class PostgresPickupBench {

  private static final int CONCURRENCY = 8;
  private static final int WARMUP = 200;
  private static final long PERIOD_NANOS = 10_000_000L;

  @Test
  void measure() throws Exception {
    int jobs = Integer.getInteger("kvmq.pickup.jobs", 1_000);
    int n = WARMUP + jobs;
    EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("shared_preload_libraries", "pg_stat_statements")
            .setServerConfig("pg_stat_statements.track", "all")
            .start();
    try (TestPool pool = new TestPool(pg.getPostgresDatabase());
        PostgresKvStore postgres = PostgresKvStore.builder(pool).schema("pickup").build()) {
      Timed store = new Timed(postgres);
      Queue<String> queue =
          Queue.builder(store, "pickup", Codecs.utf8()).retention(Retention.none()).build();
      queue.counts(); // creates the schema
      long[] called = new long[n];
      long[] returned = new long[n];
      long[] started = new long[n];
      AtomicInteger finished = new AtomicInteger();
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(CONCURRENCY + 2);
      Worker<String> worker =
          queue.worker(
              (job, ctx) -> {
                started[Integer.parseInt(job.state())] = System.nanoTime();
                finished.incrementAndGet();
              },
              WorkerOptions.defaults().concurrency(CONCURRENCY).prefetch(3 * CONCURRENCY),
              executor);
      try {
        worker.start();
        LockSupport.parkNanos(1_000_000_000L); // let the worker go idle first
        execute(pool, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        execute(pool, "SELECT pg_stat_statements_reset()");
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          long due = t0 + i * PERIOD_NANOS;
          long wait;
          while ((wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
          }
          called[i] = System.nanoTime();
          queue.push(Integer.toString(i), JobOptions.defaults());
          returned[i] = System.nanoTime();
        }
        TestDatabase.await("every job ran", Duration.ofMinutes(2), () -> finished.get() >= n);
        worker.stop(Duration.ofSeconds(30));
      } finally {
        executor.shutdown();
        executor.awaitTermination(30, TimeUnit.SECONDS);
      }
      report(store, called, returned, started);
      statements(pool, n);
      roundTrip(pool);
    } finally {
      pg.close();
    }
  }

  private static void report(Timed store, long[] called, long[] returned, long[] started) {
    // each claim that took jobs, by the end of its commit; a job's claim is the last one that
    // ended before its handler started
    List<Claim> claims = new ArrayList<>(store.claims);
    claims.removeIf(c -> c.jobs == 0);
    claims.sort((a, b) -> Long.compare(a.end, b.end));
    long[] ends = claims.stream().mapToLong(c -> c.end).toArray();
    String[] names = {"push call", "wake", "lock+read", "plan", "commit", "dispatch", "pickup"};
    List<double[]> phases = new ArrayList<>();
    for (int p = 0; p < names.length; p++) {
      phases.add(new double[called.length - WARMUP]);
    }
    int multi = 0;
    for (int i = WARMUP; i < called.length; i++) {
      int at = Arrays.binarySearch(ends, started[i]);
      int k = at >= 0 ? at : -at - 2;
      Claim c = claims.get(k);
      multi += c.jobs > 1 ? 1 : 0;
      long[] marks = {called[i], returned[i], c.start, c.planStart, c.planEnd, c.end, started[i]};
      int j = i - WARMUP;
      for (int p = 0; p < names.length - 1; p++) {
        phases.get(p)[j] = (marks[p + 1] - marks[p]) / 1e6;
      }
      phases.get(names.length - 1)[j] = (started[i] - called[i]) / 1e6;
    }
    System.out.printf(
        Locale.ROOT,
        "[pickup] %d jobs measured, one every %d ms; %d of them in a claim of more than one job%n",
        called.length - WARMUP,
        PERIOD_NANOS / 1_000_000,
        multi);
    for (int p = 0; p < names.length; p++) {
      double[] v = phases.get(p);
      Arrays.sort(v);
      System.out.printf(
          Locale.ROOT,
          "[pickup] %-10s p50 %6.3f ms  p90 %6.3f  p99 %6.3f%n",
          names[p],
          v[v.length / 2],
          v[(int) (v.length * 0.9)],
          v[(int) (v.length * 0.99)]);
    }
  }

  /**
   * The statements the run executed, nested ones (inside the commit function) included, with calls
   * per job and their mean time, from pg_stat_statements.
   */
  private static void statements(DataSource pool, int jobs) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT calls, mean_exec_time, toplevel, left(regexp_replace(query, '\\s+', ' ',"
                    + " 'g'), 120) FROM pg_stat_statements WHERE calls >= "
                    + jobs / 10
                    + " ORDER BY total_exec_time DESC LIMIT 25")) {
      while (rs.next()) {
        System.out.printf(
            Locale.ROOT,
            "[pickup] statement %5.2f calls/job, mean %.3f ms, %s: %s%n",
            rs.getLong(1) / (double) jobs,
            rs.getDouble(2),
            rs.getBoolean(3) ? "top" : "nested",
            rs.getString(4));
      }
    }
  }

  /** The p50 and p99 of 5,000 {@code SELECT 1} round trips, after 2,000 not measured. */
  private static void roundTrip(DataSource pool) throws Exception {
    double[] ms = new double[5_000];
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1")) {
      for (int i = -2_000; i < ms.length; i++) {
        long t = System.nanoTime();
        ps.executeQuery().close();
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t) / 1e6;
        }
      }
    }
    Arrays.sort(ms);
    System.out.printf(
        Locale.ROOT,
        "[pickup] one round trip (SELECT 1) p50 %.3f ms, p99 %.3f%n",
        ms[ms.length / 2],
        ms[(int) (ms.length * 0.99)]);
  }

  private static void execute(DataSource pool, String sql) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** One claim's marks, in {@link System#nanoTime()}, and the jobs its plan took. */
  private static final class Claim {
    long start;
    long planStart;
    long planEnd;
    long end;
    int jobs;
  }

  /** The store, with each claim's phases timed on the claiming thread. */
  private static final class Timed extends ForwardingKvStore {
    final ConcurrentLinkedQueue<Claim> claims = new ConcurrentLinkedQueue<>();

    Timed(KvStore store) {
      super(store);
    }

    @Override
    public List<CommitResult> claim(KeyRange range, int limit, ClaimPlanner planner) {
      Claim c = new Claim();
      c.start = System.nanoTime();
      List<CommitResult> results =
          delegate.claim(
              range,
              limit,
              new ClaimPlanner() {
                @Override
                public Key recordKey(Key indexKey) {
                  return planner.recordKey(indexKey);
                }

                @Override
                public Optional<RecordKeyRule> recordKeyRule() {
                  return planner.recordKeyRule();
                }

                @Override
                public List<AtomicOperation> plan(
                    List<KvEntry> index, List<Optional<KvEntry>> records) {
                  c.planStart = System.nanoTime();
                  List<AtomicOperation> ops = planner.plan(index, records);
                  c.planEnd = System.nanoTime();
                  c.jobs = ops.isEmpty() ? 0 : index.size();
                  return ops;
                }
              });
      c.end = System.nanoTime();
      claims.add(c);
      return results;
    }
  }
}
