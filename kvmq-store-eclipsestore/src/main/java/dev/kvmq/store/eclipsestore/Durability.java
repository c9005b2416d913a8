package dev.kvmq.store.eclipsestore;

/**
 * What an acknowledged commit of an {@link EclipseStoreKvStore} survives.
 *
 * <p>A commit is acknowledged when {@code commit} or {@code commitAll} returns. Either way,
 * concurrent commits are grouped: one write (and, for {@link #FSYNC}, one flush to the disk) serves
 * every commit waiting at that moment.
 */
public enum Durability {

  /**
   * The default. Before a commit is acknowledged its bytes are forced to the storage device ({@code
   * fdatasync}), data file first, then the transactions log that makes them valid; new and deleted
   * files also get their directory forced. An acknowledged commit survives a kill of the process, a
   * crash of the operating system and a power loss (as far as the device honours a flush).
   */
  FSYNC,

  /**
   * Faster, weaker: a commit is acknowledged once its bytes are written to the operating system
   * (the page cache), with no flush to the device. An acknowledged commit survives a crash or kill
   * of the JVM process, <em>not</em> a crash of the operating system or a power loss, which may
   * lose the last seconds of commits. Off by default.
   */
  PROCESS_CRASH_SAFE
}
