package dev.kvmq.bench.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Work over {@code 0..n} split in stripes, one thread each (the benchmarks' parallel pushes). */
public final class Stripes {

  private Stripes() {}

  /** One stripe's work. */
  @FunctionalInterface
  public interface Range {
    /**
     * Runs the work for {@code lo} (inclusive) to {@code hi} (exclusive).
     *
     * @param lo the first index
     * @param hi the index after the last
     * @throws Exception if the work fails
     */
    void run(int lo, int hi) throws Exception;
  }

  /**
   * Splits {@code 0..n} in {@code threads} stripes and runs them on as many threads, waiting for
   * all.
   *
   * @param n how many indexes
   * @param threads how many stripes and threads
   * @param range the work of one stripe
   * @throws Exception the first stripe's failure (wrapped in an ExecutionException)
   */
  public static void run(int n, int threads, Range range) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      int per = (n + threads - 1) / threads;
      for (int t = 0; t < threads; t++) {
        int lo = t * per;
        int hi = Math.min(n, lo + per);
        if (lo < hi) {
          futures.add(
              pool.submit(
                  () -> {
                    range.run(lo, hi);
                    return null;
                  }));
        }
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
