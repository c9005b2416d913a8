package dev.kvmq;

/**
 * How many jobs a queue holds per status, counted from its indexes without reading jobs.
 *
 * @param waiting due and not being processed
 * @param delayed waiting for their delay
 * @param processing leased under a live lease
 * @param dead dead letters
 * @param held written in an application's transaction and not released yet
 */
public record QueueCounts(long waiting, long delayed, long processing, long dead, long held) {

  /**
   * Counts with no held jobs.
   *
   * @param waiting due and not being processed
   * @param delayed waiting for their delay
   * @param processing leased under a live lease
   * @param dead dead letters
   */
  public QueueCounts(long waiting, long delayed, long processing, long dead) {
    this(waiting, delayed, processing, dead, 0);
  }

  /**
   * All the jobs that are not dead letters nor held.
   *
   * @return {@code waiting + delayed + processing}
   */
  public long queued() {
    return waiting + delayed + processing;
  }
}
