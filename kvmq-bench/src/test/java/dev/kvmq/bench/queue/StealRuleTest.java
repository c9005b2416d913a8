package dev.kvmq.bench.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The steal rule: which runs QueueBench discards, and how the log and the table keep count. */
class StealRuleTest {

  @Test
  void aRunsStealIsTheLargestOfItsDrainsAndItsPickup() {
    Map<String, List<String>> run =
        Map.of(
            "drain_after_single_per_s", List.of("90000"),
            "drain_steal_percent_single", List.of("1.5"),
            "drain_steal_percent_batch", List.of("7.25"),
            "pickup_steal_percent", List.of("3.0"));
    assertThat(QueueBench.worstSteal(run)).isEqualTo(7.25);
  }

  @Test
  void aRunThatReportsNoStealHasNone() {
    assertThat(QueueBench.worstSteal(Map.of("claim_us_0", List.of("40.0")))).isZero();
  }

  /** A log of two repetitions of one system, the first discarded, and its kept retry. */
  private static final List<String> LOG =
      List.of(
          "# options: {systems=kvmq-memory, reps=1, max-steal=5}",
          "# kvmq-memory drain,pickup (repetition 1/1)",
          "#   push_single_per_s = 2000",
          "#   drain_after_batch_per_s = 40000",
          "#   drain_steal_percent_batch = 30.0",
          "#   settings = threads 8",
          "#   (20.0 s, exit 0)",
          "#   "
              + QueueBench.DISCARDED
              + " the host took 30.0% of the machine's CPU (steal), above --max-steal 5.0;"
              + " measured again later",
          "# kvmq-memory drain,pickup (repetition 1/1, measured again 1/3 for steal)",
          "#   push_single_per_s = 1000",
          "#   drain_after_batch_per_s = 90000",
          "#   drain_steal_percent_batch = 0.5",
          "#   settings = threads 8",
          "#   (10.0 s, exit 0)",
          "# quartz-ram drain,pickup (repetition 1/1)",
          "#   drain_after_batch_per_s = 50000",
          "#   drain_steal_percent_batch = 9.0",
          "#   (10.0 s, exit 0)",
          "#   kept with steal 9.0% above --max-steal 5.0: its last try");

  @Test
  void aRunFollowedByItsDiscardIsCountedOnlyAsDiscarded() {
    QueueBench b = new QueueBench();
    b.readLog(LOG);
    Map<String, List<String>> kvmq = b.results().get("kvmq-memory");
    assertThat(kvmq.get("drain_after_batch_per_s")).containsExactly("90000");
    assertThat(kvmq.get("drain_steal_percent_batch")).containsExactly("0.5");
    assertThat(kvmq.get(QueueBench.STEAL_DISCARDED)).containsExactly("1");
    assertThat(kvmq).doesNotContainKey(QueueBench.STEAL_KEPT_ABOVE);
    Map<String, List<String>> quartz = b.results().get("quartz-ram");
    assertThat(quartz.get("drain_after_batch_per_s")).containsExactly("50000");
    assertThat(quartz.get(QueueBench.STEAL_KEPT_ABOVE)).containsExactly("1");
  }

  @Test
  void theTableCountsTheDiscardedRunsAndThoseKeptAboveTheBound() {
    QueueBench b = new QueueBench();
    b.readLog(LOG);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new Report(b.results(), List.of(), Map.of("max-steal", "5"))
        .print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String table = bytes.toString(StandardCharsets.UTF_8);
    assertThat(table)
        .contains("more than 5% of the machine's CPU")
        .contains("Runs discarded: kvmq-memory 1.")
        .contains("Runs kept above the bound (their tries ran out): quartz-ram 1.")
        // the discarded run's figures are not among kvmq-memory's
        .contains("| kvmq-memory | 1,000 | - | 90,000 |");
  }

  @Test
  void aDiscardedRunIsMeasuredAgainAfterAllTheOthersAndItsLastTryIsKept() throws Exception {
    List<String> tries = new ArrayList<>();
    // b is discarded at every try, c at its first only
    QueueBench.measureAgainLater(
        List.of("a", "b", "c"),
        2,
        (item, round, last) -> {
          tries.add(item + round + (last ? " last" : ""));
          return item.equals("a") || (item.equals("c") && round > 0) || last;
        });
    assertThat(tries).containsExactly("a0", "b0", "c0", "b1", "c1", "b2 last");
  }

  @Test
  void withNoRetriesEveryFirstTryIsTheLast() throws Exception {
    List<String> tries = new ArrayList<>();
    QueueBench.measureAgainLater(
        List.of("a", "b"),
        0,
        (item, round, last) -> {
          tries.add(item + round + (last ? " last" : ""));
          return false;
        });
    assertThat(tries).containsExactly("a0 last", "b0 last");
  }

  @Test
  void aNodesRunDiscardedForStealIsLeftOutOfTheNodesTable() {
    QueueBench b = new QueueBench();
    b.readLog(
        List.of(
            "# options: {systems=kvmq-postgres, scenarios=nodes, reps=1, nodes=2}",
            "# kvmq-postgres nodes (2 JVMs, repetition 1/1)",
            "#   | node 0: warmup_rounds = 7",
            "#   nodes_2_drain_per_s = 5000.0000",
            "#   nodes_2_run_twice = 0",
            "#   nodes_2_steal_percent = 20.0000",
            "#   " + QueueBench.DISCARDED + " the host took 20.0% of the machine's CPU (steal)",
            "#   (30.0 s)",
            "# kvmq-postgres nodes (2 JVMs, repetition 1/1, measured again 1/3 for steal)",
            "#   nodes_2_drain_per_s = 9000.0000",
            "#   nodes_2_run_twice = 0",
            "#   nodes_2_steal_percent = 0.5000",
            "#   (30.0 s)"));
    assertThat(b.results().get("kvmq-postgres").get("nodes_2_drain_per_s"))
        .containsExactly("9000.0000");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new Report(b.results(), List.of(), Map.of("nodes", "2"))
        .print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .contains("| 2 | 9,000 | - | 0 | 1 | 0.50 |")
        .contains("Runs discarded: kvmq-postgres 1.");
  }
}
