package dev.kvmq.bench.queue;

import java.time.Duration;
import java.util.List;

/**
 * A system under test: kvmq on one store, or a peer library in one configuration. Every job carries
 * an int; the handler is a no-op that reports to {@link Probe}.
 */
@SuppressWarnings("try") // close() may be interrupted while the system stops; callers pass it on
interface Sut extends AutoCloseable {

  /** The configuration, printed beside the system's rows. */
  String settings();

  /** Pushes one job, due now, and returns when the system has accepted it. */
  void pushOne(int id) throws Exception;

  /** Pushes many jobs, due now, with the system's batch API. */
  void pushBatch(List<Integer> ids) throws Exception;

  /**
   * Pushes one job, due now, with a unique key of its own (the drain-unique scenario); kvmq only.
   */
  default void pushOneUnique(int id) throws Exception {
    throw new UnsupportedOperationException("unique keys: kvmq only");
  }

  /** Pushes many jobs due after {@code delay} (claim-cost backlog); kvmq only. */
  default void pushDelayed(List<Integer> ids, Duration delay) throws Exception {
    throw new UnsupportedOperationException("delayed backlog: kvmq only");
  }

  /**
   * Starts processing with {@code threads} handler threads. Each handler calls {@link
   * Probe#started(int)} and, once the job's completion is done (kvmq: committed; peers: the handler
   * returned), {@link Probe#finished(int)}.
   *
   * @return stops processing when closed
   */
  AutoCloseable start(int threads) throws Exception;

  @Override
  void close() throws Exception;
}
