package dev.kvmq.bench.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LatenciesTest {

  @Test
  void aHandlerThatStartsBeforeThePushReturnsCountsTheTimeFromTheCall() {
    // push called at 1,000,000 ns, returned at 3,000,000; the handler started at 2,000,000 (woken
    // inside the commit): the pickup is 1 ms, not 0 as with a clock that starts at the return
    long[] called = {1_000_000L};
    long[] returned = {3_000_000L};
    long[] started = {2_000_000L};

    assertThat(Latencies.sortedMs(called, started)).containsExactly(1.0);
    assertThat(Latencies.sortedMs(called, returned)).containsExactly(2.0);
  }

  @Test
  void nothingIsClamped() {
    // a start stamped before the call (which a handler cannot do) shows as negative, not as 0
    assertThat(Latencies.sortedMs(new long[] {5_000_000L}, new long[] {4_500_000L}))
        .containsExactly(-0.5);
  }

  @Test
  void latenciesAreSortedAndPerJob() {
    long[] called = {0, 10_000_000L, 20_000_000L};
    long[] started = {3_000_000L, 11_000_000L, 22_000_000L};

    assertThat(Latencies.sortedMs(called, started)).containsExactly(1.0, 2.0, 3.0);
  }

  @Test
  void quantilesAreNearestRank() {
    double[] v = new double[100];
    for (int i = 0; i < v.length; i++) {
      v[i] = i + 1; // 1 .. 100
    }

    assertThat(Latencies.quantile(v, 0.50)).isCloseTo(50, within(0.0));
    assertThat(Latencies.quantile(v, 0.99)).isCloseTo(99, within(0.0));
    assertThat(Latencies.quantile(v, 1.0)).isCloseTo(100, within(0.0));
    assertThat(Latencies.quantile(new double[] {7}, 0.99)).isCloseTo(7, within(0.0));
    assertThat(Latencies.quantile(new double[0], 0.5)).isNaN();
  }

  @Test
  void mismatchedStampsAreRefused() {
    assertThatThrownBy(() -> Latencies.sortedMs(new long[2], new long[3]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2 start stamps for 3 ends");
  }
}
