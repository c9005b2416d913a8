package dev.kvmq;

/**
 * How many jobs a queue holds per status, counted from its indexes without reading jobs.
 *
 * @param waiting due and not being processed
 * @param delayed waiting for their delay
 * @param processing leased under a live lease
 * @param dead dead letters
 */
public record QueueCounts(long waiting, long delayed, long processing, long dead) {

  /**
   * All the jobs that are not dead letters.
   *
   * @return {@code waiting + delayed + processing}
   */
  public long queued() {
    return waiting + delayed + processing;
  }
}
