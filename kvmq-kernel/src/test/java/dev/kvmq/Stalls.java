package dev.kvmq;

import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Stalled handlers for the simulations: now and then the process of a running handler stalls (a
 * long GC pause, a frozen VM). Its own worker does nothing, so its leases are not renewed, while
 * time passes (3 to 13 s; the simulations' leases are 5 s, renewed every 2 s) and the other workers
 * go on; then the handler returns. Another worker may have taken the job over meanwhile, and the
 * stalled worker's outcome is refused: a lost lease that is not a cancel. A shorter stall leaves
 * the lease alive, renewed late. One handler stalls at a time.
 */
final class Stalls {

  /** One handler call in this many stalls. */
  static final int ONE_IN = 40;

  private final FakeClock clock;
  private final List<ManualScheduler> schedulers;
  private boolean stalling;

  /**
   * @param clock the simulation's clock
   * @param schedulers the workers' schedulers, read at each stall (crashed workers are replaced)
   */
  Stalls(FakeClock clock, List<ManualScheduler> schedulers) {
    this.clock = clock;
    this.schedulers = schedulers;
  }

  /**
   * Called by a handler while it runs: stalls one call in {@link #ONE_IN}, unless a stall is under
   * way.
   *
   * @param own the scheduler of the handler's worker, which does not run during the stall
   * @param r the handler's worker's stream of stalls
   */
  void maybeStall(ManualScheduler own, SplittableRandom r) {
    if (stalling || r.nextInt(ONE_IN) != 0) {
      return;
    }
    stalling = true;
    try {
      clock.advance(Duration.ofMillis(3_000 + r.nextInt(10_000)));
      for (int pass = 0; pass < 3; pass++) {
        for (ManualScheduler other : List.copyOf(schedulers)) {
          if (other != own) {
            other.runUntilIdle();
          }
        }
      }
    } finally {
      stalling = false;
    }
  }
}
