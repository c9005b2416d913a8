package dev.kvmq.bench.queue;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The table QueueBench prints: medians with min-max, the claim costs, and the targets. */
final class Report {

  private final Map<String, Map<String, List<String>>> results;
  private final List<String> failures;
  private final Map<String, String> opts;

  Report(
      Map<String, Map<String, List<String>>> results,
      List<String> failures,
      Map<String, String> opts) {
    this.results = results;
    this.failures = failures;
    this.opts = opts;
  }

  /** Values of one result of one system, pooled over the given names. */
  private double[] values(String system, String... names) {
    List<Double> v = new ArrayList<>();
    Map<String, List<String>> r = results.getOrDefault(system, Map.of());
    for (String n : names) {
      for (String s : r.getOrDefault(n, List.of())) {
        v.add(Double.parseDouble(s));
      }
    }
    return v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
  }

  static double median(double[] v) {
    if (v.length == 0) {
      return Double.NaN;
    }
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  static String num(double d) {
    if (Double.isNaN(d)) {
      return "-";
    }
    double a = Math.abs(d);
    if (a >= 100) {
      return String.format(Locale.ROOT, "%,.0f", d);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", d);
    }
    return String.format(Locale.ROOT, "%.2f", d);
  }

  static String cell(double[] v) {
    if (v.length == 0) {
      return "-";
    }
    if (v.length == 1) {
      return num(v[0]);
    }
    return num(median(v)) + " (" + num(v[0]) + "–" + num(v[v.length - 1]) + ")";
  }

  private String settings(String system) {
    List<String> s = results.getOrDefault(system, Map.of()).get("settings");
    return s == null ? "-" : s.get(0);
  }

  /** The drain-unique scenario's table: plain pushes one by one against pushes with a key. */
  private void unique(PrintStream out) {
    List<String> systems =
        results.keySet().stream()
            .filter(s -> values(s, "unique_drain_keyed_per_s").length > 0)
            .toList();
    if (systems.isEmpty()) {
      return;
    }
    out.println();
    out.println(
        "Unique keys (drain-unique): "
            + opts.getOrDefault("jobs", "20000")
            + " no-op jobs pushed one by one by "
            + opts.getOrDefault("threads", "8")
            + " threads, plain, then each with its own key (UniqueKey.whileWaitingOrRunning,"
            + " released by the completion), each drained on fresh storage.");
    out.println();
    out.println(
        "| system | push plain jobs/s | push with key jobs/s | drain plain jobs/s"
            + " | drain with keys jobs/s | drain with keys / plain (medians) |");
    out.println("|---|---:|---:|---:|---:|---:|");
    for (String system : systems) {
      double[] plain = values(system, "unique_drain_plain_per_s");
      double[] keyed = values(system, "unique_drain_keyed_per_s");
      out.println(
          "| "
              + system
              + " | "
              + cell(values(system, "unique_push_plain_per_s"))
              + " | "
              + cell(values(system, "unique_push_keyed_per_s"))
              + " | "
              + cell(plain)
              + " | "
              + cell(keyed)
              + " | "
              + num(median(keyed) / median(plain))
              + " |");
    }
  }

  /**
   * The JVM counts of the nodes scenario ({@code --nodes}, default 1,2,4).
   *
   * @param opts the benchmark's options
   * @return the counts, in the given order
   */
  static List<Integer> nodeCounts(Map<String, String> opts) {
    List<Integer> ks = new ArrayList<>();
    for (String k : opts.getOrDefault("nodes", "1,2,4").split(",")) {
      int v = Integer.parseInt(k.trim());
      if (v < 1) {
        throw new IllegalArgumentException("--nodes: a JVM count is at least 1, got " + v);
      }
      ks.add(v);
    }
    return ks;
  }

  private boolean nodesRan() {
    return results.getOrDefault(QueueBench.NODES_SYSTEM, Map.of()).keySet().stream()
        .anyMatch(k -> k.startsWith("nodes_"));
  }

  /** The nodes scenario's table: a row per JVM count. */
  private void nodes(PrintStream out) {
    if (!nodesRan()) {
      return;
    }
    String s = QueueBench.NODES_SYSTEM;
    out.println();
    out.println(
        "Nodes: "
            + opts.getOrDefault("jobs", "20000")
            + " no-op jobs pushed once in batches of 500 by one JVM, then drained by K worker JVMs"
            + " of "
            + s
            + " on one database ("
            + opts.getOrDefault("threads", "8")
            + " handler threads each, every JVM warmed up on its own database first, all started"
            + " together); total drain = jobs / (last completion in any JVM - first handler start"
            + " in any JVM). Cells: median (min–max) over runs; a run with a JVM that failed or a"
            + " job never run is listed under FAILED, not here.");
    out.println();
    out.println(
        "| JVMs | total drain jobs/s | jobs per JVM | jobs run twice (all runs) | runs"
            + " | steal % of drain | settings |");
    out.println("|---:|---:|---:|---:|---:|---:|---|");
    for (int k : nodeCounts(opts)) {
      double[] drain = values(s, "nodes_" + k + "_drain_per_s");
      out.println(
          "| "
              + k
              + " | "
              + cell(drain)
              + " | "
              + cell(values(s, "nodes_" + k + "_jobs_per_jvm"))
              + " | "
              + String.format(
                  Locale.ROOT,
                  "%,d",
                  (long) Arrays.stream(values(s, "nodes_" + k + "_run_twice")).sum())
              + " | "
              + drain.length
              + " | "
              + cell(values(s, "nodes_" + k + "_steal_percent"))
              + " | "
              + settings(s)
              + " |");
    }
  }

  /**
   * No job run twice, in runs where no JVM crashed: missed by any duplicate, whatever the number of
   * runs; met only when at least {@link #MIN_RUNS} runs had none.
   */
  static Verdict noneRunTwice(Side runTwice) {
    if (!runTwice.measured()) {
      return Verdict.NOT_MEASURED;
    }
    if (runTwice.max() > 0) {
      return Verdict.MISSED;
    }
    return enoughRuns(runTwice) ? Verdict.MET : Verdict.NOT_SETTLED;
  }

  void print(PrintStream out) {
    out.println();
    out.println(
        "Drain: "
            + opts.getOrDefault("jobs", "20000")
            + " no-op jobs ("
            + String.join(" and ", QueueBench.IN_MEMORY_PAIR)
            + ": "
            + opts.getOrDefault("memory-jobs", Integer.toString(QueueBench.MEMORY_JOBS))
            + ") pushed by "
            + opts.getOrDefault("threads", "8")
            + " threads (one at a time, then in batches of 500), then drained by "
            + opts.getOrDefault("threads", "8")
            + " handler threads; drain = jobs / (last completion - first handler"
            + " start), both drains pooled. Pickup: one job at a time at "
            + opts.getOrDefault("pickup-rate", "100")
            + "/s for "
            + opts.getOrDefault("pickup-seconds", "10")
            + " s to idle workers; pickup = handler start - just before the push call (push call"
            + " = its own duration, call to return)."
            + " Cells: median (min–max) over repetitions ("
            + opts.getOrDefault("reps", "3")
            + " for kvmq, quartz-ram"
            + " and dbscheduler-immediate; "
            + opts.getOrDefault("other-reps", "1")
            + " for the other peers; drain"
            + " has two samples per repetition).");
    out.println();
    out.println(
        "| system | push 1-by-1 jobs/s | push batch jobs/s | drain jobs/s | pickup p50 ms | pickup p99 ms"
            + " | pickup max ms | push call p50 ms | push call p99 ms | heap B/job | peak RSS MB"
            + " | warm-up rounds | JIT % of drain | JVM CPU µs/job of drain | steal % of drain"
            + " | steal % of pickup | settings |");
    out.println(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (String system : results.keySet()) {
      if (values(system, "push_single_per_s").length == 0
          && values(system, "pickup_p50_ms").length == 0) {
        continue;
      }
      out.println(
          "| "
              + system
              + " | "
              + cell(values(system, "push_single_per_s"))
              + " | "
              + cell(values(system, "push_batch_per_s"))
              + " | "
              + cell(values(system, "drain_after_single_per_s", "drain_after_batch_per_s"))
              + " | "
              + cell(values(system, "pickup_p50_ms"))
              + " | "
              + cell(values(system, "pickup_p99_ms"))
              + " | "
              + cell(values(system, "pickup_max_ms"))
              + " | "
              + cell(values(system, "push_call_p50_ms"))
              + " | "
              + cell(values(system, "push_call_p99_ms"))
              + " | "
              + cell(values(system, "heap_bytes_per_job"))
              + " | "
              + cell(values(system, "rss_peak_mb"))
              + " | "
              + cell(values(system, "warmup_rounds"))
              + " | "
              + cell(values(system, "drain_jit_percent_single", "drain_jit_percent_batch"))
              + " | "
              + cell(
                  values(
                      system, "drain_jvm_cpu_us_per_job_single", "drain_jvm_cpu_us_per_job_batch"))
              + " | "
              + cell(values(system, "drain_steal_percent_single", "drain_steal_percent_batch"))
              + " | "
              + cell(values(system, "pickup_steal_percent"))
              + " | "
              + settings(system)
              + " |");
    }
    steal(out);
    if (results.containsKey(QueueBench.DISK)) {
      disk(out);
    }
    unique(out);
    nodes(out);
    boolean claims =
        results.values().stream()
            .anyMatch(r -> r.keySet().stream().anyMatch(k -> k.startsWith("claim_us_")));
    if (claims) {
      out.println();
      out.println(
          "Claim cost: µs per job (claim + no-op handler + complete) for one worker of concurrency 1"
              + " draining "
              + opts.getOrDefault("claim-jobs", "1000")
              + " ready jobs while the queue holds BACKLOG"
              + " delayed jobs (due in a day); median (min–max) of "
              + opts.getOrDefault("claim-reps", "3")
              + " measurements. Heap per job: heap growth after GC / backlog.");
      out.println();
      out.println(
          "| system | backlog | µs per job | × empty queue | heap B/job | backlog built in s"
              + " | settings |");
      out.println("|---|---:|---:|---:|---:|---:|---|");
      for (String system : results.keySet()) {
        double empty = median(values(system, "claim_us_0"));
        for (String b : opts.getOrDefault("backlogs", "0,10000,100000,1000000").split(",")) {
          double[] us = values(system, "claim_us_" + b);
          if (us.length == 0) {
            continue;
          }
          out.println(
              "| "
                  + system
                  + " | "
                  + String.format(Locale.ROOT, "%,d", Integer.parseInt(b))
                  + " | "
                  + cell(us)
                  + " | "
                  + num(median(us) / empty)
                  + " | "
                  + cell(values(system, "claim_heap_bytes_per_job_" + b))
                  + " | "
                  + cell(values(system, "claim_build_s_" + b))
                  + " | "
                  + settings(system)
                  + " |");
        }
      }
    }
    out.println();
    out.println(
        "Targets: median (min–max) over runs; for a ratio, the ratio of medians (lowest–highest"
            + " over every pairing of a run of one side with a run of the other). MET or MISSED"
            + " only when every pairing agrees and each side has at least "
            + MIN_RUNS
            + " runs; otherwise NOT SETTLED: the threshold is within the run-to-run spread.");
    out.println();
    targets(out);
    if (!failures.isEmpty()) {
      out.println();
      out.println("FAILED runs:");
      failures.forEach(f -> out.println("- " + f));
    }
  }

  /**
   * The steal rule's line ({@link QueueBench}, its child method): which systems' runs were measured
   * again because the host took more of the CPU than {@code --max-steal}, and which were kept above
   * it when their tries ran out.
   */
  private void steal(PrintStream out) {
    List<String> again = new ArrayList<>();
    List<String> above = new ArrayList<>();
    for (String system : results.keySet()) {
      int d = values(system, QueueBench.STEAL_DISCARDED).length;
      int k = values(system, QueueBench.STEAL_KEPT_ABOVE).length;
      if (d > 0) {
        again.add(system + " " + d);
      }
      if (k > 0) {
        above.add(system + " " + k);
      }
    }
    out.println();
    out.println(
        "Steal rule: a run during whose drains or pickup the host took more than "
            + opts.getOrDefault("max-steal", QueueBench.DEFAULT_MAX_STEAL)
            + "% of the machine's CPU (steal) is discarded and measured again after the other"
            + " repetitions, up to "
            + opts.getOrDefault("steal-retries", QueueBench.DEFAULT_STEAL_RETRIES)
            + " times, for every system alike. Runs discarded: "
            + (again.isEmpty() ? "none" : String.join(", ", again))
            + ". Runs kept above the bound (their tries ran out): "
            + (above.isEmpty() ? "none" : String.join(", ", above))
            + ".");
  }

  /** The fsync scenario: what a forced write costs, and so a commit group's floor per system. */
  private void disk(PrintStream out) {
    String d = QueueBench.DISK;
    double append = med(d, "force_append_p50_ms");
    double overwrite = med(d, "force_overwrite_p50_ms");
    out.println();
    out.println(
        "Forced writes ("
            + settings(d)
            + "), ms: appended p50 "
            + num(append)
            + ", p90 "
            + num(med(d, "force_append_p90_ms"))
            + ", p99 "
            + num(med(d, "force_append_p99_ms"))
            + "; overwritten p50 "
            + num(overwrite)
            + ", p90 "
            + num(med(d, "force_overwrite_p90_ms"))
            + ", p99 "
            + num(med(d, "force_overwrite_p99_ms"))
            + "; appended one every "
            + ForceProbe.PACE_MICROS / 1000
            + " ms (the pace of the pickup scenario's forces) p50 "
            + num(med(d, "force_paced_p50_ms"))
            + ", p99 "
            + num(med(d, "force_paced_p99_ms"))
            + ", p99.9 "
            + num(med(d, "force_paced_p999_ms"))
            + ", max "
            + num(med(d, "force_paced_max_ms"))
            + ". Floor of one commit group (p50): kvmq EclipseStore FSYNC, 2 appended forces"
            + " (data file, then transactions log) = "
            + num(2 * append)
            + " ms; every system on PostgreSQL, 1 WAL force = "
            + num(overwrite)
            + " ms; in memory and EclipseStore PROCESS_CRASH_SAFE, none.");
  }

  private double med(String system, String name) {
    return median(values(system, name));
  }

  // ---- the targets' verdicts

  /** How few runs a verdict needs at least, on each side. */
  static final int MIN_RUNS = 3;

  /** A target's verdict. */
  enum Verdict {
    /** Every run of one side against every run of the other meets the target. */
    MET,
    /** Every run against every run misses it. */
    MISSED,
    /** The threshold lies within the run-to-run spread, or there are fewer than 3 runs. */
    NOT_SETTLED,
    /** A side was not measured. */
    NOT_MEASURED;

    @Override
    public String toString() {
      return name().replace('_', ' ');
    }
  }

  /**
   * One side of a target: its samples, sorted, and how many runs gave them (a drain gives two
   * samples per run; a claim measurement is one run).
   */
  record Side(double[] values, int runs) {
    double min() {
      return values[0];
    }

    double max() {
      return values[values.length - 1];
    }

    boolean measured() {
      return values.length > 0;
    }

    String cell() {
      return Report.cell(values);
    }
  }

  /** Samples of a result (pooled over the names); runs = samples. */
  private Side side(String system, String... names) {
    double[] v = values(system, names);
    return new Side(v, v.length);
  }

  /** Both drains of each run pooled; runs = repetitions. */
  private Side drain(String system) {
    return new Side(
        values(system, "drain_after_single_per_s", "drain_after_batch_per_s"),
        values(system, "drain_after_batch_per_s").length);
  }

  private static boolean enoughRuns(Side... sides) {
    for (Side s : sides) {
      if (s.runs() < MIN_RUNS) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code ours >= factor * theirs}: met when even the worst pairing (our slowest run, their
   * fastest) meets it, missed when even the best pairing misses it, else not settled.
   */
  static Verdict atLeastTimes(Side ours, Side theirs, double factor) {
    if (!ours.measured() || !theirs.measured()) {
      return Verdict.NOT_MEASURED;
    }
    if (!enoughRuns(ours, theirs)) {
      return Verdict.NOT_SETTLED;
    }
    if (ours.min() / theirs.max() >= factor) {
      return Verdict.MET;
    }
    if (ours.max() / theirs.min() < factor) {
      return Verdict.MISSED;
    }
    return Verdict.NOT_SETTLED;
  }

  /** {@code ours <= theirs}: met when our worst run is at most their best, and so on. */
  static Verdict atMost(Side ours, Side theirs) {
    if (!ours.measured() || !theirs.measured()) {
      return Verdict.NOT_MEASURED;
    }
    if (!enoughRuns(ours, theirs)) {
      return Verdict.NOT_SETTLED;
    }
    if (ours.max() <= theirs.min()) {
      return Verdict.MET;
    }
    if (ours.min() > theirs.max()) {
      return Verdict.MISSED;
    }
    return Verdict.NOT_SETTLED;
  }

  /** {@code ours <= limit}, a fixed limit. */
  static Verdict atMost(Side ours, double limit) {
    if (!ours.measured()) {
      return Verdict.NOT_MEASURED;
    }
    if (!enoughRuns(ours)) {
      return Verdict.NOT_SETTLED;
    }
    if (ours.max() <= limit) {
      return Verdict.MET;
    }
    if (ours.min() > limit) {
      return Verdict.MISSED;
    }
    return Verdict.NOT_SETTLED;
  }

  /** {@code ours <= factor * theirs} (claim cost against the empty queue's). */
  static Verdict atMostTimes(Side ours, Side theirs, double factor) {
    if (!ours.measured() || !theirs.measured()) {
      return Verdict.NOT_MEASURED;
    }
    if (!enoughRuns(ours, theirs)) {
      return Verdict.NOT_SETTLED;
    }
    if (ours.max() / theirs.min() <= factor) {
      return Verdict.MET;
    }
    if (ours.min() / theirs.max() > factor) {
      return Verdict.MISSED;
    }
    return Verdict.NOT_SETTLED;
  }

  private static String runs(Verdict v, Side... sides) {
    if (v == Verdict.NOT_SETTLED && !enoughRuns(sides)) {
      StringBuilder b = new StringBuilder(" (runs:");
      for (Side s : sides) {
        b.append(' ').append(s.runs());
      }
      return b.append("; a verdict needs ").append(MIN_RUNS).append(" of each)").toString();
    }
    return "";
  }

  private static void line(PrintStream out, String what, String figures, Verdict v, Side... s) {
    if (v == Verdict.NOT_MEASURED) {
      out.println("- " + what + ": NOT MEASURED in this run");
    } else {
      out.println("- " + what + ": " + figures + " -> " + v + runs(v, s));
    }
  }

  private static void times(
      PrintStream out, String what, Side ours, Side theirs, double factor, boolean atLeast) {
    Verdict v = atLeast ? atLeastTimes(ours, theirs, factor) : atMostTimes(ours, theirs, factor);
    String figures =
        v == Verdict.NOT_MEASURED
            ? ""
            : ours.cell()
                + " / "
                + theirs.cell()
                + " = "
                + num(median(ours.values()) / median(theirs.values()))
                + "x ("
                + num(ours.min() / theirs.max())
                + "–"
                + num(ours.max() / theirs.min())
                + "x)";
    line(out, what, figures, v, ours, theirs);
  }

  private static void notAbove(PrintStream out, String what, Side ours, Side theirs) {
    Verdict v = atMost(ours, theirs);
    line(
        out,
        what,
        v == Verdict.NOT_MEASURED ? "" : ours.cell() + " vs " + theirs.cell(),
        v,
        ours,
        theirs);
  }

  private static void notAbove(PrintStream out, String what, Side ours, double limit) {
    Verdict v = atMost(ours, limit);
    line(out, what, v == Verdict.NOT_MEASURED ? "" : ours.cell() + " vs " + num(limit), v, ours);
  }

  private void targets(PrintStream out) {
    times(
        out,
        "kvmq-memory drain >= 2x quartz-ram drain",
        drain("kvmq-memory"),
        drain("quartz-ram"),
        2,
        true);
    notAbove(
        out,
        "kvmq-memory pickup p50 <= quartz-ram p50",
        side("kvmq-memory", "pickup_p50_ms"),
        side("quartz-ram", "pickup_p50_ms"));
    notAbove(
        out,
        "kvmq-memory pickup p99 <= quartz-ram p99",
        side("kvmq-memory", "pickup_p99_ms"),
        side("quartz-ram", "pickup_p99_ms"));
    times(
        out,
        "kvmq-eclipsestore-fsync drain >= 3x dbscheduler-immediate drain",
        drain("kvmq-eclipsestore-fsync"),
        drain("dbscheduler-immediate"),
        3,
        true);
    notAbove(
        out,
        "kvmq-eclipsestore-fsync pickup p50 <= 1 ms",
        side("kvmq-eclipsestore-fsync", "pickup_p50_ms"),
        1);
    notAbove(
        out,
        "kvmq-eclipsestore-fsync pickup p99 <= 5 ms",
        side("kvmq-eclipsestore-fsync", "pickup_p99_ms"),
        5);
    times(
        out,
        "kvmq-postgres drain >= 1.5x dbscheduler-immediate drain",
        drain("kvmq-postgres"),
        drain("dbscheduler-immediate"),
        1.5,
        true);
    notAbove(
        out,
        "kvmq-postgres pickup p50 <= dbscheduler-immediate p50",
        side("kvmq-postgres", "pickup_p50_ms"),
        side("dbscheduler-immediate", "pickup_p50_ms"));
    notAbove(
        out,
        "kvmq-postgres pickup p99 <= dbscheduler-immediate p99",
        side("kvmq-postgres", "pickup_p99_ms"),
        side("dbscheduler-immediate", "pickup_p99_ms"));
    String pg = QueueBench.NODES_SYSTEM;
    List<Integer> ks = nodeCounts(opts);
    List<String> twice = new ArrayList<>();
    for (int k : ks) {
      twice.add("nodes_" + k + "_run_twice");
      if (k != 1) {
        times(
            out,
            pg + " " + k + " JVMs total drain >= 1-JVM drain (nodes)",
            side(pg, "nodes_" + k + "_drain_per_s"),
            side(pg, "nodes_1_drain_per_s"),
            1,
            true);
      }
    }
    Side runTwice = side(pg, twice.toArray(String[]::new));
    Verdict v = noneRunTwice(runTwice);
    line(
        out,
        pg + " jobs run twice = 0 (nodes, no JVM crashed)",
        v == Verdict.NOT_MEASURED
            ? ""
            : "at most "
                + String.format(Locale.ROOT, "%,d", (long) runTwice.max())
                + " in a run, "
                + runTwice.runs()
                + " runs",
        v,
        runTwice);
    String[] backlogs = opts.getOrDefault("backlogs", "0,10000,100000,1000000").split(",");
    String largest = backlogs[backlogs.length - 1];
    for (String system : QueueBench.KVMQ) {
      times(
          out,
          system + " claim cost with " + largest + " delayed <= 2x empty",
          side(system, "claim_us_" + largest),
          side(system, "claim_us_0"),
          2,
          false);
    }
  }
}
