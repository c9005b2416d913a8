package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Commits the operations of many threads together, with no thread of its own: the first submitter
 * to find no commit under way becomes the leader, takes every pending operation, commits them with
 * one {@link KvStore#commitAll}, runs their callbacks, and goes on while more are pending. Other
 * submitters return at once; their callbacks run on the leader.
 *
 * <p>So a handler thread need not wait for the flush of its own completion before taking its next
 * job, and a durable store flushes once for many completions.
 *
 * <p>Riding with a claim: on a store that commits one at a time, while the worker's pass is running
 * ({@link #rideWith}; asked for is not enough), a submitted operation starts no commit. It waits
 * for the pass, whose claim takes it ({@link #take}) and commits it in the claim's own commit, or
 * whose iteration ends without a claim and commits it here ({@link #drain}). A busy worker's
 * completions and its next claim are then one commit, not two in a row (docs/semantics.md, "The
 * group committer").
 */
final class GroupCommitter {

  private static final System.Logger LOG = System.getLogger(GroupCommitter.class.getName());
  private static final int MAX_BATCH = 1024;

  /** Called with the result, or with the store's exception (then result is null). */
  interface Callback {
    void done(CommitResult result, RuntimeException failure);
  }

  private record Pending(AtomicOperation operation, Callback callback) {}

  private final KvStore store;
  private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean leading = new AtomicBoolean();

  /** True while a claim that will take the pending operations is coming; set once, by the pass. */
  private volatile BooleanSupplier claimComing = () -> false;

  GroupCommitter(KvStore store) {
    this.store = store;
  }

  /**
   * Lets operations wait for a claim while {@code claimComing} says one is coming. Whoever it is
   * must take them ({@link #take}) or commit them ({@link #drain}) once it stops saying so: an
   * operation submitted while it said true starts no commit of its own.
   */
  void rideWith(BooleanSupplier claimComing) {
    this.claimComing = claimComing;
  }

  void submit(AtomicOperation operation, Callback callback) {
    pending.add(new Pending(operation, callback));
    // After the add: a pass that stops saying a claim is coming drains after it stops, so either
    // it sees this operation or this thread sees that no claim is coming.
    if (!claimComing.getAsBoolean()) {
      drain();
    }
  }

  /** Commits every pending operation, unless a commit is under way (whose leader takes them). */
  void drain() {
    while (!pending.isEmpty() && leading.compareAndSet(false, true)) {
      try {
        commit(poll());
      } finally {
        leading.set(false);
      }
    }
  }

  /**
   * Takes the pending operations, up to a batch, for the caller to commit with its own operations;
   * it must then call {@link Ride#committed} or {@link Ride#failed} once.
   */
  Ride take() {
    return new Ride(poll());
  }

  private List<Pending> poll() {
    List<Pending> batch = new ArrayList<>();
    Pending p;
    while (batch.size() < MAX_BATCH && (p = pending.poll()) != null) {
      batch.add(p);
    }
    return batch;
  }

  /** Operations taken to ride in another commit, and their callbacks. */
  static final class Ride {
    private final List<Pending> taken;

    private Ride(List<Pending> taken) {
      this.taken = taken;
    }

    /** The operations, in the order their results are expected. */
    List<AtomicOperation> operations() {
      List<AtomicOperation> ops = new ArrayList<>(taken.size());
      for (Pending p : taken) {
        ops.add(p.operation());
      }
      return ops;
    }

    boolean isEmpty() {
      return taken.isEmpty();
    }

    /** Runs the callbacks with the results, one per operation, in order. */
    void committed(List<CommitResult> results) {
      for (int i = 0; i < taken.size(); i++) {
        call(taken.get(i).callback(), results.get(i), null);
      }
    }

    /** Runs the callbacks with the store's exception: any of the operations may have applied. */
    void failed(RuntimeException failure) {
      for (Pending p : taken) {
        call(p.callback(), null, failure);
      }
    }
  }

  private void commit(List<Pending> batch) {
    Ride ride = new Ride(batch);
    List<CommitResult> results;
    try {
      results = store.commitAll(ride.operations());
    } catch (RuntimeException e) {
      ride.failed(e);
      return;
    }
    ride.committed(results);
  }

  private static void call(Callback callback, CommitResult result, RuntimeException failure) {
    try {
      callback.done(result, failure);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "commit callback failed; ignored", e);
    }
  }
}
