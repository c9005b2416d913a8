package dev.kvmq.store.postgres;

import dev.kvmq.Codec;
import dev.kvmq.Queue;
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
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Measures what versionstamps cost: commits per second through the store against plain upserts of
 * the same shape and against schema version 1's counter row (writers serialized by one row), with
 * and without a flush per commit; claims through the store's claim path and the SPI's default; and
 * the cross-node notification latency. Prints figures and asserts nothing: speed is never asserted
 * in a test. Not run by {@code mvn verify} (the class name does not end in Test); run it with
 *
 * <pre>
 * mvn -B -q -pl kvmq-store-postgres -am verify -Dkvmq.bench=true \
 *     -Dtest=PostgresCommitCostBench -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@EnabledIfSystemProperty(named = "kvmq.bench", matches = "true")
class PostgresCommitCostBench {

  private static final int THREADS = 8;
  private static final int COMMITS_PER_THREAD = 400;
  private static final int SINGLE_THREAD_COMMITS = 2_000;

  @Test
  void measure() throws Exception {
    for (String synchronousCommit : List.of("on", "off")) {
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setServerConfig("synchronous_commit", synchronousCommit)
              .start();
      try (TestPool pool = new TestPool(pg.getPostgresDatabase())) {
        print(
            "synchronous_commit="
                + synchronousCommit
                + " (PostgreSQL "
                + version(pool)
                + ", "
                + Runtime.getRuntime().availableProcessors()
                + " cores)");
        storeCommits(pool, synchronousCommit, 1, SINGLE_THREAD_COMMITS);
        storeCommits(pool, synchronousCommit, THREADS, COMMITS_PER_THREAD);
        plainUpserts(pool, 1, SINGLE_THREAD_COMMITS);
        plainUpserts(pool, THREADS, COMMITS_PER_THREAD);
        counterRowUpserts(pool, 1, SINGLE_THREAD_COMMITS);
        counterRowUpserts(pool, THREADS, COMMITS_PER_THREAD);
        batches(pool, 100, 40);
        claims(pool, false);
        claims(pool, true);
        notificationLatency(pool, 300);
        pickupLatency(pool, 200);
      } finally {
        pg.close();
      }
    }
  }

  private static void storeCommits(DataSource pool, String sc, int threads, int each)
      throws Exception {
    try (PostgresKvStore store =
        PostgresKvStore.builder(pool).tablePrefix("bench_" + threads).build()) {
      store.commit(AtomicOperation.builder().set(Key.of("warm"), new byte[16]).build());
      long[] latencies = new long[threads * each];
      AtomicLong index = new AtomicLong();
      long elapsed =
          run(
              threads,
              t -> {
                for (int i = 0; i < each; i++) {
                  long t0 = System.nanoTime();
                  store.commit(
                      AtomicOperation.builder()
                          .set(Key.of("job", (long) t, (long) i), new byte[100])
                          .build());
                  latencies[(int) index.getAndIncrement()] = System.nanoTime() - t0;
                }
              });
      report(
          "store commit (1 set, 100 B), " + threads + " thread(s)",
          threads * each,
          elapsed,
          latencies);
    }
  }

