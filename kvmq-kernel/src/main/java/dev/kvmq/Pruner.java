package dev.kvmq;

import dev.kvmq.TransitionTable.Node;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The pruning step of a worker's pass (docs/semantics.md, "History"): for each history index
 * (completed, dead, cancelled) whose {@link Retention.Keep} has a limit, reads the oldest {@link
 * #BATCH} entries, asks the pure {@link Transitions#pastRetention} which are past the limit, and
 * removes them with {@link Transitions#prune} in one commit per index. It runs after the pass's
 * claim; when a batch was full (or a commit lost a race) it says so, and the worker asks for
 * another pass, which claims first. When nothing was left to prune it looks again after {@code
 * intervalMillis} at the earliest.
 *
 * <p>Locking: none; used by one pass at a time.
 */
final class Pruner {

  /** The most jobs removed per index per pass. */
  static final int BATCH = 200;

  /**
   * While the worker is busy (its last claim took jobs, or all its slots are full), the next batch
   * waits this many milliseconds, or until the worker has finished half a batch ({@code BATCH / 2})
   * more jobs, whichever comes first: pruning yields to claims, and still removes up to twice as
   * many jobs as the worker finishes, so that a history past its retention shrinks even while the
   * worker is busy. (A fixed gap let the history of a worker finishing 2,900 jobs a second grow by
   * 900 a second past its retention's count; a gap ended by a whole batch of finished jobs removed
   * at most as many as finished, less the jobs finished before the next pass looked, and
   * PostgresBloatBench's churn at 7,000 jobs a second left 51,600 completed jobs kept for a limit
   * of 10,000.) An idle worker prunes batch after batch.
   */
  static final long BUSY_GAP_MILLIS = 100;

  private final QueueKeys keys;
  private final KvStore store;
  private final List<Step> steps;
  private final long intervalMillis;
  private final int batch;
  private final LongSupplier finished;
  private long nextAt = Long.MIN_VALUE;

  /** Whether {@code nextAt} is a busy gap, which {@code batch} more finished jobs end early. */
  private boolean inBusyGap;

  /** {@code finished} when the last batch was pruned. */
  private long finishedAtLast;

  private record Step(KeyRange index, Node node, Retention.Keep keep) {}

  /**
   * A worker's pruner; {@code finished} counts the jobs the worker has finished with so far (it
   * ends a busy gap early, see {@link #BUSY_GAP_MILLIS}).
   */
  Pruner(
      QueueKeys keys,
      KvStore store,
      Retention retention,
      long intervalMillis,
      LongSupplier finished) {
    this(keys, store, retention, intervalMillis, BATCH, finished);
  }

  /** A pruner of {@code batch} jobs per index per call (tests: small ones), never ended early. */
  Pruner(QueueKeys keys, KvStore store, Retention retention, long intervalMillis, int batch) {
    this(keys, store, retention, intervalMillis, batch, () -> 0);
  }

  /** A pruner of {@code batch} jobs per index per call whose busy gaps {@code finished} ends. */
  Pruner(
      QueueKeys keys,
      KvStore store,
      Retention retention,
      long intervalMillis,
      int batch,
      LongSupplier finished) {
    this.keys = keys;
    this.store = store;
    this.intervalMillis = intervalMillis;
    this.batch = batch;
    this.finished = finished;
    List<Step> s = new ArrayList<>(3);
    add(s, keys.completed(), Node.COMPLETED, retention.completed());
    add(s, keys.dead(), Node.DEAD, retention.dead());
    add(s, keys.cancelled(), null, retention.cancelled()); // control's Node.CANCELLED at merge
    this.steps = List.copyOf(s);
  }

  private static void add(List<Step> steps, KeyRange index, Node node, Retention.Keep keep) {
    if (!keep.isUnlimited()) {
      steps.add(new Step(index, node, keep));
    }
  }

  /**
   * Prunes one batch per index of the jobs past the retention at {@code now}, if it is time to
   * look; true if there may be more.
   */
  boolean pruneDue(long now) {
    return pruneDue(now, false);
  }

  /**
   * As {@link #pruneDue(long)}, for a worker that is {@code busy}: then more to prune waits {@link
   * #BUSY_GAP_MILLIS}, or for half a batch of finished jobs, for the next batch (false: no pass is
   * asked for it), so that a drain's claims are not held up by a large history's removal and the
   * history still shrinks while jobs finish.
   */
  boolean pruneDue(long now, boolean busy) {
    if (steps.isEmpty()) {
      return false;
    }
    long done = finished.getAsLong();
    if (now < nextAt && !(inBusyGap && done - finishedAtLast >= Math.max(1, batch / 2))) {
      return false;
    }
    finishedAtLast = done;
    boolean more = false;
    for (Step step : steps) {
      more |= prune(step, now);
    }
    inBusyGap = more && busy;
    if (inBusyGap) {
      nextAt = now + BUSY_GAP_MILLIS;
      return false;
    }
    nextAt = more ? Long.MIN_VALUE : now + intervalMillis;
    return more;
  }

  private boolean prune(Step step, long now) {
    List<KvEntry> oldest = store.list(step.index(), batch, false);
    if (oldest.isEmpty()) {
      return false;
    }
    long total = step.keep().maxCount().isPresent() ? store.count(step.index()) : 0;
    List<KvEntry> past = Transitions.pastRetention(oldest, total, step.keep(), now);
    if (past.isEmpty()) {
      return false;
    }
    Transitions.Removal removal = Transitions.prune(keys, step.node(), past);
    boolean ok = store.commit(removal.operation()).ok();
    return !ok || past.size() == batch;
  }
}
