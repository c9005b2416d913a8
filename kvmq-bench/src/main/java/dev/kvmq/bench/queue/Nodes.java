package dev.kvmq.bench.queue;

import java.util.List;

/**
 * The pure part of the nodes scenario (K worker JVMs draining one PostgreSQL database): merging
 * what each JVM's handler ran into jobs run twice and jobs never run, and the total drain from the
 * JVMs' wall-clock times. {@link QueueBench} runs the JVMs and feeds this; {@code NodesTest} checks
 * it.
 */
final class Nodes {

  /** The first job id of the shared backlog (far above the ids of any JVM's warm-up). */
  static final int BASE = 100_000_000;

  private Nodes() {}

  /**
   * What the JVMs ran, against the backlog of ids {@code base .. base+n-1}.
   *
   * @param ran how many handler runs there were in all
   * @param runTwice how many jobs ran more than once (in one JVM or in two)
   * @param neverRun how many jobs of the backlog ran in no JVM
   * @param foreign how many runs had an id outside the backlog
   */
  record Merge(long ran, long runTwice, long neverRun, long foreign) {

    /** A run counts only when every job ran and no id came from elsewhere. */
    boolean complete() {
      return neverRun == 0 && foreign == 0;
    }
  }

  /**
   * Merges the ids each JVM's handler ran (an id once per run).
   *
   * @param base the backlog's first id
   * @param n the backlog's size
   * @param perNode per JVM, the id of every run of its handler
   * @return the counts
   */
  static Merge merge(int base, int n, List<int[]> perNode) {
    int[] runs = new int[n];
    long ran = 0;
    long foreign = 0;
    for (int[] ids : perNode) {
      for (int id : ids) {
        ran++;
        long i = (long) id - base;
        if (i < 0 || i >= n) {
          foreign++;
        } else {
          runs[(int) i]++;
        }
      }
    }
    long twice = 0;
    long never = 0;
    for (int r : runs) {
      if (r == 0) {
        never++;
      } else if (r > 1) {
        twice++;
      }
    }
    return new Merge(ran, twice, never, foreign);
  }

  /**
   * The total drain, as the drain scenario times one JVM: jobs / (last completion - first handler
   * start), here the first start in any JVM and the last completion in any JVM, from their
   * wall-clock milliseconds ({@link System#currentTimeMillis()}, one clock on one machine).
   *
   * @param n the jobs drained
   * @param firstStartMillis per JVM, when its handler first started a job (0: it ran none)
   * @param lastFinishMillis per JVM, when its last completion was committed (0: none)
   * @return jobs per second
   * @throws IllegalArgumentException if no JVM ran a job, or the last completion is not after the
   *     first start
   */
  static double drainPerSecond(int n, long[] firstStartMillis, long[] lastFinishMillis) {
    long first = Long.MAX_VALUE;
    for (long t : firstStartMillis) {
      if (t > 0) {
        first = Math.min(first, t);
      }
    }
    long last = 0;
    for (long t : lastFinishMillis) {
      last = Math.max(last, t);
    }
    if (first == Long.MAX_VALUE || last <= first) {
      throw new IllegalArgumentException(
          "no drain to time: first start " + first + ", last completion " + last);
    }
    return n / ((last - first) / 1e3);
  }
}
