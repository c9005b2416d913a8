package dev.kvmq.jakarta;

import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the workers of one queue did in this application since it started: outcome counts, handler
 * durations, and completed and failed attempts per second over the last {@value #WINDOW_SECONDS}
 * seconds (the dashboard's chart and the admin API's {@code /activity}). Fed by {@link KvmqRuntime}
 * from the kernel's worker events, after the outcome was committed. Kept in memory only: a restart
 * starts from zero.
 *
 * <p>Thread-safe. The per-second ring is guarded by this object's lock; the totals are lock-free.
 */
final class QueueActivity {

  /** How many seconds of per-second counts are kept. */
  static final int WINDOW_SECONDS = 900;

  private final String queue;
  private final LongAdder completed = new LongAdder();
  private final LongAdder retried = new LongAdder();
  private final LongAdder dead = new LongAdder();
  private final LongAdder leaseLost = new LongAdder();
  private final LongAdder cancelled = new LongAdder();
  private final LongAdder handlerCalls = new LongAdder();
  private final LongAdder handlerNanos = new LongAdder();
  private final LongAccumulator handlerMaxNanos = new LongAccumulator(Math::max, 0);

  // Slot i counts the second stamps[i]; a slot whose stamp is not the second asked for is empty.
  private final long[] stamps = new long[WINDOW_SECONDS];
  private final int[] completedPerSecond = new int[WINDOW_SECONDS];
  private final int[] failedPerSecond = new int[WINDOW_SECONDS];

  QueueActivity(String queue) {
    this.queue = queue;
    java.util.Arrays.fill(stamps, Long.MIN_VALUE);
  }

  String queue() {
    return queue;
  }

  void completed(long epochMillis) {
    completed.increment();
    count(epochMillis, true);
  }

  /** A failed attempt: retried later, or dead when no retry is left. */
  void failed(boolean isDead, long epochMillis) {
    (isDead ? dead : retried).increment();
    count(epochMillis, false);
  }

  /** An outcome refused because the lease ran out or was taken over. */
  void leaseLost() {
    leaseLost.increment();
  }

  /** An outcome refused because an operator cancelled the running job. */
  void cancelled() {
    cancelled.increment();
  }

  /** One handler call, however it ended. */
  void handled(long nanos) {
    handlerCalls.increment();
    handlerNanos.add(nanos);
    handlerMaxNanos.accumulate(nanos);
  }

  private synchronized void count(long epochMillis, boolean ok) {
    long second = Math.floorDiv(epochMillis, 1000);
    int i = (int) Math.floorMod(second, (long) WINDOW_SECONDS);
    if (stamps[i] != second) {
      if (stamps[i] > second && stamps[i] != Long.MIN_VALUE) {
        return; // older than the window (a clock step back): only the totals count it
      }
      stamps[i] = second;
      completedPerSecond[i] = 0;
      failedPerSecond[i] = 0;
    }
    if (ok) {
      completedPerSecond[i]++;
    } else {
      failedPerSecond[i]++;
    }
  }

  /**
   * The totals, and the per-second counts of the {@code seconds} seconds that end with the one
   * holding {@code nowMillis}, oldest first.
   *
   * @throws IllegalArgumentException if {@code seconds} is not in 1..{@value #WINDOW_SECONDS}
   */
  synchronized Snapshot snapshot(int seconds, long nowMillis) {
    if (seconds < 1 || seconds > WINDOW_SECONDS) {
      throw new IllegalArgumentException(
          "seconds must be 1 to " + WINDOW_SECONDS + ", not " + seconds);
    }
    long last = Math.floorDiv(nowMillis, 1000);
    long start = last - seconds + 1;
    int[] ok = new int[seconds];
    int[] failed = new int[seconds];
    for (int k = 0; k < seconds; k++) {
      long second = start + k;
      int i = (int) Math.floorMod(second, (long) WINDOW_SECONDS);
      if (stamps[i] == second) {
        ok[k] = completedPerSecond[i];
        failed[k] = failedPerSecond[i];
      }
    }
    long calls = handlerCalls.sum();
    long nanos = handlerNanos.sum();
    long r = retried.sum();
    long d = dead.sum();
    return new Snapshot(
        queue,
        completed.sum(),
        r + d,
        r,
        d,
        leaseLost.sum(),
        cancelled.sum(),
        calls,
        calls == 0 ? 0 : nanos / 1e6 / calls,
        handlerMaxNanos.get() / 1e6,
        start,
        ok,
        failed);
  }

  /**
   * A reading of {@link QueueActivity}.
   *
   * @param failed failed attempts: {@code retried + dead}
   * @param startSecond the epoch second of the first per-second count
   */
  record Snapshot(
      String queue,
      long completed,
      long failed,
      long retried,
      long dead,
      long leaseLost,
      long cancelled,
      long handlerCalls,
      double handlerMeanMillis,
      double handlerMaxMillis,
      long startSecond,
      int[] completedPerSecond,
      int[] failedPerSecond) {}
}
