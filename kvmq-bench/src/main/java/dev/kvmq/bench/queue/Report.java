package dev.kvmq.bench.queue;

import java.io.PrintStream;
import java.util.ArrayList;
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

  private static String num(double d) {
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

  private static String cell(double[] v) {
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

  void print(PrintStream out) {
    out.println();
    out.println(
        "Drain: "
            + opts.getOrDefault("jobs", "20000")
            + " no-op jobs pushed by "
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
            + " | settings |");
    out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
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
              + settings(system)
              + " |");
    }
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
    out.println("Targets (medians of this run):");
    out.println();
    targets(out);
    if (!failures.isEmpty()) {
      out.println();
      out.println("FAILED runs:");
      failures.forEach(f -> out.println("- " + f));
    }
  }

  private double med(String system, String... names) {
    return median(values(system, names));
  }

  private double drain(String system) {
    return med(system, "drain_after_single_per_s", "drain_after_batch_per_s");
  }

  private void targets(PrintStream out) {
    ratio(
        out,
        "kvmq-memory drain >= 2x quartz-ram drain",
        drain("kvmq-memory"),
        drain("quartz-ram"),
        2);
    atMost(
        out,
        "kvmq-memory pickup p50 <= quartz-ram p50",
        med("kvmq-memory", "pickup_p50_ms"),
        med("quartz-ram", "pickup_p50_ms"));
    atMost(
        out,
        "kvmq-memory pickup p99 <= quartz-ram p99",
        med("kvmq-memory", "pickup_p99_ms"),
        med("quartz-ram", "pickup_p99_ms"));
    ratio(
        out,
        "kvmq-eclipsestore-fsync drain >= 3x dbscheduler-immediate drain",
        drain("kvmq-eclipsestore-fsync"),
        drain("dbscheduler-immediate"),
        3);
    atMost(
        out,
        "kvmq-eclipsestore-fsync pickup p50 <= 1 ms",
        med("kvmq-eclipsestore-fsync", "pickup_p50_ms"),
        1);
    atMost(
        out,
        "kvmq-eclipsestore-fsync pickup p99 <= 5 ms",
        med("kvmq-eclipsestore-fsync", "pickup_p99_ms"),
        5);
    ratio(
        out,
        "kvmq-postgres drain >= 1.5x dbscheduler-immediate drain",
        drain("kvmq-postgres"),
        drain("dbscheduler-immediate"),
        1.5);
    atMost(
        out,
        "kvmq-postgres pickup p50 < dbscheduler-immediate p50",
        med("kvmq-postgres", "pickup_p50_ms"),
        med("dbscheduler-immediate", "pickup_p50_ms"));
    atMost(
        out,
        "kvmq-postgres pickup p99 < dbscheduler-immediate p99",
        med("kvmq-postgres", "pickup_p99_ms"),
        med("dbscheduler-immediate", "pickup_p99_ms"));
    String[] backlogs = opts.getOrDefault("backlogs", "0,10000,100000,1000000").split(",");
    String largest = backlogs[backlogs.length - 1];
    for (String system : QueueBench.KVMQ) {
      double empty = med(system, "claim_us_0");
      double full = med(system, "claim_us_" + largest);
      atMost(out, system + " claim cost with " + largest + " delayed <= 2x empty", full / empty, 2);
    }
  }

  private static void ratio(
      PrintStream out, String what, double ours, double theirs, double factor) {
    if (Double.isNaN(ours) || Double.isNaN(theirs)) {
      out.println("- " + what + ": NOT MEASURED in this run");
      return;
    }
    double r = ours / theirs;
    out.println(
        "- "
            + what
            + ": "
            + num(ours)
            + " / "
            + num(theirs)
            + " = "
            + num(r)
            + "x -> "
            + (r >= factor ? "MET" : "MISSED"));
  }

  private static void atMost(PrintStream out, String what, double value, double limit) {
    if (Double.isNaN(value) || Double.isNaN(limit)) {
      out.println("- " + what + ": NOT MEASURED in this run");
      return;
    }
    out.println(
        "- "
            + what
            + ": "
            + num(value)
            + " vs "
            + num(limit)
            + " -> "
            + (value <= limit ? "MET" : "MISSED"));
  }
}
