package dev.kvmq.store.eclipsestore;

import org.eclipse.store.storage.embedded.types.EmbeddedStorageManager;

/**
 * The housekeeping cycles the committer thread runs between group commits: every {@link
 * EclipseStoreKvStore.Builder#compactEvery} bytes written, a whole garbage collection and then a
 * whole file check, in slices of {@link EclipseStoreKvStore.Builder#compactSlice}, so that a commit
 * waits for one slice at most, never for a whole cycle. EclipseStore's background housekeeping
 * alone falls behind under a steady stream of commits (measured: the directory grew by ~650 bytes
 * per pushed and completed job at 18k jobs/s).
 *
 * <p><b>Locking.</b> None: {@link #slice} and {@link #cycleRunning} are called by the committer
 * thread only, which owns every field. The counters are read by tests after the commits they count
 * have returned.
 */
final class Housekeeping {

  private static final System.Logger LOG = System.getLogger(EclipseStoreKvStore.class.getName());

  private final EmbeddedStorageManager storage;
  private final SyncingFileWriter writer;
  private final String directory;
  private final long compactEveryBytes;
  private final long compactSliceNanos;

  /** {@link SyncingFileWriter#bytesWritten()} when the last cycle started. */
  private long compactedAt;

  /** 0: no cycle running; 1: garbage collection; 2: file check. */
  private int compactPhase;

  private long compactStarted;
  private volatile long compactSlices;
  private volatile long compactCycles;

  Housekeeping(
      EmbeddedStorageManager storage,
      SyncingFileWriter writer,
      String directory,
      long compactEveryBytes,
      long compactSliceNanos) {
    this.storage = storage;
    this.writer = writer;
    this.directory = directory;
    this.compactEveryBytes = compactEveryBytes;
    this.compactSliceNanos = compactSliceNanos;
  }

  /** Tells whether a cycle is under way: an idle committer then runs its slices back to back. */
  boolean cycleRunning() {
    return compactPhase != 0;
  }

  /**
   * Runs one slice of the current cycle, starting one if enough bytes were written since the last;
   * a broken store runs none.
   */
  void slice(boolean broken) {
    if (broken || compactEveryBytes <= 0) {
      compactPhase = 0;
      return;
    }
    if (compactPhase == 0) {
      if (writer.bytesWritten() - compactedAt < compactEveryBytes) {
        return;
      }
      compactedAt = writer.bytesWritten();
      compactStarted = System.nanoTime();
      compactPhase = 1;
    }
    try {
      compactSlices++;
      if (compactPhase == 1) {
        if (storage.issueGarbageCollection(compactSliceNanos)) {
          compactPhase = 2;
        }
      } else if (storage.issueFileCheck(compactSliceNanos)) {
        compactPhase = 0;
        compactCycles++;
        long ms = (System.nanoTime() - compactStarted) / 1_000_000;
        LOG.log(
            System.Logger.Level.DEBUG,
            () -> "housekeeping cycle of " + directory + " done in " + ms + " ms");
      }
    } catch (RuntimeException e) {
      compactPhase = 0;
      LOG.log(
          System.Logger.Level.WARNING,
          "housekeeping of " + directory + " failed; commits go on",
          e);
    }
  }

  /** Cycles finished since open. */
  long cycles() {
    return compactCycles;
  }

  /** Slices run since open. */
  long slices() {
    return compactSlices;
  }
}
