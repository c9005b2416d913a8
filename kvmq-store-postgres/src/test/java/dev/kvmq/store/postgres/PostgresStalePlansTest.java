package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Retention;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A queue that went idle, was vacuumed and then got a backlog still finds its rows by the primary
 * key. PostgreSQL keeps a prepared statement's plan for the session (the commit function's
 * statements, pgjdbc's prepared claims); a plan made while the table was a page or two (the queue
 * drained, vacuum truncated it) scans the whole table, and kept it scanning for every key of every
 * commit and claim once the backlog had grown it, until autovacuum next updated the statistics.
 * Here autovacuum is off for the test's table, so that only the store decides the plans; the
 * sequential scans are PostgreSQL's own count, flushed by every pooled connection before it is
 * read.
 */
@PostgresTest
class PostgresStalePlansTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int BACKLOG = 4_000;

  @Test
  void aBacklogAfterTheQueueWasIdleAndVacuumedIsDrainedWithoutSequentialScans(TestSchema fresh)
      throws Exception {
    TestDatabase db = fresh.db();
    String table = fresh.name() + ".kvmq_kv";
    AtomicInteger ran = new AtomicInteger();
    try (TestPool pool = new TestPool(db.unpooled());
        PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      Queue<String> queue =
          Queue.builder(store, "plans", Codecs.utf8()).retention(Retention.none()).build();
      queue.counts(); // creates the schema
      db.execute("ALTER TABLE " + table + " SET (autovacuum_enabled = false)");

      // The queue at rest: jobs one at a time, each run before the next comes. Then vacuum,
      // with the worker stopped, truncates the empty table, and more jobs come one at a time:
      // every statement on the pooled connections is planned, and kept, for a table of a page.
      runOneAtATime(queue, ran, "before vacuum", 8);
      assertThat(queue.counts().waiting()).isZero();
      db.execute("VACUUM " + table);
      assertThat(pages(db, table)).as("vacuum truncated the drained table").isLessThanOrEqualTo(1);
      runOneAtATime(queue, ran, "after vacuum", 12);
      flushStatistics(pool);
      long before = sequentialScans(db, table);

      // The backlog, pushed in batches, then drained by a worker on the same connections.
      for (int from = 0; from < BACKLOG; from += 500) {
        queue.pushAll(
            IntStream.range(from, from + 500).mapToObj(i -> "backlog-" + i).toList(),
            JobOptions.defaults());
      }
      assertThat(pages(db, table)).as("the backlog grew the table").isGreaterThan(20);
      int expected = ran.get() + BACKLOG;
      ScheduledExecutorService executor = new ScheduledThreadPoolExecutor(6);
      try {
        Worker<String> worker = worker(queue, ran, executor);
        worker.start();
        TestDatabase.await("the backlog drained", WAIT, () -> ran.get() >= expected);
        worker.stop(Duration.ofSeconds(10));
      } finally {
        executor.shutdownNow();
      }
      assertThat(ran.get()).isEqualTo(expected);
      flushStatistics(pool);
      assertThat(sequentialScans(db, table) - before)
          .as("sequential scans of %s while the backlog was pushed and drained", table)
          .isZero();
    }
  }

  @Test
  void everyReadOfTheStoreUsesTheIndexWhereThePlannerWouldScanAndLeavesTheSettingAsItWas(
      TestSchema fresh) throws Exception {
    TestDatabase db = fresh.db();
    String table = fresh.name() + ".kvmq_kv";
    Key one = Key.of("jobs", "one");
    KeyRange jobs = KeyRange.prefix(Key.of("jobs"));
    try (TestPool pool = new TestPool(db.unpooled());
        PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build();
        Connection app = db.unpooled().getConnection()) {
      for (String id : List.of("one", "two", "three")) {
        assertThat(
                store
                    .commit(
                        AtomicOperation.builder().set(Key.of("jobs", id), new byte[] {1}).build())
                    .ok())
            .isTrue();
      }
      db.execute("VACUUM ANALYZE " + table); // statistics of a table of one page
      assertThat(pages(db, table)).isEqualTo(1);
      String lookup = "SELECT value FROM " + table + " WHERE key = ?";
      flushStatistics(pool); // the schema's creation scanned the table once (its index build)
      long before = sequentialScans(db, table);
      lookUp(app, lookup, one);
      flush(app);
      assertThat(sequentialScans(db, table) - before)
          .as("the planner's choice for a lookup on this table, outside the store")
          .isEqualTo(1);

      before = sequentialScans(db, table);
      assertThat(store.get(one)).isPresent();
      assertThat(store.getMany(List.of(one, Key.of("jobs", "four")))).hasSize(2);
      assertThat(store.list(jobs, 10, false)).hasSize(3);
      assertThat(store.list(jobs, 10, true)).hasSize(3);
      assertThat(store.firstEntries(List.of(jobs))).hasSize(1);
      assertThat(store.count(jobs)).isEqualTo(3);
      assertThat(
              store
                  .commit(
                      AtomicOperation.builder()
                          .check(one, store.get(one).orElseThrow().versionstamp())
                          .build())
                  .ok())
          .isTrue();
      flushStatistics(pool);
      assertThat(sequentialScans(db, table) - before).as("the store's pooled reads").isZero();

      app.setAutoCommit(false);
      ConnectionStore view = store.inTransaction(app);
      before = sequentialScans(db, table);
      assertThat(view.get(one)).isPresent();
      assertThat(view.getMany(List.of(one))).hasSize(1);
      assertThat(view.list(jobs, 10, false)).hasSize(3);
      assertThat(view.list(jobs, 10, true)).hasSize(3);
      assertThat(view.firstEntries(List.of(jobs))).hasSize(1);
      assertThat(
              view.commit(
                      AtomicOperation.builder()
                          .check(one, view.get(one).orElseThrow().versionstamp())
                          .build())
                  .ok())
          .isTrue();
      assertThat(setting(app))
          .as("enable_seqscan in the application's transaction")
          .isEqualTo("on");
      lookUp(app, lookup, one); // the application's own statement, planned as before
      flush(app);
      app.commit();
      assertThat(sequentialScans(db, table) - before)
          .as("the reads in the application's transaction, then its own lookup")
          .isEqualTo(1);
    }
  }

  private static void lookUp(Connection c, String sql, Key key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setBytes(1, key.encoded());
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  private static String setting(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_setting('enable_seqscan')")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** Flushes the pending statistics of {@code c}'s backend (at the end of its next statement). */
  private static void flush(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT pg_stat_force_next_flush()");
    }
  }

  /** Pushes {@code n} jobs one at a time, each run by a worker before the next is pushed. */
  private static void runOneAtATime(Queue<String> queue, AtomicInteger ran, String what, int n)
      throws Exception {
    ScheduledExecutorService executor = new ScheduledThreadPoolExecutor(6);
    try {
      Worker<String> worker = worker(queue, ran, executor);
      worker.start();
      for (int i = 0; i < n; i++) {
        int want = ran.get() + 1;
        queue.push(what + " " + i);
        TestDatabase.await(what + " job " + i + " ran", WAIT, () -> ran.get() >= want);
      }
      worker.stop(Duration.ofSeconds(10));
    } finally {
      executor.shutdownNow();
    }
  }

  private static Worker<String> worker(
      Queue<String> queue, AtomicInteger ran, ScheduledExecutorService executor) {
    return queue.worker(
        (job, ctx) -> ran.incrementAndGet(),
        WorkerOptions.defaults().concurrency(4).pollInterval(Duration.ofMillis(20)),
        executor);
  }

  /**
   * Makes every idle pooled connection flush its pending statistics (a backend flushes them at most
   * once a second otherwise): {@code pg_stat_force_next_flush()} flushes before the reply. And
   * checks that each came back to the pool with the server's planner setting: the store's setting
   * ends with its own transactions.
   */
  private static void flushStatistics(TestPool pool) throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    try {
      for (int i = pool.idle(); i > 0; i--) {
        borrowed.add(pool.getConnection());
      }
      assertThat(borrowed).as("the pooled connections the store used").isNotEmpty();
      for (Connection c : borrowed) {
        try (Statement s = c.createStatement();
            ResultSet rs =
                s.executeQuery(
                    "SELECT current_setting('enable_seqscan'), pg_stat_force_next_flush()")) {
          rs.next();
          assertThat(rs.getString(1)).as("enable_seqscan on a pooled connection").isEqualTo("on");
        }
      }
    } finally {
      for (Connection c : borrowed) {
        c.close();
      }
    }
  }

  private static long sequentialScans(TestDatabase db, String table) {
    return db.queryLong(
        "SELECT seq_scan FROM pg_stat_user_tables WHERE relid = '" + table + "'::regclass");
  }

  private static long pages(TestDatabase db, String table) {
    return db.queryLong(
        "SELECT pg_relation_size('" + table + "') / current_setting('block_size')::int");
  }
}
