package dev.kvmq.testing;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A store wrapper for tests: counts what callers read and commit, and fails commits on demand,
 * either before they apply (the commit is lost) or after (applied, but the caller sees an error:
 * the ambiguous outcome of a crash or a lost connection).
 */
public final class FaultyStore extends ForwardingKvStore {

  /** When an injected failure strikes. */
  public enum Mode {
    BEFORE_APPLY,
    AFTER_APPLY
  }

  /** Entries returned by list and firstEntries calls. */
  public final AtomicLong listedEntries = new AtomicLong();

  /** list and firstEntries calls. */
  public final AtomicLong listCalls = new AtomicLong();

  /** Atomic operations committed (applied or refused), counting each one of a commitAll. */
  public final AtomicLong operations = new AtomicLong();

  /** commit and commitAll calls. */
  public final AtomicLong commitCalls = new AtomicLong();

  private volatile Predicate<AtomicOperation> failWhen = op -> false;
  private volatile Mode mode = Mode.BEFORE_APPLY;
  private volatile boolean failReads;

  /** Makes get and getMany throw (true) or work (false). */
  public void failReads(boolean fail) {
    this.failReads = fail;
  }

  public FaultyStore(KvStore delegate) {
    super(delegate);
  }

  /** Fails every operation matching {@code when} (null: none) in the given mode. */
  public void failCommits(Predicate<AtomicOperation> when, Mode mode) {
    this.mode = mode;
    this.failWhen = when == null ? op -> false : when;
  }

  /** True if any mutation of {@code op} writes a key containing {@code part}. */
  public static Predicate<AtomicOperation> writesPart(String part) {
    return op -> op.mutations().stream().anyMatch(m -> m.key().parts().contains(part));
  }

  @Override
  public Optional<KvEntry> get(Key key) {
    if (failReads) {
      throw new KvStoreException("injected read failure");
    }
    return delegate.get(key);
  }

  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    if (failReads) {
      throw new KvStoreException("injected read failure");
    }
    return delegate.getMany(keys);
  }

  @Override
  public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
    List<KvEntry> result = delegate.list(range, limit, reverse);
    listCalls.incrementAndGet();
    listedEntries.addAndGet(result.size());
    return result;
  }

  @Override
  public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    List<Optional<KvEntry>> result = delegate.firstEntries(ranges);
    listCalls.incrementAndGet();
    listedEntries.addAndGet(result.stream().filter(Optional::isPresent).count());
    return result;
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> ops) {
    commitCalls.incrementAndGet();
    operations.addAndGet(ops.size());
    Predicate<AtomicOperation> when = failWhen;
    boolean strike = ops.stream().anyMatch(when);
    if (strike && mode == Mode.BEFORE_APPLY) {
      throw new KvStoreException("injected failure before apply");
    }
    List<CommitResult> results = new ArrayList<>(delegate.commitAll(ops));
    if (strike) {
      throw new KvStoreException("injected failure after apply");
    }
    return results;
  }
}
