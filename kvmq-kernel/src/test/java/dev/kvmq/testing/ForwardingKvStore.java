package dev.kvmq.testing;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * A store that passes every call to another, for test wrappers that change a few of them. {@link
 * #claim} is not passed on: it keeps {@link KvStore}'s default, which goes through this store's
 * {@link #list}, {@link #getMany} and {@link #commitAll}, so a wrapper that changes those sees
 * claims too (and a store's own claim path is left out). Override it to pass it on. {@link #commit}
 * goes through {@link #commitAll}.
 */
public abstract class ForwardingKvStore implements KvStore {

  /** The store calls go to. */
  protected final KvStore delegate;

  protected ForwardingKvStore(KvStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * A planner that plans as {@code planner} does, then passes the operations through {@code then}
   * (to add to them, or to look at them); its record keys and their rule are {@code planner}'s.
   *
   * @param planner the planner to wrap
   * @param then what to do with the planned operations; returns the operations to commit
   * @return the wrapping planner
   */
  protected static ClaimPlanner planningThen(
      ClaimPlanner planner, UnaryOperator<List<AtomicOperation>> then) {
    return new ClaimPlanner() {
      @Override
      public Key recordKey(Key indexKey) {
        return planner.recordKey(indexKey);
      }

      @Override
      public Optional<RecordKeyRule> recordKeyRule() {
        return planner.recordKeyRule();
      }

      @Override
      public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
        return then.apply(planner.plan(index, records));
      }
    };
  }

  @Override
  public Optional<KvEntry> get(Key key) {
    return delegate.get(key);
  }

  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    return delegate.getMany(keys);
  }

  @Override
  public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
    return delegate.list(range, limit, reverse);
  }

  @Override
  public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    return delegate.firstEntries(ranges);
  }

  @Override
  public long count(KeyRange range) {
    return delegate.count(range);
  }

  @Override
  public CommitResult commit(AtomicOperation operation) {
    return commitAll(List.of(operation)).get(0);
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    return delegate.commitAll(operations);
  }

  @Override
  public boolean notifiesChanges() {
    return delegate.notifiesChanges();
  }

  @Override
  public boolean joinsCallersTransaction() {
    return delegate.joinsCallersTransaction();
  }

  @Override
  public boolean commitsOneAtATime() {
    return delegate.commitsOneAtATime();
  }

  @Override
  public Subscription subscribe(Key prefix, Runnable listener) {
    return delegate.subscribe(prefix, listener);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
