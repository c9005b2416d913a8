package dev.kvmq.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.RateLimit;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.eclipsestore.Durability;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import dev.kvmq.store.postgres.PostgresKvStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The cost of flow control (docs/flow-control.md), each scenario on a fresh queue of each store,
 * against the plain drain:
 *
 * <ul>
 *   <li>{@code plain}: N jobs of no group pushed, then drained by one worker;
 *   <li>{@code groups}: the same N jobs spread over 1,000 groups, each with a limit of 2;
 *   <li>{@code rate}: the plain drain under a rate limit it does not reach (100,000 starts per 100
 *       ms);
 *   <li>{@code saturated}: one group (limit 1) with 100,000 waiting jobs whose one admitted job
 *       runs until the end, then N jobs of 1,000 other groups: their drain time against the {@code
 *       groups} drain says whether claims stay flat beside a saturated group's backlog.
 * </ul>
 *
 * <pre>
 * java -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' \
 *   dev.kvmq.bench.FlowBench [--stores memory,eclipsestore,postgres] [--scenarios plain,groups,rate,saturated] [--jobs N] [--backlog N]
 * </pre>
 *
 * Prints one line per store and scenario: jobs, milliseconds, jobs per second.
 */
public final class FlowBench {

  private FlowBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args the options above
   * @throws Exception if a store fails
   */
  public static void main(String[] args) throws Exception {
    List<String> stores = List.of("memory", "eclipsestore", "postgres");
    List<String> scenarios = List.of("plain", "groups", "rate", "saturated");
    int jobs = 20_000;
    int backlog = 100_000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--stores" -> stores = Arrays.asList(args[i + 1].split(","));
        case "--scenarios" -> scenarios = Arrays.asList(args[i + 1].split(","));
        case "--jobs" -> jobs = Integer.parseInt(args[i + 1]);
        case "--backlog" -> backlog = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    System.out.println("# kvmq FlowBench, " + jobs + " jobs, saturated backlog " + backlog);
    EmbeddedPostgres pg = stores.contains("postgres") ? EmbeddedPostgres.builder().start() : null;
    try {
      for (String store : stores) {
        for (String scenario : scenarios) {
          try (Fresh f = fresh(store, pg)) {
            run(store, scenario, f.store, jobs, backlog);
          }
        }
      }
    } finally {
      if (pg != null) {
        pg.close();
      }
    }
  }

  /** A fresh store and what closes it. */
  private record Fresh(KvStore store, HikariDataSource pool) implements AutoCloseable {
    @Override
    public void close() {
      store.close();
      if (pool != null) {
        pool.close();
      }
    }
  }

  private static final AtomicInteger SCHEMAS = new AtomicInteger();

  private static Fresh fresh(String store, EmbeddedPostgres pg) throws Exception {
    return switch (store) {
      case "memory" -> new Fresh(new InMemoryKvStore(), null);
      case "eclipsestore" -> {
        Path dir = Files.createTempDirectory("kvmq-flow");
        yield new Fresh(
            EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE).open(),
            null);
      }
      case "postgres" -> {
        HikariConfig c = new HikariConfig();
        c.setDataSource(pg.getPostgresDatabase());
        c.setMaximumPoolSize(16);
        HikariDataSource pool = new HikariDataSource(c);
        yield new Fresh(
            PostgresKvStore.builder(pool).schema("flow" + SCHEMAS.incrementAndGet()).build(), pool);
      }
      default -> throw new IllegalArgumentException("unknown store " + store);
    };
  }

  private static void run(String storeName, String scenario, KvStore store, int jobs, int backlog)
      throws Exception {
    Queue.Builder<String> b = Queue.builder(store, "flow", Codecs.utf8());
    switch (scenario) {
      case "groups", "saturated" -> b.groupLimit(2).groupLimit("hot", 1);
      case "rate" -> b.rateLimit(new RateLimit(100_000, Duration.ofMillis(100)));
      case "plain" -> {}
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    }
    Queue<String> q = b.build();
    CountDownLatch end = new CountDownLatch(1);
    AtomicInteger done = new AtomicInteger();
    if (scenario.equals("saturated")) {
      push(q, "hot", backlog, i -> "hot");
    }
    push(
        q,
        "job",
        jobs,
        scenario.equals("plain") || scenario.equals("rate") ? i -> null : i -> "g" + (i % 1000));
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(10);
    Worker<String> w =
        q.worker(
            (job, ctx) -> {
              if (job.state().equals("hot")) {
                end.await(); // the saturated group's one admitted job runs until the end
                return;
              }
              done.incrementAndGet();
            },
            WorkerOptions.defaults().concurrency(8).prefetch(16),
            executor);
    long t0 = System.nanoTime();
    w.start();
    while (done.get() < jobs) {
      Thread.sleep(1);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    end.countDown();
    w.stop();
    executor.shutdown();
    executor.awaitTermination(30, TimeUnit.SECONDS);
    System.out.printf(
        "%-12s %-10s %8d jobs %8d ms %10.0f jobs/s%n",
        storeName, scenario, jobs, ms, jobs * 1000.0 / Math.max(1, ms));
  }

  private static void push(
      Queue<String> q, String state, int n, java.util.function.IntFunction<String> group) {
    for (int i = 0; i < n; ) {
      String g = group.apply(i);
      List<String> batch = new ArrayList<>();
      while (i < n && batch.size() < 500 && java.util.Objects.equals(group.apply(i), g)) {
        batch.add(state);
        i++;
      }
      q.pushAll(batch, JobOptions.defaults().group(g));
    }
  }
}
