package dev.kvmq.testing;

import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Runs a property over many seeded random cases and names the failing seed, so that any failure can
 * be replayed exactly: {@code -Dkvmq.seed=<seed>} runs that one seed alone.
 *
 * <p>Plain JUnit instead of a property-testing library: every case is a pure function of its seed,
 * which is all the replay a failure needs.
 */
public final class Seeds {

  private Seeds() {}

  /**
   * Runs {@code property} once per seed, from {@code firstSeed} on, or only for the seed given in
   * the system property {@code kvmq.seed}.
   *
   * @param name the property's name, for the failure message
   * @param count how many seeds to run
   * @param firstSeed the first seed
   * @param property the check, given a random generator made from the seed
   * @throws AssertionError naming the seed when a case fails
   */
  public static void forEach(
      String name, int count, long firstSeed, Consumer<SplittableRandom> property) {
    String only = System.getProperty("kvmq.seed");
    long from = only != null ? Long.parseLong(only) : firstSeed;
    int n = only != null ? 1 : count;
    for (long seed = from; seed < from + n; seed++) {
      try {
        property.accept(new SplittableRandom(seed));
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError(
            name
                + " failed for seed "
                + seed
                + " (replay: -Dkvmq.seed="
                + seed
                + "): "
                + e.getMessage(),
            e);
      }
    }
  }
}
