package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Commits the operations of many threads together, with no thread of its own: the first submitter
 * to find no commit under way becomes the leader, takes every pending operation, commits them with
 * one {@link KvStore#commitAll}, runs their callbacks, and goes on while more are pending. Other
 * submitters return at once; their callbacks run on the leader.
 *
 * <p>So a handler thread need not wait for the flush of its own completion before taking its next
 * job, and a durable store flushes once for many completions.
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

  GroupCommitter(KvStore store) {
    this.store = store;
  }

  void submit(AtomicOperation operation, Callback callback) {
    pending.add(new Pending(operation, callback));
    drain();
  }

  private void drain() {
    while (!pending.isEmpty() && leading.compareAndSet(false, true)) {
      try {
        List<Pending> batch = new ArrayList<>();
        Pending p;
        while (batch.size() < MAX_BATCH && (p = pending.poll()) != null) {
          batch.add(p);
        }
        commit(batch);
      } finally {
        leading.set(false);
      }
    }
  }

  private void commit(List<Pending> batch) {
    List<AtomicOperation> ops = new ArrayList<>(batch.size());
    for (Pending p : batch) {
      ops.add(p.operation());
    }
    List<CommitResult> results;
    try {
      results = store.commitAll(ops);
    } catch (RuntimeException e) {
      for (Pending p : batch) {
        call(p.callback(), null, e);
      }
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      call(batch.get(i).callback(), results.get(i), null);
    }
  }

  private static void call(Callback callback, CommitResult result, RuntimeException failure) {
    try {
      callback.done(result, failure);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "commit callback failed; ignored", e);
    }
  }
}
