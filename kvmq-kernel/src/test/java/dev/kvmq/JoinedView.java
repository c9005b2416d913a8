package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import java.util.ArrayList;
import java.util.List;

/**
 * A view of a store that says its commits join a transaction its caller holds ({@link
 * KvStore#joinsCallersTransaction()}), as PostgreSQL's {@code inTransaction(connection)} does, so
 * that a queue on it pushes as it would in an application's transaction. Its commits still end at
 * once; what it checks is the shape of what a queue commits through it: no key of a group's record
 * or of a group's wake-up, which every commit of the group's jobs would wait for while the caller's
 * transaction is open ({@link #problems()}).
 */
final class JoinedView extends ForwardingKvStore {

  private final List<KeyRange> shared;
  private final List<String> problems = new ArrayList<>();

  JoinedView(KvStore store, QueueKeys keys) {
    super(store);
    this.shared = List.of(keys.groups(), KeyRange.prefix(keys.root.append("group", "waking")));
  }

  @Override
  public boolean joinsCallersTransaction() {
    return true;
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    for (AtomicOperation op : operations) {
      for (AtomicOperation.Check c : op.checks()) {
        look("checked", c.key());
      }
      for (AtomicOperation.Mutation m : op.mutations()) {
        look("wrote", m.key());
      }
    }
    return delegate.commitAll(operations);
  }

  private void look(String what, Key key) {
    for (KeyRange range : shared) {
      if (range.contains(key)) {
        problems.add("a commit in the caller's transaction " + what + " the group key " + key);
      }
    }
  }

  /** What the view saw committed that other jobs' commits would wait for; empty if nothing. */
  List<String> problems() {
    return problems;
  }
}
