package dev.kvmq;

/**
 * What a schedule does with slots that passed while no worker fired them (every node down, the
 * queue paused, a worker far behind). A slot counts as missed when it is later than its schedule's
 * {@link Schedule#lateness() lateness} by the time it is fired, or when a later slot is also due.
 * An immutable value.
 *
 * <ul>
 *   <li>{@link #runOnce()} (the default): one job for all the missed slots, carrying the latest of
 *       them as its slot.
 *   <li>{@link #skip()}: no job for missed slots; the schedule goes on at its next slot.
 *   <li>{@link #runEach(int)}: one job per missed slot, the latest {@code limit} of them.
 * </ul>
 *
 * <p>Precisely: a firing finds the due slots (the schedule's next due slot and every later one up
 * to now); {@code runOnce} pushes one job for the latest of them, {@code skip} one for the latest
 * only if it is on time (at most the lateness before now), {@code runEach(n)} one per due slot, the
 * latest n, oldest first. The schedule then goes on at its first slot after now. The work is
 * bounded however long the schedule was down. A paused queue fires nothing: its slots are missed
 * and the policy applies on resume; a paused schedule's slots are skipped ({@link
 * Schedules#pause(String)}).
 */
public final class MissedRuns {

  /** The kinds of policy. */
  public enum Kind {
    /** One job for all the missed slots. */
    RUN_ONCE,
    /** No job for missed slots. */
    SKIP,
    /** One job per missed slot, up to a limit. */
    RUN_EACH
  }

  /** The largest limit of {@link #runEach(int)}. */
  public static final int MAX_LIMIT = 1_000;

  private static final MissedRuns RUN_ONCE = new MissedRuns(Kind.RUN_ONCE, 1);
  private static final MissedRuns SKIP = new MissedRuns(Kind.SKIP, 0);

  private final Kind kind;
  private final int limit;

  private MissedRuns(Kind kind, int limit) {
    this.kind = kind;
    this.limit = limit;
  }

  /**
   * One job for all the missed slots, with the latest missed slot as its {@link Job#slot()}.
   *
   * @return the policy
   */
  public static MissedRuns runOnce() {
    return RUN_ONCE;
  }

  /**
   * No job for missed slots.
   *
   * @return the policy
   */
  public static MissedRuns skip() {
    return SKIP;
  }

  /**
   * One job per missed slot, for the latest {@code limit} of them; older ones are dropped.
   *
   * @param limit the most jobs one firing pushes for missed slots, 1 to {@link #MAX_LIMIT}
   * @return the policy
   * @throws IllegalArgumentException if {@code limit} is outside 1 to {@link #MAX_LIMIT}
   */
  public static MissedRuns runEach(int limit) {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException(
          "the limit of missed runs is 1 to " + MAX_LIMIT + ": " + limit);
    }
    return new MissedRuns(Kind.RUN_EACH, limit);
  }

  /**
   * Returns the kind of policy.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * Returns the most jobs one firing pushes for missed slots: 1 for {@link #runOnce()}, 0 for
   * {@link #skip()}, the limit for {@link #runEach(int)}.
   *
   * @return the limit
   */
  public int limit() {
    return limit;
  }

  /**
   * Compares kind and limit.
   *
   * @param o the other object
   * @return true if {@code o} is the same policy
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof MissedRuns m && kind == m.kind && limit == m.limit;
  }

  /**
   * Hashes kind and limit.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return kind.hashCode() * 31 + limit;
  }

  /**
   * Describes the policy: {@code runOnce}, {@code skip} or {@code runEach(n)}.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return switch (kind) {
      case RUN_ONCE -> "runOnce";
      case SKIP -> "skip";
      case RUN_EACH -> "runEach(" + limit + ")";
    };
  }
}
