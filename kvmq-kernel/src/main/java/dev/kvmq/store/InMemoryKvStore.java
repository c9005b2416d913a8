package dev.kvmq.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link KvStore} in the heap: fast, thread-safe, and gone when the JVM ends.
 *
 * <p>For tests, and for queues that need no durability. A sorted map under a read-write lock: reads
 * run in parallel and each sees one consistent state; commits are serialized, which also makes
 * versionstamps strictly increasing. Change notification is supported: listeners run on the
 * committing thread right after the commit.
 */
public final class InMemoryKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(InMemoryKvStore.class.getName());

  private final NavigableMap<byte[], Stored> map = new TreeMap<>(Arrays::compareUnsigned);
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final SubscriberRegistry subscribers = new SubscriberRegistry(LOG);
  private long versionstamp;
  private volatile boolean closed;

  /** Makes an empty store. */
  public InMemoryKvStore() {}

  // value: the committed mutation's own array, which nothing changes, shared with the entries read
  private record Stored(Key key, byte[] value, long versionstamp) {
    KvEntry entry() {
      return KvEntry.sharing(key, value, versionstamp);
    }
  }

  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    lock.readLock().lock();
    try {
      ensureOpen();
      Stored s = map.get(key.encodedInternal());
      return s == null ? Optional.empty() : Optional.of(s.entry());
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    Objects.requireNonNull(keys, "keys");
    List<Optional<KvEntry>> result = new ArrayList<>(keys.size());
    lock.readLock().lock();
    try {
      ensureOpen();
      for (Key key : keys) {
        Stored s = map.get(Objects.requireNonNull(key, "key").encodedInternal());
        result.add(s == null ? Optional.empty() : Optional.of(s.entry()));
      }
    } finally {
      lock.readLock().unlock();
    }
    return result;
  }

  @Override
  public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
    Objects.requireNonNull(range, "range");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    if (range.isEmpty()) {
      ensureOpen();
      return List.of();
    }
    List<KvEntry> result = new ArrayList<>(Math.min(limit, 64));
    lock.readLock().lock();
    try {
      ensureOpen();
      NavigableMap<byte[], Stored> sub =
          map.subMap(range.lowerBound(), true, range.upperBound(), false);
      for (Stored s : (reverse ? sub.descendingMap() : sub).values()) {
        if (result.size() >= limit) {
          break;
        }
        result.add(s.entry());
      }
    } finally {
      lock.readLock().unlock();
    }
    return result;
  }

  /** {@inheritDoc} Under one read lock, so at one consistent state. */
  @Override
  public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    Objects.requireNonNull(ranges, "ranges");
    ranges.forEach(r -> Objects.requireNonNull(r, "range"));
    List<Optional<KvEntry>> result = new ArrayList<>(ranges.size());
    lock.readLock().lock();
    try {
      ensureOpen();
      for (KeyRange range : ranges) {
        Map.Entry<byte[], Stored> first =
            range.isEmpty()
                ? null
                : map.subMap(range.lowerBound(), true, range.upperBound(), false).firstEntry();
        result.add(first == null ? Optional.empty() : Optional.of(first.getValue().entry()));
      }
    } finally {
      lock.readLock().unlock();
    }
    return result;
  }

  @Override
  public long count(KeyRange range) {
    Objects.requireNonNull(range, "range");
    lock.readLock().lock();
    try {
      ensureOpen();
      return range.isEmpty()
          ? 0
          : map.subMap(range.lowerBound(), true, range.upperBound(), false).size();
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public CommitResult commit(AtomicOperation operation) {
    return commitAll(List.of(Objects.requireNonNull(operation, "operation"))).get(0);
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    Objects.requireNonNull(operations, "operations");
    operations.forEach(op -> Objects.requireNonNull(op, "operation"));
    List<CommitResult> results = new ArrayList<>(operations.size());
    List<AtomicOperation> applied = new ArrayList<>(operations.size());
    lock.writeLock().lock();
    try {
      ensureOpen();
      for (AtomicOperation op : operations) {
        if (!checksHold(op)) {
          results.add(CommitResult.checkFailed());
          continue;
        }
        if (op.isReadOnly()) {
          results.add(CommitResult.committed(Math.max(1, versionstamp)));
          continue;
        }
        long vs = ++versionstamp;
        for (AtomicOperation.Mutation m : op.mutations()) {
          byte[] k = m.key().encodedInternal();
          if (m.isDelete()) {
            map.remove(k);
          } else {
            map.put(k, new Stored(m.key(), m.valueInternal(), vs));
          }
        }
        results.add(CommitResult.committed(vs));
        applied.add(op);
      }
    } finally {
      lock.writeLock().unlock();
    }
    subscribers.notifyCommitted(applied);
    return Collections.unmodifiableList(results);
  }

  @Override
  public boolean notifiesChanges() {
    return true;
  }

  @Override
  public Subscription subscribe(Key prefix, Runnable listener) {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(listener, "listener");
    ensureOpen();
    return subscribers.subscribe(prefix, listener);
  }

  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      closed = true;
      map.clear();
    } finally {
      lock.writeLock().unlock();
    }
    // outside the lock: it waits for listeners running on committing threads
    subscribers.close();
  }

  @Override
  public String toString() {
    return "InMemoryKvStore";
  }

  private boolean checksHold(AtomicOperation op) {
    for (AtomicOperation.Check c : op.checks()) {
      Stored s = map.get(c.key().encodedInternal());
      long current = s == null ? AtomicOperation.ABSENT : s.versionstamp();
      if (current != c.versionstamp()) {
        return false;
      }
    }
    return true;
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("the store is closed");
    }
  }
}
