package dev.kvmq.bench.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.bench.queue.Report.Side;
import dev.kvmq.bench.queue.Report.Verdict;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReportTest {

  private static Side runs(double... v) {
    double[] sorted = v.clone();
    Arrays.sort(sorted);
    return new Side(sorted, v.length);
  }

  @Test
  void aRatioIsMetOnlyWhenEveryPairingOfRunsMeetsIt() {
    // slowest of ours 300 / fastest of theirs 100 = 3.0: every pairing is at least 3x
    assertThat(Report.atLeastTimes(runs(300, 320, 350), runs(90, 95, 100), 3))
        .isEqualTo(Verdict.MET);
  }

  @Test
  void aRatioIsMissedOnlyWhenEveryPairingMissesIt() {
    // fastest of ours 280 / slowest of theirs 100 = 2.8 < 3
    assertThat(Report.atLeastTimes(runs(250, 260, 280), runs(100, 105, 110), 3))
        .isEqualTo(Verdict.MISSED);
  }

  @Test
  void aRatioOfMediansAboveTheThresholdIsNotSettledWhenTheSpreadReachesBelowIt() {
    // medians 330 / 100 = 3.3x, but the slowest run of ours against the fastest of theirs is
    // 250 / 110 = 2.3x: within the run-to-run spread, so neither met nor missed
    assertThat(Report.atLeastTimes(runs(250, 330, 400), runs(90, 100, 110), 3))
        .isEqualTo(Verdict.NOT_SETTLED);
    // and the same below the threshold: medians 2.7x, best pairing 400 / 90 = 4.4x
    assertThat(Report.atLeastTimes(runs(200, 270, 400), runs(90, 100, 110), 3))
        .isEqualTo(Verdict.NOT_SETTLED);
  }

  @Test
  void fewerThanThreeRunsSettleNothing() {
    // far apart, but only 2 runs of ours
    assertThat(Report.atLeastTimes(runs(1000, 1100), runs(10, 11, 12), 3))
        .isEqualTo(Verdict.NOT_SETTLED);
    assertThat(Report.atMost(runs(0.1, 0.2), 1)).isEqualTo(Verdict.NOT_SETTLED);
    assertThat(Report.atMost(runs(0.1, 0.2, 0.3), runs(5, 6))).isEqualTo(Verdict.NOT_SETTLED);
    // a drain gives two samples per run: 4 samples of 2 runs are still 2 runs
    assertThat(
            Report.atLeastTimes(
                new Side(new double[] {900, 950, 1000, 1100}, 2), runs(10, 11, 12), 3))
        .isEqualTo(Verdict.NOT_SETTLED);
  }

  @Test
  void aFixedLimitIsSettledByTheWorstAndTheBestRun() {
    assertThat(Report.atMost(runs(0.4, 0.5, 0.9), 1)).isEqualTo(Verdict.MET);
    assertThat(Report.atMost(runs(1.1, 1.5, 2.0), 1)).isEqualTo(Verdict.MISSED);
    assertThat(Report.atMost(runs(0.8, 0.9, 1.2), 1)).isEqualTo(Verdict.NOT_SETTLED);
  }

  @Test
  void onePickupAgainstAnother() {
    assertThat(Report.atMost(runs(0.5, 0.6, 0.7), runs(0.7, 0.8, 0.9))).isEqualTo(Verdict.MET);
    assertThat(Report.atMost(runs(1.0, 1.1, 1.2), runs(0.7, 0.8, 0.9))).isEqualTo(Verdict.MISSED);
    assertThat(Report.atMost(runs(0.5, 0.6, 1.0), runs(0.7, 0.8, 0.9)))
        .isEqualTo(Verdict.NOT_SETTLED);
  }

  @Test
  void claimCostAgainstTheEmptyQueue() {
    // at most 2x: worst pairing 190 / 100 = 1.9x
    assertThat(Report.atMostTimes(runs(150, 170, 190), runs(100, 110, 120), 2))
        .isEqualTo(Verdict.MET);
    // at best 250 / 120 = 2.08x
    assertThat(Report.atMostTimes(runs(250, 260, 280), runs(100, 110, 120), 2))
        .isEqualTo(Verdict.MISSED);
    assertThat(Report.atMostTimes(runs(150, 210, 280), runs(100, 110, 120), 2))
        .isEqualTo(Verdict.NOT_SETTLED);
  }

  @Test
  void nothingMeasuredIsSaidSo() {
    assertThat(Report.atLeastTimes(runs(), runs(1, 2, 3), 2)).isEqualTo(Verdict.NOT_MEASURED);
    assertThat(Report.atMost(runs(), 1)).isEqualTo(Verdict.NOT_MEASURED);
  }

  @Test
  void thePrintedTableShowsTheSpreadAndTheVerdict() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "kvmq-memory", "drain_after_single_per_s", "50000", "60000", "70000");
    put(results, "kvmq-memory", "drain_after_batch_per_s", "55000", "65000", "75000");
    put(results, "kvmq-memory", "pickup_p50_ms", "0.20", "0.21", "0.22");
    put(results, "kvmq-memory", "pickup_p99_ms", "0.40", "0.50", "3.00");
    put(results, "kvmq-memory", "push_call_p50_ms", "0.05", "0.06", "0.07");
    put(results, "kvmq-memory", "warmup_rounds", "2", "3", "6");
    put(results, "kvmq-memory", "drain_jit_percent_single", "1.0", "2.0", "3.0");
    put(results, "kvmq-memory", "drain_jit_percent_batch", "4.0", "5.0", "9.0");
    put(results, "kvmq-memory", "drain_jvm_cpu_us_per_job_single", "20.0", "22.0", "30.0");
    put(results, "kvmq-memory", "drain_jvm_cpu_us_per_job_batch", "18.0", "19.0", "21.0");
    put(results, "kvmq-memory", "drain_steal_percent_single", "0.0", "0.5", "30.0");
    put(results, "kvmq-memory", "drain_steal_percent_batch", "0.2", "1.0", "25.0");
    put(results, "kvmq-memory", "pickup_steal_percent", "0.1", "0.3", "12.0");
    put(results, "kvmq-memory", "settings", "kvmq 0.1.0 InMemoryKvStore");
    put(results, "quartz-ram", "drain_after_single_per_s", "30000", "31000", "32000");
    put(results, "quartz-ram", "drain_after_batch_per_s", "30000", "31000", "32000");
    put(results, "quartz-ram", "pickup_p50_ms", "0.30", "0.31", "0.32");
    put(results, "quartz-ram", "pickup_p99_ms", "1.00", "1.10", "1.20");
    put(results, "quartz-ram", "settings", "Quartz 2.5.2 RAMJobStore");

    String table = print(results);

    // 62,500 / 31,000 = 2.02x; every pairing: 50,000 / 32,000 = 1.56x to 75,000 / 30,000 = 2.5x
    assertThat(table)
        .contains(
            "- kvmq-memory drain >= 2x quartz-ram drain: 62,500 (50,000–75,000) / 31,000"
                + " (30,000–32,000) = 2.02x (1.56–2.50x) -> NOT SETTLED\n");
    assertThat(table)
        .contains(
            "- kvmq-memory pickup p50 <= quartz-ram p50: 0.21 (0.20–0.22) vs 0.31 (0.30–0.32)"
                + " -> MET\n");
    assertThat(table)
        .contains(
            "- kvmq-memory pickup p99 <= quartz-ram p99: 0.50 (0.40–3.00) vs 1.10 (1.00–1.20)"
                + " -> NOT SETTLED\n");
    assertThat(table)
        .contains(
            "- kvmq-postgres drain >= 1.5x dbscheduler-immediate drain:"
                + " NOT MEASURED in this run\n");
    // the in-memory pair drains more jobs than the others (--memory-jobs), and the header says so
    assertThat(table)
        .contains("Drain: 20000 no-op jobs (kvmq-memory and quartz-ram: 200000) pushed by 8");
    // the push call's own duration, the warm-up rounds, the JIT's share of both drains (pooled),
    // the JVM's CPU per job in both drains (pooled), the host's steal in both drains (pooled) and
    // in the pickup, and the settings are in the
    // system's row
    assertThat(table)
        .containsPattern(
            "\\| kvmq-memory \\|.*\\| 0\\.06 \\(0\\.05–0\\.07\\) \\|.*"
                + "\\| 3\\.00 \\(2\\.00–6\\.00\\) \\| 3\\.50 \\(1\\.00–9\\.00\\)"
                + " \\| 20\\.5 \\(18\\.0–30\\.0\\)"
                + " \\| 0\\.75 \\(0\\.00–30\\.0\\) \\| 0\\.30 \\(0\\.10–12\\.0\\)"
                + " \\| kvmq 0\\.1\\.0 InMemoryKvStore \\|\n");
  }

  @Test
  void oneRunIsReportedAsTooFewRuns() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "kvmq-eclipsestore-fsync", "pickup_p50_ms", "0.30");

    assertThat(print(results))
        .contains(
            "- kvmq-eclipsestore-fsync pickup p50 <= 1 ms: 0.30 vs 1.00 -> NOT SETTLED (runs: 1;"
                + " a verdict needs 3 of each)\n");
  }

  @Test
  void forcedWritesGiveEachSystemItsFloorPerCommitGroup() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "disk", "settings", "FileChannel.force(false) in /tmp");
    put(results, "disk", "force_append_p50_ms", "0.30");
    put(results, "disk", "force_overwrite_p50_ms", "0.15");
    put(results, "disk", "force_paced_p50_ms", "0.40");
    put(results, "disk", "force_paced_p99_ms", "2.10", "1.50", "2.60");
    put(results, "disk", "force_paced_p999_ms", "4.00");
    put(results, "disk", "force_paced_max_ms", "9.50");

    String table = print(results);

    // EclipseStore FSYNC forces twice per group commit, PostgreSQL once per commit group
    assertThat(table).contains("appended p50 0.30");
    assertThat(table).contains("kvmq EclipseStore FSYNC, 2 appended forces");
    assertThat(table).contains("= 0.60 ms; every system on PostgreSQL, 1 WAL force = 0.15 ms");
    // forces spread over time, at the pickup's pace: the median of the runs' p99s
    assertThat(table)
        .contains(
            "appended one every 5 ms (the pace of the pickup scenario's forces) p50 0.40, p99 2.10,"
                + " p99.9 4.00, max 9.50.");
    // the disk is no system of the tables
    assertThat(table).doesNotContain("| disk |");
  }

  private static void put(
      Map<String, Map<String, List<String>>> results,
      String system,
      String name,
      String... values) {
    results
        .computeIfAbsent(system, s -> new LinkedHashMap<>())
        .computeIfAbsent(name, n -> new ArrayList<>())
        .addAll(List.of(values));
  }

  @Test
  void theUniqueKeysTableSetsTheDrainWithKeysAgainstThePlainOne() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "kvmq-memory", "unique_push_plain_per_s", "9000");
    put(results, "kvmq-memory", "unique_push_keyed_per_s", "6000");
    put(results, "kvmq-memory", "unique_drain_plain_per_s", "1000", "1200", "1100");
    put(results, "kvmq-memory", "unique_drain_keyed_per_s", "800", "900", "880");
    String out = print(results);
    assertThat(out).contains("Unique keys (drain-unique)");
    // medians 880 / 1100
    assertThat(out)
        .contains("| kvmq-memory | 9,000 | 6,000 | 1,100 (1,000–1,200) | 880 (800–900) | 0.80 |");
    assertThat(print(new LinkedHashMap<>())).doesNotContain("Unique keys");
  }

  @Test
  void noJobRunTwiceIsMissedByOneDuplicateAndMetOnlyFromThreeRuns() {
    assertThat(Report.noneRunTwice(runs(0, 0, 0))).isEqualTo(Verdict.MET);
    // one duplicate in one run is enough, even in a single run
    assertThat(Report.noneRunTwice(runs(0, 1, 0))).isEqualTo(Verdict.MISSED);
    assertThat(Report.noneRunTwice(runs(2))).isEqualTo(Verdict.MISSED);
    assertThat(Report.noneRunTwice(runs(0, 0))).isEqualTo(Verdict.NOT_SETTLED);
    assertThat(Report.noneRunTwice(runs())).isEqualTo(Verdict.NOT_MEASURED);
  }

  @Test
  void theNodesTableHasARowPerJvmCountAndEachCountIsSetAgainstOneJvm() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "kvmq-postgres", "nodes_1_drain_per_s", "4000", "4200", "4100");
    put(results, "kvmq-postgres", "nodes_1_run_twice", "0", "0", "0");
    put(results, "kvmq-postgres", "nodes_1_jobs_per_jvm", "20000", "20000", "20000");
    put(results, "kvmq-postgres", "nodes_2_drain_per_s", "5000", "5500", "5200");
    put(results, "kvmq-postgres", "nodes_2_run_twice", "0", "0", "0");
    put(results, "kvmq-postgres", "nodes_2_jobs_per_jvm", "9000", "11000", "9500", "10500");
    // 4 JVMs: medians above 1 JVM's, but the slowest run (3,900) is below its fastest (4,200)
    put(results, "kvmq-postgres", "nodes_4_drain_per_s", "3900", "4500", "4800");
    put(results, "kvmq-postgres", "nodes_4_run_twice", "0", "0", "0");

    String table = print(results);

    assertThat(table).contains("| 1 | 4,100 (4,000–4,200) | 20,000 (20,000–20,000) | 0 | 3 |");
    assertThat(table).contains("| 2 | 5,200 (5,000–5,500) | 10,000 (9,000–11,000) | 0 | 3 |");
    // 5,000 / 4,200 = 1.19x at worst
    assertThat(table)
        .contains(
            "- kvmq-postgres 2 JVMs total drain >= 1-JVM drain (nodes): 5,200 (5,000–5,500) /"
                + " 4,100 (4,000–4,200) = 1.27x (1.19–1.38x) -> MET\n");
    assertThat(table)
        .contains("- kvmq-postgres 4 JVMs total drain >= 1-JVM drain (nodes): ")
        .contains("(0.93–1.20x) -> NOT SETTLED\n");
    assertThat(table)
        .contains(
            "- kvmq-postgres jobs run twice = 0 (nodes, no JVM crashed): at most 0 in a run, 9"
                + " runs -> MET\n");
  }

  @Test
  void aJobRunTwiceInAnyNodesRunMissesTheTarget() {
    Map<String, Map<String, List<String>>> results = new LinkedHashMap<>();
    put(results, "kvmq-postgres", "nodes_1_drain_per_s", "4000");
    put(results, "kvmq-postgres", "nodes_1_run_twice", "0");
    put(results, "kvmq-postgres", "nodes_2_drain_per_s", "5000");
    put(results, "kvmq-postgres", "nodes_2_run_twice", "3");

    String table = print(results);

    assertThat(table)
        .contains(
            "- kvmq-postgres jobs run twice = 0 (nodes, no JVM crashed): at most 3 in a run, 2"
                + " runs -> MISSED\n");
    // one run each: no throughput verdict
    assertThat(table)
        .contains(
            "- kvmq-postgres 2 JVMs total drain >= 1-JVM drain (nodes): 5,000 / 4,000 = 1.25x"
                + " (1.25–1.25x) -> NOT SETTLED (runs: 1 1; a verdict needs 3 of each)\n");
    assertThat(table).contains("| 2 | 5,000 | - | 3 | 1 |");
    // no nodes run: no table, and the targets say so
    String none = print(new LinkedHashMap<>());
    assertThat(none).doesNotContain("Nodes:");
    assertThat(none)
        .contains("- kvmq-postgres 4 JVMs total drain >= 1-JVM drain (nodes): NOT MEASURED");
  }

  private static String print(Map<String, Map<String, List<String>>> results) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new Report(results, List.of(), Map.of())
        .print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
