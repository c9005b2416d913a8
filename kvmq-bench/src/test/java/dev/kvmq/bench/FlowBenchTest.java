package dev.kvmq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kvmq.bench.FlowBench.Options;
import dev.kvmq.bench.FlowBench.Sample;
import dev.kvmq.bench.FlowBench.Spread;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class FlowBenchTest {

  @Test
  void withNoOptionsEveryStoreRunsTheFlowScenariosThreeTimes() {
    Options o = Options.parse();

    assertThat(o.stores()).containsExactly("memory", "eclipsestore", "postgres");
    assertThat(o.scenarios()).containsExactly("plain", "unique", "groups", "rate", "saturated");
    assertThat(o.jobs()).isEqualTo(20_000);
    assertThat(o.backlog()).isEqualTo(100_000);
    assertThat(o.retained()).isEqualTo(1_000_000);
    assertThat(o.reps()).isEqualTo(3);
    assertThat(o.pushers()).isEqualTo(8);
  }

  @Test
  void optionsSetTheStoresScenariosAndSizes() {
    Options o =
        Options.parse(
            "--stores", "postgres,memory",
            "--scenarios", "unique,prune",
            "--jobs", "500",
            "--retained", "200000",
            "--reps", "5",
            "--backlog", "10",
            "--pushers", "2");

    assertThat(o.stores()).containsExactly("postgres", "memory");
    assertThat(o.scenarios()).containsExactly("unique", "prune");
    assertThat(o)
        .extracting(Options::jobs, Options::retained, Options::reps, Options::backlog)
        .containsExactly(500, 200_000, 5, 10);
    assertThat(o.pushers()).isEqualTo(2);
  }

  @Test
  void aBadOptionIsRefusedByName() {
    assertThatThrownBy(() -> Options.parse("--job", "5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown option --job");
    assertThatThrownBy(() -> Options.parse("--jobs"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("option --jobs needs a value");
    assertThatThrownBy(() -> Options.parse("--scenarios", "plain,uniq"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown \"uniq\"")
        .hasMessageContaining("prune");
    assertThatThrownBy(() -> Options.parse("--stores", "h2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown \"h2\"");
    assertThatThrownBy(() -> Options.parse("--retained", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--retained must be at least 1: 0");
    assertThatThrownBy(() -> Options.parse("--reps", "three"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--reps takes a number: three");
  }

  @Test
  void aSpreadIsTheMedianAndRangeAndARatioPairsTheExtremes() {
    Spread odd = Spread.of(30, 10, 20);
    Spread even = Spread.of(4, 1, 3, 2);

    assertThat(odd).isEqualTo(new Spread(20, 10, 30));
    assertThat(even.median()).isEqualTo(2.5);
    // 10..30 over 4..5 (median 4.5): worst 10/5, best 30/4
    Spread ratio = odd.over(Spread.of(4, 5, 4.5));
    assertThat(ratio.median()).isCloseTo(20 / 4.5, within(1e-9));
    assertThat(ratio.min()).isEqualTo(2.0);
    assertThat(ratio.max()).isEqualTo(7.5);
    assertThatThrownBy(() -> Spread.of()).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aClockMovedOnKeepsRunningInRealTime() {
    FlowBench.ShiftedClock clock = new FlowBench.ShiftedClock();
    long before = System.currentTimeMillis();

    clock.advance(Duration.ofHours(2));

    assertThat(clock.millis()).isGreaterThanOrEqualTo(before + Duration.ofHours(2).toMillis());
    assertThat(clock.instant().toEpochMilli())
        .isLessThanOrEqualTo(System.currentTimeMillis() + Duration.ofHours(2).toMillis());
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aTinyRunOnMemoryDrainsPlainAndUniqueJobsAndPrunesEveryRetainedJob() throws Exception {
    Options o =
        Options.parse(
            "--stores", "memory",
            "--scenarios", "plain,unique,prune",
            "--jobs", "300",
            "--retained", "1000",
            "--reps", "1");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    List<Sample> samples;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      samples = FlowBench.run(o, out, "the command");
    }

    assertThat(value(samples, "plain", "drain_per_s")).isPositive();
    assertThat(value(samples, "unique", "drain_per_s")).isPositive();
    assertThat(value(samples, "prune", "drain_none_per_s")).isPositive();
    assertThat(value(samples, "prune", "drain_pruning_per_s")).isPositive();
    // all 1,000 were kept, then pruned; the 300 completed after the clock moved on are kept
    assertThat(value(samples, "prune", "retained_before")).isEqualTo(1000);
    assertThat(value(samples, "prune", "retained_after")).isEqualTo(300);
    assertThat(value(samples, "prune", "prune_s")).isNotNegative();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertThat(printed).startsWith("# the command");
    assertThat(printed).contains("| memory | unique | ").contains("| memory | ");
    assertThat(printed).contains("while 1000 retained completed jobs are pruned");
  }

  private static double value(List<Sample> samples, String scenario, String name) {
    List<Sample> found =
        samples.stream()
            .filter(s -> s.scenario().equals(scenario) && s.name().equals(name))
            .toList();
    assertThat(found).as(scenario + " " + name).hasSize(1);
    return found.get(0).value();
  }
}
