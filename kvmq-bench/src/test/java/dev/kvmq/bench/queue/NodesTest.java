package dev.kvmq.bench.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class NodesTest {

  @Test
  void aBacklogRunOnceAcrossTheJvmsIsCompleteWithNoneRunTwice() {
    // ids 10..15 split over two JVMs
    Nodes.Merge m = Nodes.merge(10, 6, List.of(new int[] {10, 12, 14}, new int[] {15, 11, 13}));
    assertThat(m).isEqualTo(new Nodes.Merge(6, 0, 0, 0));
    assertThat(m.complete()).isTrue();
  }

  @Test
  void anIdRunInTwoJvmsOrTwiceInOneIsRunTwice() {
    // 11 in both JVMs, 13 twice in the second: two jobs run twice, 8 runs in all
    Nodes.Merge m =
        Nodes.merge(10, 6, List.of(new int[] {10, 11, 12}, new int[] {11, 13, 13, 14, 15}));
    assertThat(m.runTwice()).isEqualTo(2);
    assertThat(m.ran()).isEqualTo(8);
    assertThat(m.neverRun()).isZero();
    // duplicates alone do not make a run fail: they are its result
    assertThat(m.complete()).isTrue();
  }

  @Test
  void aJobRunInNoJvmOrAForeignIdMakesTheRunIncomplete() {
    Nodes.Merge missing = Nodes.merge(10, 4, List.of(new int[] {10, 11}, new int[] {13}));
    assertThat(missing.neverRun()).isEqualTo(1);
    assertThat(missing.complete()).isFalse();

    Nodes.Merge foreign = Nodes.merge(10, 2, List.of(new int[] {10, 11, 9, 12}));
    assertThat(foreign.foreign()).isEqualTo(2);
    assertThat(foreign.neverRun()).isZero();
    assertThat(foreign.complete()).isFalse();
  }

  @Test
  void theTotalDrainRunsFromTheFirstStartInAnyJvmToTheLastCompletionInAny() {
    // first start 1,000 (JVM 2), last completion 3,000 (JVM 1): 2 s for 10,000 jobs
    double perSecond =
        Nodes.drainPerSecond(
            10_000, new long[] {1_200, 1_000, 1_100}, new long[] {3_000, 2_500, 2_900});
    assertThat(perSecond).isEqualTo(5_000.0);
  }

  @Test
  void aJvmThatRanNothingDoesNotMoveTheClock() {
    // JVM 2 started and finished nothing (0): 1,000 jobs from 500 to 1,500 ms
    assertThat(Nodes.drainPerSecond(1_000, new long[] {500, 0}, new long[] {1_500, 0}))
        .isEqualTo(1_000.0);
  }

  @Test
  void noJobRunIsNoDrain() {
    assertThatThrownBy(() -> Nodes.drainPerSecond(10, new long[] {0, 0}, new long[] {0, 0}))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
