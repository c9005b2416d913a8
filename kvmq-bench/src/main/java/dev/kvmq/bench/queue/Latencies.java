package dev.kvmq.bench.queue;

import java.util.Arrays;

/** Latencies of the pickup scenario, from {@link System#nanoTime()} stamps, in milliseconds. */
final class Latencies {

  private Latencies() {}

  /**
   * {@code to[i] - from[i]} for every i, in ms, sorted. Nothing is clamped: the pickup is timed
   * from just before the push call, so a handler that starts while the call has not yet returned
   * still counts the time from the call.
   */
  static double[] sortedMs(long[] from, long[] to) {
    if (from.length != to.length) {
      throw new IllegalArgumentException(from.length + " start stamps for " + to.length + " ends");
    }
    double[] ms = new double[from.length];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = (to[i] - from[i]) / 1e6;
    }
    Arrays.sort(ms);
    return ms;
  }

  /** The nearest-rank quantile {@code q} (0 < q <= 1) of sorted values. */
  static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
