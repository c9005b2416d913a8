package dev.kvmq.bench.queue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.kvmq.Retention;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.eclipsestore.Durability;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import dev.kvmq.store.postgres.PostgresKvStore;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One system in one JVM: {@link QueueBench} starts it per system and repetition, and reads the
 * {@code RESULT name value} lines it prints. Not meant to be run by hand (but it can be: {@code
 * --system kvmq-memory --scenarios drain}).
 */
public final class QueueBenchChild {

  private static final int BATCH = 500;
  private static final int WARMUP_ROUNDS = 20;
  private static final double WARMUP_QUIET_PERCENT = 5.0;
  private static final Logger JOBRUNR_LOG = Logger.getLogger("org.jobrunr");

  private final Map<String, String> opts;
  private final int threads;

  /** kvmq's jobs claimed ahead; negative: three times {@link #threads}. */
  private final int prefetch;

  /** kvmq's WorkerOptions.handoff ({@code --handoff}, default on). */
  private final boolean handoff;

  private int nextId = 1;

  private String system;
  private HikariDataSource pool;

  /** The system of the current phase, and its EclipseStore directory (or null). */
  private Sut current;

  private Path dir;
  private boolean settingsPrinted;

  private QueueBenchChild(Map<String, String> opts) {
    this.opts = opts;
    this.threads = Integer.parseInt(opts.getOrDefault("threads", "8"));
    this.prefetch = Integer.parseInt(opts.getOrDefault("prefetch", "-1"));
    String h = opts.getOrDefault("handoff", "on");
    if (!h.equals("on") && !h.equals("off")) {
      throw new IllegalArgumentException("--handoff takes on or off, not " + h);
    }
    this.handoff = h.equals("on");
  }

