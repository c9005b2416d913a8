package dev.kvmq.store;

/**
 * The outcome of committing an {@link AtomicOperation}.
 *
 * <p>A failed check is a normal outcome, not an exception: {@code ok} is false, nothing was
 * written, and the caller reads again and decides.
 *
 * @param ok true if every check held and every mutation was applied
 * @param versionstamp the versionstamp now carried by every key this commit wrote, when {@code ok};
 *     0 when not
 */
public record CommitResult(boolean ok, long versionstamp) {

  private static final CommitResult FAILED = new CommitResult(false, 0);

  /**
   * Checks the components.
   *
   * @param ok true if every check held and every mutation was applied
   * @param versionstamp the versionstamp now carried by every key this commit wrote, when {@code
   *     ok}; 0 when not
   * @throws IllegalArgumentException if {@code ok} and {@code versionstamp < 1}, or not {@code ok}
   *     and {@code versionstamp != 0}
   */
  public CommitResult {
    if (ok ? versionstamp < 1 : versionstamp != 0) {
      throw new IllegalArgumentException(
          "inconsistent commit result: ok=" + ok + ", versionstamp=" + versionstamp);
    }
  }

  /**
   * A commit that applied.
   *
   * @param versionstamp the commit's versionstamp, at least 1
   * @return the result
   * @throws IllegalArgumentException if {@code versionstamp < 1}
   */
  public static CommitResult committed(long versionstamp) {
    return new CommitResult(true, versionstamp);
  }

  /**
   * A commit refused because a check did not hold.
   *
   * @return the result
   */
  public static CommitResult checkFailed() {
    return FAILED;
  }
}
