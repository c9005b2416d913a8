package dev.kvmq;

import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Stalled handlers for the simulations: now and then the process of a running handler stalls (a
 * long GC pause, a frozen VM). Its own worker does nothing, so its leases are not renewed, while
 * time passes (3 to 13 s; the simulations' leases are 5 s, renewed every 2 s) and the other workers
 * go on; then the handler returns. Another worker may have taken the job over meanwhile, and the
 * stalled worker's outcome is refused: a lost lease that is not a cancel. A shorter stall leaves
 * the lease alive, renewed late.
 *
 * <p>Two workers may be stalled at once: one handler that the other workers run during a stall may
 * stall too, and then neither stalled worker runs until its own stall ends. Every worker runs on
 * the test's one thread, so a stall that begins during another ends before it: two stalls overlap
 * by nesting, never by crossing. A stall holds at most one other, and only while a third worker
 * runs: with none, the second stalled worker would be alone to run the jobs that its own stalls
 * make due, each of its stalls moving the clock on again, and the first stall would last for
 * simulated days (a run did, before this rule).
 *
 * <p>Stalls one after another are bounded too: while nothing but stalls has moved the clock since
 * the last one ended (the test's step is still running the work they made due), a new stall begins
 * only until they have moved it {@link #CHAIN_LIMIT} in all. Without that bound a step whose stalls
 * make more jobs due than they take (schedules firing over the time each stall adds) ran on for
 * simulated days, until the scheduler's runaway guard stopped it (seed 8868 of 10,000 runs of
 * {@code invariantsHoldUnderFailedCommitsAndCrashedWorkers}).
 */
final class Stalls {

  /** One handler call in this many stalls. */
  static final int ONE_IN = 40;

  /** How far stalls one after another may move the clock before the test moves it again. */
  static final Duration CHAIN_LIMIT = Duration.ofSeconds(60);

  private final FakeClock clock;
  private final List<ManualScheduler> schedulers;
  private final Set<ManualScheduler> stalled = Collections.newSetFromMap(new IdentityHashMap<>());
  private boolean holdsOne;
  private int overlapping;

  /** Where the clock was when the last stall (not nested in another) ended. */
  private Instant lastEnd;

  /** How far the stalls of the chain that ended at {@link #lastEnd} moved the clock. */
  private Duration chain = Duration.ZERO;

  /**
   * @param clock the simulation's clock
   * @param schedulers the workers' schedulers, read at each stall (crashed workers are replaced)
   */
  Stalls(FakeClock clock, List<ManualScheduler> schedulers) {
    this.clock = clock;
    this.schedulers = schedulers;
  }

  /**
   * Called by a handler while it runs: stalls one call in {@link #ONE_IN}, unless a stall under way
   * already holds another or no other worker would be left to run.
   *
   * @param own the scheduler of the handler's worker, which does not run during the stall
   * @param r the handler's worker's stream of stalls
   */
  void maybeStall(ManualScheduler own, SplittableRandom r) {
    boolean nested = !stalled.isEmpty();
    if (nested && (holdsOne || schedulers.size() < 3)) {
      return;
    }
    if (r.nextInt(ONE_IN) != 0) {
      return;
    }
    if (nested) {
      holdsOne = true;
      overlapping++;
    } else {
      if (!clock.instant().equals(lastEnd)) {
        chain = Duration.ZERO; // the test moved the clock since: a new chain
      } else if (chain.compareTo(CHAIN_LIMIT) >= 0) {
        return;
      }
      holdsOne = false;
    }
    stalled.add(own);
    try {
      Duration stall = Duration.ofMillis(3_000 + r.nextInt(10_000));
      if (!nested) {
        chain = chain.plus(stall);
      }
      clock.advance(stall);
      for (int pass = 0; pass < 3; pass++) {
        for (ManualScheduler other : List.copyOf(schedulers)) {
          if (!stalled.contains(other)) {
            other.runUntilIdle();
          }
        }
      }
    } finally {
      stalled.remove(own);
      if (!nested) {
        lastEnd = clock.instant();
      }
    }
  }

  /**
   * Counts the stalls that began while another worker was stalled.
   *
   * @return how many so far
   */
  int overlapping() {
    return overlapping;
  }

  /**
   * Whether {@code s}'s worker is stalled now: its process is frozen, so it runs nothing.
   *
   * @param s a worker's scheduler
   * @return true while one of its handlers stalls
   */
  boolean isStalled(ManualScheduler s) {
    return stalled.contains(s);
  }
}
