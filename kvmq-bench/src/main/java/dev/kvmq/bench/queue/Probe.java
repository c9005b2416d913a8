package dev.kvmq.bench.queue;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Where every system's handler reports: the start time of each job's handler and the count of
 * finished jobs of the current phase. Jobs of a phase have ids {@code base .. base+n-1}; others
 * (left over from an earlier phase) are ignored.
 */
final class Probe {

  private static volatile Phase phase = new Phase(0, 0);

  private Probe() {}

  /** One measured phase. */
  static final class Phase {
    final int base;
    final int n;
    final long[] startNanos;
    final AtomicInteger finished = new AtomicInteger();
    final AtomicInteger started = new AtomicInteger();
    final CountDownLatch allFinished;
    final CountDownLatch allStarted;
    volatile long lastFinishNanos;

    /** How many times each job's handler ran (the nodes scenario reports every run). */
    final AtomicIntegerArray runs;

    /** Wall-clock times, comparable across JVMs: the first handler start, the last finish. */
    volatile long firstStartMillis;

    volatile long lastFinishMillis;

    Phase(int base, int n) {
      this.base = base;
      this.n = n;
      this.startNanos = new long[n];
      this.allFinished = new CountDownLatch(n);
      this.allStarted = new CountDownLatch(n);
      this.runs = new AtomicIntegerArray(n);
    }

    /** Waits until every job of the phase finished; false on timeout. */
    boolean awaitFinished(long seconds) throws InterruptedException {
      return allFinished.await(seconds, TimeUnit.SECONDS);
    }

    /** Waits until every job of the phase started; false on timeout. */
    boolean awaitStarted(long seconds) throws InterruptedException {
      return allStarted.await(seconds, TimeUnit.SECONDS);
    }

    long[] startNanos() {
      return Arrays.copyOf(startNanos, n);
    }
  }

  /** Begins a phase of {@code n} jobs with ids from {@code base}. */
  static Phase begin(int base, int n) {
    Phase p = new Phase(base, n);
    phase = p;
    return p;
  }

  /** A handler started job {@code id}. */
  static void started(int id) {
    long now = System.nanoTime();
    Phase p = phase;
    int i = id - p.base;
    if (i >= 0 && i < p.n) {
      p.runs.incrementAndGet(i);
      synchronized (p) {
        if (p.firstStartMillis == 0) {
          p.firstStartMillis = System.currentTimeMillis();
        }
        if (p.startNanos[i] != 0) {
          return; // a second run of the same job (at-least-once): the first start counts
        }
        p.startNanos[i] = now;
      }
      p.started.incrementAndGet();
      p.allStarted.countDown();
    }
  }

  /** Job {@code id} finished (kvmq: its completion is committed). */
  static void finished(int id) {
    Phase p = phase;
    int i = id - p.base;
    if (i >= 0 && i < p.n) {
      p.lastFinishNanos = System.nanoTime();
      p.lastFinishMillis = System.currentTimeMillis();
      p.finished.incrementAndGet();
      p.allFinished.countDown();
    }
  }
}