  private static void plainUpserts(DataSource pool, int threads, int each) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS plain_kv");
      s.execute(
          "CREATE TABLE plain_kv (key bytea PRIMARY KEY, value bytea NOT NULL, versionstamp bigint NOT NULL)");
    }
    long[] latencies = new long[threads * each];
    AtomicLong index = new AtomicLong();
    long elapsed =
        run(
            threads,
            t -> {
              try (Connection c = pool.getConnection();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "INSERT INTO plain_kv VALUES (?, ?, 1)"
                              + " ON CONFLICT (key) DO UPDATE SET value = excluded.value")) {
                for (int i = 0; i < each; i++) {
                  long t0 = System.nanoTime();
                  ps.setBytes(1, Key.of("job", (long) t, (long) i).encoded());
                  ps.setBytes(2, new byte[100]);
                  ps.executeUpdate();
                  latencies[(int) index.getAndIncrement()] = System.nanoTime() - t0;
                }
              }
            });
    report(
        "baseline: plain autocommit upsert, no versionstamp row, " + threads + " thread(s)",
        threads * each,
        elapsed,
        latencies);
  }

  /**
   * Schema version 1's scheme without the rest of the store: a transaction that locks one counter
   * row, upserts, advances the counter and commits. Writers queue on the row.
   */
  private static void counterRowUpserts(DataSource pool, int threads, int each) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS counter_kv");
      s.execute("DROP TABLE IF EXISTS counter_row");
      s.execute(
          "CREATE TABLE counter_kv (key bytea PRIMARY KEY, value bytea NOT NULL, versionstamp bigint NOT NULL)");
      s.execute(
          "CREATE TABLE counter_row (id int PRIMARY KEY, vs bigint NOT NULL) WITH (fillfactor = 50)");
      s.execute("INSERT INTO counter_row VALUES (1, 0)");
    }
    long[] latencies = new long[threads * each];
    AtomicLong index = new AtomicLong();
    long elapsed =
        run(
            threads,
            t -> {
              try (Connection c = pool.getConnection();
                  PreparedStatement lock =
                      c.prepareStatement("SELECT vs FROM counter_row WHERE id = 1 FOR UPDATE");
                  PreparedStatement up =
                      c.prepareStatement(
                          "INSERT INTO counter_kv VALUES (?, ?, ?)"
                              + " ON CONFLICT (key) DO UPDATE SET value = excluded.value, versionstamp = excluded.versionstamp");
                  PreparedStatement advance =
                      c.prepareStatement("UPDATE counter_row SET vs = ? WHERE id = 1")) {
                c.setAutoCommit(false);
                for (int i = 0; i < each; i++) {
                  long t0 = System.nanoTime();
                  long vs;
                  try (var rs = lock.executeQuery()) {
                    rs.next();
                    vs = rs.getLong(1) + 1;
                  }
                  up.setBytes(1, Key.of("job", (long) t, (long) i).encoded());
                  up.setBytes(2, new byte[100]);
                  up.setLong(3, vs);
                  up.executeUpdate();
                  advance.setLong(1, vs);
                  advance.executeUpdate();
                  c.commit();
                  latencies[(int) index.getAndIncrement()] = System.nanoTime() - t0;
                }
                c.setAutoCommit(true);
              }
            });
    report(
        "baseline: transaction locking and advancing one counter row (schema v1's scheme), "
            + threads
            + " thread(s)",
        threads * each,
        elapsed,
        latencies);
  }

  private static void batches(DataSource pool, int batchSize, int batchCount) throws Exception {
    try (PostgresKvStore store = PostgresKvStore.builder(pool).tablePrefix("bench_batch").build()) {
      store.commit(AtomicOperation.builder().set(Key.of("warm"), new byte[16]).build());
      long[] latencies = new long[batchCount];
      long elapsed =
          run(
              1,
              t -> {
                for (int b = 0; b < batchCount; b++) {
                  List<AtomicOperation> ops = new ArrayList<>(batchSize);
                  for (int i = 0; i < batchSize; i++) {
                    ops.add(
                        AtomicOperation.builder()
                            .set(Key.of("job", (long) b, (long) i), new byte[100])
                            .build());
                  }
                  long t0 = System.nanoTime();
                  store.commitAll(ops);
                  latencies[b] = System.nanoTime() - t0;
                }
              });
      report(
          "commitAll of " + batchSize + " operations, 1 thread (operations/s; latency per batch)",
          batchSize * batchCount,
          elapsed,
          latencies);
    }
  }

  /**
   * Two nodes, four threads each, claim 2,000 index entries eight at a time until none is left,
   * through the store's claim path or the SPI's default (list, getMany, commitAll): entries claimed
   * per second, and how many entries a claim read but could not take (its check refused it, or its
   * record was already taken by another claim).
   */
  private static void claims(DataSource pool, boolean defaultPath) throws Exception {
    int entries = 2_000;
    int threadsPerNode = 4;
    String prefix = "bench_claim_" + (defaultPath ? "default" : "skip");
    try (PostgresKvStore a = PostgresKvStore.builder(pool).tablePrefix(prefix).build();
        PostgresKvStore b = PostgresKvStore.builder(pool).tablePrefix(prefix).build()) {
      List<AtomicOperation> fill = new ArrayList<>();
      for (long n = 0; n < entries; n++) {
        fill.add(
            AtomicOperation.builder()
                .set(Key.of("idx", n), new byte[0])
                .set(Key.of("rec", n), new byte[] {0})
                .build());
      }
      a.commitAll(fill);
      KvStore[] nodes =
          defaultPath
              ? new KvStore[] {new DefaultClaims(a), new DefaultClaims(b)}
              : new KvStore[] {a, b};
      KeyRange index = KeyRange.prefix(Key.of("idx"));
      AtomicLong refused = new AtomicLong();
      AtomicLong claimed = new AtomicLong();
      AtomicLong calls = new AtomicLong();
      long[] latencies = new long[entries * 4];
      AtomicLong sample = new AtomicLong();
      long elapsed =
          run(
              2 * threadsPerNode,
              t -> {
                KvStore node = nodes[t % 2];
                while (claimed.get() < entries) {
                  long t0 = System.nanoTime();
                  AtomicLong stale = new AtomicLong();
                  List<CommitResult> results =
                      node.claim(
                          index,
                          8,
                          new KvStore.ClaimPlanner() {
                            @Override
                            public Key recordKey(Key indexKey) {
                              return Key.of("rec", indexKey.getLong(1));
                            }

                            @Override
                            public List<AtomicOperation> plan(
                                List<KvEntry> idx, List<Optional<KvEntry>> records) {
                              List<AtomicOperation> ops = new ArrayList<>();
                              stale.set(0);
                              for (int i = 0; i < idx.size(); i++) {
                                KvEntry r = records.get(i).orElseThrow();
                                if (r.value()[0] != 0) {
                                  stale.incrementAndGet(); // another claim took it after this one
                                  // read the index
                                  continue;
                                }
                                ops.add(
                                    AtomicOperation.builder()
                                        .check(r)
                                        .set(r.key(), new byte[] {1})
                                        .delete(idx.get(i).key())
                                        .build());
                              }
                              return ops;
                            }
                          });
                  long i = sample.getAndIncrement();
                  if (i < latencies.length) {
                    latencies[(int) i] = System.nanoTime() - t0;
                  }
                  calls.incrementAndGet();
                  refused.addAndGet(stale.get());
                  for (CommitResult r : results) {
                    if (r.ok()) {
                      claimed.incrementAndGet();
                    } else {
                      refused.incrementAndGet();
                    }
                  }
                }
              });
      report(
          String.format(
              Locale.ROOT,
              "claims, 2 nodes x %d threads, 8 per claim, %s (entries/s; latency per claim):"
                  + " %d claim calls, %d entries lost to another claim",
              threadsPerNode,
              defaultPath ? "SPI default" : "FOR UPDATE SKIP LOCKED",
              calls.get(),
              refused.get()),
          entries,
          elapsed,
          Arrays.copyOf(latencies, (int) Math.min(sample.get(), latencies.length)));
    }
  }

  /** The store with the SPI's default claim: everything else is the store's. */
  private static final class DefaultClaims extends ForwardingKvStore {
    DefaultClaims(KvStore store) {
      super(store);
    }
  }

  private static void notificationLatency(DataSource pool, int samples) throws Exception {
    try (PostgresKvStore sender =
            PostgresKvStore.builder(pool).tablePrefix("bench_notify").build();
        PostgresKvStore receiver =
            PostgresKvStore.builder(pool).tablePrefix("bench_notify").build()) {
      AtomicLong heard = new AtomicLong();
      Object monitor = new Object();
      receiver.subscribe(
          Key.of("q"),
          () -> {
            synchronized (monitor) {
              heard.incrementAndGet();
              monitor.notifyAll();
            }
          });
      TestDatabase.await("listener connected", Duration.ofSeconds(10), () -> heard.get() > 0);
      long[] latencies = new long[samples];
      for (int i = 0; i < samples; i++) {
        long before = heard.get();
        long t0 = System.nanoTime();
        sender.commit(
            AtomicOperation.builder().set(Key.of("q", "ready", (long) i), new byte[8]).build());
        synchronized (monitor) {
          while (heard.get() == before) {
            monitor.wait(1_000);
          }
        }
        latencies[i] = System.nanoTime() - t0;
      }
      Arrays.sort(latencies);
      print(
          String.format(
              Locale.ROOT,
              "  commit on node A -> listener called on node B: p50 %.2f ms, p99 %.2f ms (%d samples)",
              latencies[samples / 2] / 1e6,
              latencies[samples * 99 / 100] / 1e6,
              samples));
    }
  }

  /** Push on node A, the handler of an idle worker on node B starts: one job at a time. */
  private static void pickupLatency(DataSource pool, int samples) throws Exception {
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    try (PostgresKvStore a = PostgresKvStore.builder(pool).tablePrefix("bench_pickup").build();
        PostgresKvStore b = PostgresKvStore.builder(pool).tablePrefix("bench_pickup").build()) {
      Queue<Long> onA = Queue.builder(a, "jobs", LONGS).build();
      Queue<Long> onB = Queue.builder(b, "jobs", LONGS).build();
      long[] startedAt = new long[samples];
      Object monitor = new Object();
      AtomicLong done = new AtomicLong();
      Worker<Long> worker =
          onB.worker(
              (job, ctx) -> {
                synchronized (monitor) {
                  startedAt[(int) (long) job.state()] = System.nanoTime();
                  done.incrementAndGet();
                  monitor.notifyAll();
                }
              },
              WorkerOptions.defaults().pollInterval(Duration.ofMinutes(10)),
              executor);
      worker.start();
      TestDatabase.await("b listens", Duration.ofSeconds(10), b::isListening);
      long[] latencies = new long[samples];
      for (int i = 0; i < samples; i++) {
        long t0 = System.nanoTime();
        onA.push((long) i);
        synchronized (monitor) {
          while (done.get() <= i) {
            monitor.wait(1_000);
          }
        }
        latencies[i] = startedAt[i] - t0;
      }
      worker.stop(Duration.ofSeconds(10));
      Arrays.sort(latencies);
      print(
          String.format(
              Locale.ROOT,
              "  push on node A -> handler started on idle node B: p50 %.2f ms, p99 %.2f ms (%d jobs, one at a time)",
              latencies[samples / 2] / 1e6,
              latencies[samples * 99 / 100] / 1e6,
              samples));
    } finally {
      executor.shutdownNow();
    }
  }

  private static final Codec<Long> LONGS =
      new Codec<>() {
        @Override
        public byte[] encode(Long state) {
          return ByteBuffer.allocate(8).putLong(state).array();
        }

        @Override
        public Long decode(byte[] bytes) {
          return ByteBuffer.wrap(bytes).getLong();
        }
      };

  @FunctionalInterface
  private interface Body {
    void run(int thread) throws Exception;
  }

  private static long run(int threads, Body body) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  body.run(thread);
                  return null;
                }));
      }
      long t0 = System.nanoTime();
      start.countDown();
      for (Future<?> f : futures) {
        f.get(5, TimeUnit.MINUTES);
      }
      return System.nanoTime() - t0;
    } finally {
      pool.shutdownNow();
    }
  }

  private static void report(String what, int count, long elapsedNanos, long[] latencies) {
    if (latencies.length == 0) {
      latencies = new long[] {0};
    }
    long[] sorted = latencies.clone();
    Arrays.sort(sorted);
    print(
        String.format(
            Locale.ROOT,
            "  %-90s %8.0f /s   p50 %.2f ms   p99 %.2f ms",
            what,
            count / (elapsedNanos / 1e9),
            sorted[sorted.length / 2] / 1e6,
            sorted[Math.min(sorted.length - 1, sorted.length * 99 / 100)] / 1e6));
  }

  private static String version(DataSource pool) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SHOW server_version")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void print(String line) {
    System.out.println(line);
  }
}