  /**
   * Runs the scenarios of one system and prints their results.
   *
   * @param args {@code --system NAME --scenarios drain,pickup,claim} and the sizes (see {@link
   *     QueueBench})
   * @throws Exception if the system fails; the parent reports the system as failed
   */
  public static void main(String[] args) throws Exception {
    Logger.getLogger("").setLevel(Level.WARNING);
    JOBRUNR_LOG.setLevel(Level.SEVERE); // its "slow job filter" warnings on every busy second
    Map<String, String> opts = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
      }
      opts.put(args[i].substring(2), args[i + 1]);
    }
    new QueueBenchChild(opts).run();
    System.out.flush();
    System.exit(0); // peers leave non-daemon threads behind
  }

  private void run() throws Exception {
    system = opts.get("system");
    if (system.equals(QueueBench.DISK)) {
      Path d = Path.of(opts.getOrDefault("dir", System.getProperty("java.io.tmpdir")));
      int forces =
          Integer.parseInt(opts.getOrDefault("forces", Integer.toString(ForceProbe.FORCES)));
      result(
          "settings",
          "FileChannel.force(false) in "
              + d
              + ", "
              + forces
              + " forces per shape: 4 KiB appended, 8 KiB overwritten in a preallocated file,"
              + " 4 KiB appended one every "
              + ForceProbe.PACE_MICROS / 1000
              + " ms");
      for (Map.Entry<String, Double> e : ForceProbe.measure(d, forces).entrySet()) {
        result(e.getKey(), e.getValue());
      }
      return;
    }
    List<String> scenarios =
        Arrays.asList(opts.getOrDefault("scenarios", "drain,pickup").split(","));
    if (system.endsWith("postgres")
        || system.equals("quartz-jdbc")
        || system.startsWith("dbscheduler")) {
      pool = openPool(opts.get("jdbc"));
    }
    try {
      if (scenarios.contains("drain")
          || scenarios.contains("pickup")
          || scenarios.contains("drain-unique")
          || scenarios.contains("prune")
          || scenarios.contains("nodes")) {
        warmUp(); // the prune scenario's first drain must not be the JVM's first
      }
      if (scenarios.contains("nodes")) {
        nodes();
      }
      if (scenarios.contains("drain-unique")) {
        drainUnique();
      }
      if (scenarios.contains("drain")) {
        drain();
      }
      if (scenarios.contains("pickup")) {
        pickup();
      }
      if (scenarios.contains("claim")) {
        claim();
      }
      if (scenarios.contains("prune")) {
        prune();
      }
    } finally {
      closeCurrent();
      if (pool != null) {
        pool.close();
      }
    }
  }

  private HikariDataSource openPool(String jdbc) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(jdbc);
    c.setUsername("postgres");
    c.setMaximumPoolSize(Integer.parseInt(opts.getOrDefault("pool", "16")));
    c.setPoolName("bench");
    return new HikariDataSource(c);
  }

  /**
   * The system on fresh state, for one phase: the previous phase's system closed, and its storage
   * gone (a new in-memory store, a new EclipseStore directory, or on PostgreSQL every table of the
   * database dropped, created again by the system, and ANALYZEd). The JVM (and so the JIT) stays.
   */
  private Sut fresh() throws Exception {
    closeCurrent();
    if (pool != null) {
      try (Connection c = pool.getConnection();
          Statement st = c.createStatement()) {
        // every schema but PostgreSQL's own: the tables, sequences and functions of the system
        st.execute(
            """
            do $$
            declare r record;
            begin
              for r in select nspname from pg_namespace
                  where nspname not like 'pg\\_%' and nspname <> 'information_schema' loop
                execute format('drop schema %I cascade', r.nspname);
              end loop;
              create schema public;
            end $$""");
      }
    }
    if (system.startsWith("kvmq-eclipsestore")) {
      dir =
          Files.createTempDirectory(
              Path.of(opts.getOrDefault("dir", System.getProperty("java.io.tmpdir"))),
              "kvmq-bench-");
    }
    current = make(system, pool, dir);
    if (!settingsPrinted) {
      settingsPrinted = true;
      result(
          "settings",
          current.settings()
              + (pool != null
                  ? " pool=HikariCP "
                      + Versions.of("hikaricp")
                      + " ("
                      + pool.getMaximumPoolSize()
                      + " connections)"
                  : ""));
    }
    analyze();
    return current;
  }

  /**
   * On PostgreSQL: ANALYZE, so that a timed phase starts with statistics of what it holds, then
   * CHECKPOINT, so that it starts with no checkpoint under way or due: one that ran into a drain
   * (its writes and forces, and the full-page images every first change of a page after it puts in
   * the WAL) would slow whichever system it met, and the next one is then {@code
   * checkpoint_timeout} (5 min) or {@code max_wal_size} (1 GB of WAL) away.
   */
  private void analyze() throws Exception {
    if (pool != null) {
      try (Connection c = pool.getConnection();
          Statement st = c.createStatement()) {
        st.execute("analyze");
        st.execute("checkpoint");
      }
    }
  }

  /**
   * On PostgreSQL: the checkpoints the server has started since it started, timed and requested
   * ({@code pg_stat_checkpointer}, PostgreSQL 17); -1 elsewhere.
   */
  private long checkpoints() throws Exception {
    if (pool == null) {
      return -1;
    }
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("select num_timed + num_requested from pg_stat_checkpointer")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void closeCurrent() throws Exception {
    if (current != null) {
      Sut s = current;
      current = null;
      s.close();
    }
    if (dir != null) {
      Path d = dir;
      dir = null;
      deleteTree(d);
    }
  }

  /**
   * kvmq's worker settings in the drain and pickup scenarios (the claim scenario runs concurrency
   * 1).
   */
  private String kvmqWorker() {
    return " concurrency="
        + threads
        + " prefetch="
        + (prefetch < 0 ? 3 * threads : prefetch)
        + " handoff="
        + (handoff ? "on" : "off")
        + " executor="
        + (threads + KvmqSut.WORKER_TASK_THREADS)
        + " threads";
  }

  private Sut make(String system, HikariDataSource pool, Path dir) throws Exception {
    return switch (system) {
      case "kvmq-memory" ->
          new KvmqSut(
              new InMemoryKvStore(),
              "kvmq " + Versions.of("kvmq") + " " + "InMemoryKvStore" + kvmqWorker(),
              prefetch,
              handoff,
              null);
      case "kvmq-eclipsestore-fsync" ->
          new KvmqSut(
              EclipseStoreKvStore.builder(dir).durability(Durability.FSYNC).open(),
              "kvmq "
                  + Versions.of("kvmq")
                  + " "
                  + "EclipseStoreKvStore FSYNC"
                  + kvmqWorker()
                  + " dir="
                  + dir.getParent(),
              prefetch,
              handoff,
              null);
      case "kvmq-eclipsestore-pcs" ->
          new KvmqSut(
              EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE).open(),
              "kvmq "
                  + Versions.of("kvmq")
                  + " "
                  + "EclipseStoreKvStore PROCESS_CRASH_SAFE"
                  + kvmqWorker()
                  + " dir="
                  + dir.getParent(),
              prefetch,
              handoff,
              null);
      case "kvmq-postgres" ->
          new KvmqSut(
              PostgresKvStore.builder(pool).build(),
              "kvmq " + Versions.of("kvmq") + " " + "PostgresKvStore" + kvmqWorker(),
              prefetch,
              handoff,
              null);
      case "dbscheduler-poll" -> new DbSchedulerSut(pool, false, dbSchedulerUpper());
      case "dbscheduler-immediate" -> new DbSchedulerSut(pool, true, dbSchedulerUpper());
      case "jobrunr-memory" -> new JobRunrSut(null);
      case "jobrunr-postgres" -> new JobRunrSut(pool);
      case "quartz-ram" -> new QuartzSut(null, threads);
      case "quartz-jdbc" -> new QuartzSut(pool, threads);
      default -> throw new IllegalArgumentException("unknown system " + system);
    };
  }

  // ---- scenario 1: drain throughput (and memory)

  /**
   * Warms the JVM up in rounds, each on fresh storage: {@code --warmup} jobs (default: as many as
   * this system's timed drains, {@link #drainJobs()}) pushed in batches and drained, then a quarter
   * as many pushed one by one and drained, each drain by {@link #drainOnce} (the timed drains' own
   * code, its measurements made and not printed), with the resident-set sampler running as in the
   * timed drains. Rounds go on until one spends at most {@value #WARMUP_QUIET_PERCENT}% of its wall
   * time compiling (the JIT's accumulated compilation time, {@link #jitMillis()}), or {@code
   * --warmup-rounds} (default {@value #WARMUP_ROUNDS}) have run: the same rule for every system, so
   * that no timed phase measures one system's JIT at work while another's has settled. Prints the
   * rounds it took and the last round's JIT share.
   *
   * <p>The warm-up runs the timed drains' code, not a copy of it, because code that first runs
   * after the warm-up loads classes, and a class loaded then can invalidate compiled code that
   * relied on the classes loaded before it: on 2026-12-07 the first use of the sampler's file read
   * and of the results' formatting, right after a warm-up that had ended quiet, made the compiled
   * {@code ByteBuffer.wrap} and every kvmq method that had inlined it (the job record's decoding,
   * the worker's dispatch, the settler) not entrant, and the JIT compiled them again during the
   * timed drain (docs/performance.md).
   */
  private void warmUp() throws Exception {
    int n = Integer.parseInt(opts.getOrDefault("warmup", Integer.toString(drainJobs())));
    int maxRounds =
        Integer.parseInt(opts.getOrDefault("warmup-rounds", Integer.toString(WARMUP_ROUNDS)));
    int round = 0;
    double share = Double.NaN;
    RssSampler rss = new RssSampler();
    rss.start();
    try {
      while (round < maxRounds) {
        round++;
        long wall0 = System.nanoTime();
        long jit0 = jitMillis();
        drainOnce("batch", n, false);
        drainOnce("single", n / 4, false);
        share = jitPercentSince(jit0, wall0);
        if (share <= WARMUP_QUIET_PERCENT) {
          break;
        }
      }
    } finally {
      rss.stop();
    }
    result("warmup_rounds", round);
    result("warmup_last_jit_percent", share);
  }

  /**
   * db-scheduler's lock-and-fetch upper limit that lets it hold as many jobs as kvmq's worker
   * (concurrency + prefetch): {@code (threads + prefetch) / threads}, 4.0 with the defaults.
   */
  private double dbSchedulerUpper() {
    int p = prefetch < 0 ? 3 * threads : prefetch;
    return (threads + p) / (double) threads;
  }

  /**
   * The JIT's accumulated compilation time in ms (summed over its compiler threads, so it can grow
   * faster than the wall clock), or 0 where the JVM does not monitor it.
   */
  private static long jitMillis() {
    java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime()
        : 0;
  }

  /**
   * The CPU time of this JVM's threads (the system's worker, its store, the JIT and the garbage
   * collector; not a database server's processes) in ns, or -1 where the platform cannot tell.
   */
  private static long jvmCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime()
        : -1;
  }

  /**
   * The JIT's compilation time since {@code jit0} ({@link #jitMillis()}) as a percentage of the
   * wall time since {@code wall0} ({@link System#nanoTime()}).
   */
  private static double jitPercentSince(long jit0, long wall0) {
    return 100.0 * (jitMillis() - jit0) / ((System.nanoTime() - wall0) / 1e6);
  }

  /**
   * Jobs per drain of this system: {@code --memory-jobs} (default {@value QueueBench#MEMORY_JOBS})
   * for the pair the in-memory target compares, whose drains of {@code --jobs} (20,000) last a
   * fraction of a second; {@code --jobs} for every other system.
   */
  private int drainJobs() {
    return QueueBench.IN_MEMORY_PAIR.contains(system)
        ? Integer.parseInt(
            opts.getOrDefault("memory-jobs", Integer.toString(QueueBench.MEMORY_JOBS)))
        : Integer.parseInt(opts.getOrDefault("jobs", "20000"));
  }

  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void drain() throws Exception {
    int n = drainJobs();
    RssSampler rss = new RssSampler();
    rss.start();
    try {
      drainOnce("single", n, true);
      drainOnce("batch", n, true);
    } finally {
      rss.stop();
    }
    result("rss_peak_mb", rss.peakKb.get() / 1024.0);
  }

  /**
   * One drain on fresh storage (no finished jobs of an earlier phase): {@code n} jobs pushed one by
   * one ({@code single}) or in batches ({@code batch}), then drained by the system's worker.
   * Measures the push, the heap per job (batch), the drain's throughput, its window in wall-clock
   * ms, the JIT's share of it, the host's steal during it ({@link Steal}, which QueueBench's steal
   * rule reads), this JVM's CPU time per job in it (the system's start and stop included) and, on
   * PostgreSQL, the checkpoints in it, and prints them if {@code timed}; the warm-up runs it
   * untimed, so that the timed drains run no code for the first time.
   */
  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void drainOnce(String mode, int n, boolean timed) throws Exception {
    Sut sut = fresh();
    long heapBefore = usedHeapAfterGc();
    Probe.Phase p = Probe.begin(nextId, n);
    long t0 = System.nanoTime();
    if (mode.equals("single")) {
      pushSingles(sut, nextId, n);
    } else {
      pushBatches(sut, nextId, n);
    }
    long t1 = System.nanoTime();
    nextId += n;
    result(timed, "push_" + mode + "_per_s", n / ((t1 - t0) / 1e9));
    if (mode.equals("batch")) {
      result(timed, "heap_bytes_per_job", (usedHeapAfterGc() - heapBefore) / (double) n);
    }
    long checkpoints0 = checkpoints();
    analyze(); // the drain starts with statistics of the pushed backlog, and no checkpoint due
    long jit0 = jitMillis();
    long[] cpu0 = Steal.read();
    long jvmCpu0 = jvmCpuNanos();
    long wall0 = System.nanoTime();
    long startedAt = System.currentTimeMillis();
    try (AutoCloseable running = sut.start(threads)) {
      if (!p.awaitFinished(900)) {
        throw new IllegalStateException(
            (timed ? "drain: " : "warm-up: ")
                + p.finished.get()
                + " of "
                + n
                + " jobs finished in 900 s");
      }
    }
    // wall-clock ms, to cut a system-wide profile to the drain (perf record -k CLOCK_REALTIME)
    result(timed, "drain_window_" + mode, startedAt + "-" + System.currentTimeMillis());
    result(timed, "drain_jit_percent_" + mode, jitPercentSince(jit0, wall0));
    result(timed, "drain_steal_percent_" + mode, Steal.percentSince(cpu0));
    if (jvmCpu0 >= 0) {
      result(timed, "drain_jvm_cpu_us_per_job_" + mode, (jvmCpuNanos() - jvmCpu0) / 1e3 / n);
    }
    if (checkpoints0 >= 0) {
      // from before the drain's CHECKPOINT to its end: 1 is that one, more were in the drain
      result(timed, "drain_checkpoints_" + mode, checkpoints() - checkpoints0);
    }
    long first = Arrays.stream(p.startNanos()).min().orElseThrow();
    result(timed, "drain_after_" + mode + "_per_s", n / ((p.lastFinishNanos - first) / 1e9));
  }

  /**
   * The cost of unique keys (kvmq only): the drain of jobs pushed one by one, plain and then each
   * with a unique key of its own (taken by the push's commit, released by the completion's), each
   * on fresh storage in the same JVM.
   */
  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void drainUnique() throws Exception {
    int n = Integer.parseInt(opts.getOrDefault("jobs", "20000"));
    for (String mode : List.of("plain", "keyed")) {
      Sut sut = fresh();
      Probe.Phase p = Probe.begin(nextId, n);
      int from = nextId;
      long t0 = System.nanoTime();
      inParallel(
          n,
          (lo, hi) -> {
            for (int i = lo; i < hi; i++) {
              if (mode.equals("plain")) {
                sut.pushOne(from + i);
              } else {
                sut.pushOneUnique(from + i);
              }
            }
          });
      long t1 = System.nanoTime();
      nextId += n;
      result("unique_push_" + mode + "_per_s", n / ((t1 - t0) / 1e9));
      analyze();
      try (AutoCloseable running = sut.start(threads)) {
        if (!p.awaitFinished(900)) {
          throw new IllegalStateException(
              "drain-unique: " + p.finished.get() + " of " + n + " jobs finished in 900 s");
        }
      }
      long first = Arrays.stream(p.startNanos()).min().orElseThrow();
      result("unique_drain_" + mode + "_per_s", n / ((p.lastFinishNanos - first) / 1e9));
    }
  }

  private void pushSingles(Sut sut, int from, int n) throws Exception {
    inParallel(
        n,
        (lo, hi) -> {
          for (int i = lo; i < hi; i++) {
            sut.pushOne(from + i);
          }
        });
  }

  private void pushBatches(Sut sut, int from, int n) throws Exception {
    inParallel(
        n,
        (lo, hi) -> {
          for (int i = lo; i < hi; i += BATCH) {
            sut.pushBatch(ids(from + i, Math.min(BATCH, hi - i)));
          }
        });
  }

  private static List<Integer> ids(int from, int n) {
    List<Integer> ids = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ids.add(from + i);
    }
    return ids;
  }

  /** Splits {@code 0..n} in {@link #threads} stripes and runs them on as many threads. */
  private void inParallel(int n, Stripes.Range range) throws Exception {
    Stripes.run(n, threads, range);
  }

  // ---- the nodes scenario: one of K worker JVMs on one PostgreSQL database (kvmq-postgres)

  /** How often a node asks the store whether any job is still to run. */
  private static final long PENDING_POLL_NANOS = 100_000_000L;

  /**
   * One worker JVM of the nodes scenario, after its warm-up on its own database ({@code --jdbc}).
   * It talks with {@link QueueBench} on stdin and stdout: it prints {@code WARM}; reads {@code
   * PUSH} (this JVM makes the shared database's tables fresh and pushes the backlog, ids {@link
   * Nodes#BASE} on, in batches as the drain scenario's batch drain, then ANALYZE) or {@code OPEN}
   * (it only opens the store on the tables the pushing JVM made); prints {@code READY}; reads
   * {@code GO}, starts its worker (the drain's settings) and stops it once the store holds no job
   * waiting, delayed or processing. Then it writes the id of every run of its handler to {@code
   * --ids-file}, one a line, and prints its first handler start and last completion (wall-clock
   * ms).
   */
  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void nodes() throws Exception {
    int n = Integer.parseInt(opts.getOrDefault("jobs", "20000"));
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    closeCurrent();
    pool.close();
    pool = openPool(opts.get("shared-jdbc"));
    signal("WARM");
    String command = in.readLine();
    KvmqSut sut;
    if ("PUSH".equals(command)) {
      sut = (KvmqSut) fresh();
      long t0 = System.nanoTime();
      pushBatches(sut, Nodes.BASE, n);
      result("push_batch_per_s", n / ((System.nanoTime() - t0) / 1e9));
      analyze();
    } else if ("OPEN".equals(command)) {
      sut = (KvmqSut) make(system, pool, null);
      current = sut;
    } else {
      throw new IllegalStateException("nodes: expected PUSH or OPEN on stdin, got " + command);
    }
    Probe.Phase p = Probe.begin(Nodes.BASE, n);
    signal("READY");
    command = in.readLine();
    if (!"GO".equals(command)) {
      throw new IllegalStateException("nodes: expected GO on stdin, got " + command);
    }
    long deadline = System.nanoTime() + 900_000_000_000L;
    try (AutoCloseable running = sut.start(threads)) {
      // stop after two looks in a row, a poll apart, found nothing to run: one look reads the
      // statuses one after the other, and a job may move between them (a retry, say)
      int emptyLooks = 0;
      while (emptyLooks < 2) {
        emptyLooks = sut.anyPending() ? 0 : emptyLooks + 1;
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "nodes: jobs still to run after 900 s; this JVM finished " + p.finished.get());
        }
        LockSupport.parkNanos(PENDING_POLL_NANOS);
      }
    }
    long ran = 0;
    try (BufferedWriter w =
        Files.newBufferedWriter(Path.of(opts.get("ids-file")), StandardCharsets.UTF_8)) {
      for (int i = 0; i < n; i++) {
        for (int r = p.runs.get(i); r > 0; r--) {
          w.write(Integer.toString(Nodes.BASE + i));
          w.newLine();
          ran++;
        }
      }
    }
    result("node_ran", ran);
    result("node_first_start_ms", p.firstStartMillis);
    result("node_last_finish_ms", p.lastFinishMillis);
  }

  /** A line of the nodes scenario's handshake with the parent. */
  private static void signal(String word) {
    System.out.println(word);
    System.out.flush();
  }

  // ---- scenario 2: pickup latency

  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void pickup() throws Exception {
    Sut sut = fresh();
    int seconds = Integer.parseInt(opts.getOrDefault("pickup-seconds", "10"));
    int rate = Integer.parseInt(opts.getOrDefault("pickup-rate", "100"));
    int n = seconds * rate;
    long period = 1_000_000_000L / rate;
    long[] called = new long[n]; // just before each push call
    long[] returned = new long[n]; // when it returned
    try (AutoCloseable running = sut.start(threads)) {
      LockSupport.parkNanos(1_000_000_000L); // let the workers go idle first
      Probe.Phase p = Probe.begin(nextId, n);
      long[] cpu0 = Steal.read();
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long due = t0 + i * period;
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
        }
        called[i] = System.nanoTime();
        sut.pushOne(nextId + i);
        returned[i] = System.nanoTime();
      }
      nextId += n;
      if (!p.awaitStarted(120)) {
        throw new IllegalStateException(
            "pickup: " + p.started.get() + " of " + n + " jobs started in 120 s");
      }
      result("pickup_steal_percent", Steal.percentSince(cpu0));
      // every system timed alike: from just before the push call to the handler's first line
      double[] pickup = Latencies.sortedMs(called, p.startNanos());
      result("pickup_p50_ms", Latencies.quantile(pickup, 0.50));
      result("pickup_p99_ms", Latencies.quantile(pickup, 0.99));
      result("pickup_max_ms", pickup[n - 1]);
      // the push call's own duration, on its own
      double[] push = Latencies.sortedMs(called, returned);
      result("push_call_p50_ms", Latencies.quantile(push, 0.50));
      result("push_call_p99_ms", Latencies.quantile(push, 0.99));
      if (!p.awaitFinished(120)) {
        throw new IllegalStateException(
            "pickup: " + p.finished.get() + " of " + n + " jobs finished in 120 s");
      }
    }
  }

  // ---- scenario 3: claim cost against a backlog of delayed jobs (kvmq only)

  private void claim() throws Exception {
    // one storage for the whole scenario: the backlog it builds up is what it measures
    Sut sut = fresh();
    int k = Integer.parseInt(opts.getOrDefault("claim-jobs", "1000"));
    int reps = Integer.parseInt(opts.getOrDefault("claim-reps", "3"));
    long base = usedHeapAfterGc();
    int backlog = 0;
    // warm the claim path first (not measured)
    claimRun(sut, k);
    claimRun(sut, k);
    for (String b : opts.getOrDefault("backlogs", "0,10000,100000,1000000").split(",")) {
      int target = Integer.parseInt(b);
      long t0 = System.nanoTime();
      int add = target - backlog;
      if (add > 0) {
        int from = nextId;
        nextId += add;
        inParallel(
            add,
            (lo, hi) -> {
              for (int i = lo; i < hi; i += 1000) {
                sut.pushDelayed(ids(from + i, Math.min(1000, hi - i)), Duration.ofDays(1));
              }
            });
        backlog = target;
      }
      result("claim_build_s_" + target, (System.nanoTime() - t0) / 1e9);
      analyze();
      // the reps measure claims against the backlog, not the housekeeping its build left behind
      if (sut instanceof KvmqSut kvmq && target > 0) {
        double ms = kvmq.settle();
        if (ms >= 0) {
          result("claim_settle_ms_" + target, ms);
        }
      }
      if (target > 0) {
        result("claim_heap_bytes_per_job_" + target, (usedHeapAfterGc() - base) / (double) target);
      }
      for (int r = 0; r < reps; r++) {
        result("claim_us_" + target, claimRun(sut, k));
      }
    }
  }

  // ---- scenario 4: a drain while retained jobs are pruned, against one with none (kvmq only)

  /**
   * Two drains of {@code --prune-jobs} jobs (default 20000) with the same retention (completed jobs
   * kept 1 ms, so everything kept is past it): one on fresh storage with nothing to prune, one on
   * storage holding {@code --prune-retained} (default 1000000) completed jobs kept beforehand,
   * which the workers prune beside the drain. Reports both drains' jobs/s and how many retained
   * jobs were left when the second drain ended.
   */
  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private void prune() throws Exception {
    int n = Integer.parseInt(opts.getOrDefault("prune-jobs", "20000"));
    int retained = Integer.parseInt(opts.getOrDefault("prune-retained", "1000000"));
    Retention pruneAll =
        Retention.defaults().completed(Retention.Keep.youngerThan(Duration.ofMillis(1)));
    for (String mode : List.of("none", "pruning")) {
      KvmqSut sut = (KvmqSut) fresh();
      if (mode.equals("pruning")) {
        sut.retention(Retention.defaults().completed(Retention.Keep.unlimited()));
        long t0 = System.nanoTime();
        Probe.Phase build = Probe.begin(nextId, retained);
        pushBatches(sut, nextId, retained);
        nextId += retained;
        try (AutoCloseable running = sut.start(threads)) {
          if (!build.awaitFinished(3600)) {
            throw new IllegalStateException(
                "prune: " + build.finished.get() + " of " + retained + " kept in 3600 s");
          }
        }
        result("prune_build_s", (System.nanoTime() - t0) / 1e9);
        result("prune_retained_before", sut.completedKept());
      }
      sut.retention(pruneAll);
      analyze();
      Probe.Phase p = Probe.begin(nextId, n);
      pushBatches(sut, nextId, n);
      nextId += n;
      try (AutoCloseable running = sut.start(threads)) {
        if (!p.awaitFinished(900)) {
          throw new IllegalStateException(
              "prune: " + p.finished.get() + " of " + n + " jobs finished in 900 s");
        }
      }
      long first = Arrays.stream(p.startNanos()).min().orElseThrow();
      result("drain_" + mode + "_per_s", n / ((p.lastFinishNanos - first) / 1e9));
      if (mode.equals("pruning")) {
        result("prune_retained_after", sut.completedKept());
      }
    }
  }

  /** Pushes k ready jobs, drains them with one worker of concurrency 1: µs per job. */
  @SuppressWarnings("try") // the resource is the running system, closed to stop it
  private double claimRun(Sut sut, int k) throws Exception {
    Probe.Phase p = Probe.begin(nextId, k);
    pushBatches(sut, nextId, k);
    nextId += k;
    try (AutoCloseable running = sut.start(1)) {
      if (!p.awaitFinished(600)) {
        throw new IllegalStateException(
            "claim: " + p.finished.get() + " of " + k + " jobs finished in 600 s");
      }
    }
    long first = Arrays.stream(p.startNanos()).min().orElseThrow();
    return (p.lastFinishNanos - first) / 1e3 / (k - 1);
  }

  // ---- helpers

  private static void result(String name, Object value) {
    result(true, name, value);
  }

  /** Formats a result, and prints it only if {@code print} (the warm-up formats and drops it). */
  private static void result(boolean print, String name, Object value) {
    String line =
        "RESULT "
            + name
            + " "
            + (value instanceof Double d
                ? String.format(java.util.Locale.ROOT, "%.4f", d)
                : value.toString());
    if (print) {
      System.out.println(line);
      System.out.flush();
    }
  }

  @SuppressWarnings("removal")
  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /**
   * The machine's CPU time that its host gave to other guests while this one wanted it ({@code
   * steal} in {@code /proc/stat}), as a share of all its CPU time: on a virtual machine that shares
   * its host, a phase measured while the host took a large share of the CPU measures the host's
   * load as much as the system (docs/performance.md).
   */
  static final class Steal {

    private Steal() {}

    /**
     * The machine's CPU time so far in clock ticks: all of it, and its steal.
     *
     * @return {total, steal}, or {0, 0} where {@code /proc/stat} can't be read
     */
    static long[] read() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
          if (line.startsWith("cpu ")) {
            return parse(line);
          }
        }
      } catch (IOException | NumberFormatException e) {
        return new long[] {0, 0};
      }
      return new long[] {0, 0};
    }

    /**
     * The machine's CPU time in one {@code /proc/stat} line of the form {@code cpu user nice system
     * idle iowait irq softirq steal guest guest_nice}: the first eight summed (guest time is
     * counted within user already), and the eighth, steal; 0 steal where the line ends before it
     * (kernels before 2.6.11).
     *
     * @param line the line
     * @return {total, steal}
     * @throws NumberFormatException if a field is not a number
     */
    static long[] parse(String line) {
      String[] f = line.trim().split("\\s+");
      long total = 0;
      for (int i = 1; i <= 8 && i < f.length; i++) {
        total += Long.parseLong(f[i]);
      }
      return new long[] {total, f.length > 8 ? Long.parseLong(f[8]) : 0};
    }

    /**
     * The steal's share of the machine's CPU time since {@code before}.
     *
     * @param before a {@link #read()} taken earlier
     * @return the share in percent, or 0 if no time passed or nothing could be read
     */
    static double percentSince(long[] before) {
      long[] now = read();
      long total = now[0] - before[0];
      return total <= 0 ? 0 : 100.0 * (now[1] - before[1]) / total;
    }
  }

  /** Samples the process's resident set size every 50 ms. */
  private static final class RssSampler {
    final AtomicLong peakKb = new AtomicLong();
    final AtomicBoolean stop = new AtomicBoolean();
    Thread thread;

    void start() {
      thread =
          new Thread(
              () -> {
                while (!stop.get()) {
                  peakKb.accumulateAndGet(rssKb(), Math::max);
                  LockSupport.parkNanos(50_000_000L);
                }
              },
              "rss-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    void stop() throws InterruptedException {
      stop.set(true);
      thread.join();
    }

    static long rssKb() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
          if (line.startsWith("VmRSS:")) {
            return Long.parseLong(line.replaceAll("[^0-9]", ""));
          }
        }
      } catch (IOException | NumberFormatException e) {
        return 0;
      }
      return 0;
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var s = Files.walk(dir)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
