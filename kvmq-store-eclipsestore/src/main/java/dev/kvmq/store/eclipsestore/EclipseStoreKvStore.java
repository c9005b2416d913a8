package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.store.SubscriberRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.eclipse.serializer.persistence.types.Storer;
import org.eclipse.store.storage.embedded.types.EmbeddedStorageManager;
import org.eclipse.store.storage.types.StorageDataFileEvaluator;

/**
 * The embedded durable {@link KvStore}: an ordered, versioned key-value map kept in an EclipseStore
 * storage directory that one JVM owns.
 *
 * <pre>{@code
 * try (EclipseStoreKvStore store = EclipseStoreKvStore.builder(Path.of("/var/lib/app/kvmq"))
 *     .open()) {
 *   store.commit(AtomicOperation.builder().set(Key.of("k"), bytes).build());
 * }
 * }</pre>
 *
 * <h2>Durability</h2>
 *
 * When {@link #commit} or {@link #commitAll} returns, the commit is on the storage device ({@link
 * Durability#FSYNC}, the default) or, in {@link Durability#PROCESS_CRASH_SAFE} mode, in the
 * operating system's hands (it survives a kill of the JVM, not a power loss). Reads never see a
 * commit before it is that durable.
 *
 * <h2>Group commit</h2>
 *
 * A committer thread owned by the store takes every commit waiting at a moment, applies them in
 * arrival order (each with its own checks and versionstamp), writes them with one EclipseStore
 * commit and one flush, and then releases all their callers. Many threads committing at once
 * therefore share flushes; {@link #commitAll} shares one flush by itself.
 *
 * <h2>Data structure</h2>
 *
 * Entries are packed into pages of about {@link Builder#pageBytes} bytes, each page one persisted
 * byte array; the key order lives in an index in the heap, rebuilt when the store opens. A commit
 * rewrites the pages whose entries it changed: at most about a page per key it changes, whatever
 * the size of the map, and opening loads two objects per page, not per key (see {@code
 * docs/embedded-store.md}).
 *
 * <h2>Housekeeping</h2>
 *
 * EclipseStore's background housekeeping runs in small timed slices. In addition, every {@link
 * Builder#compactEvery} bytes written, the committer thread runs a whole garbage collection and
 * file check in slices of {@link Builder#compactSlice} between group commits, so that commits wait
 * for one slice at most, never for a whole pass.
 *
 * <h2>Ownership</h2>
 *
 * Opening takes an OS lock on {@code kvmq.lock} in the directory: a second opener, in this JVM or
 * another, fails at once with a {@link KvStoreException}. {@link #close()} releases everything; a
 * JVM killed without closing leaves a directory the next start opens.
 *
 * <p>Thread-safe. Change notification is supported: listeners run on the committer thread. Inside,
 * one package-private class per concern: {@code GroupCommitter} (the committer thread and its
 * queue), {@code PageMap} (the heap index and the pages), {@code Housekeeping} (the sliced cycles),
 * {@code StorageSetup} (EclipseStore's configuration) and {@code DirectoryLock}. Locking: reads
 * take the read lock of one read-write lock; only the committer thread changes the map, under its
 * write lock; callers wait on their commit's future, never on a lock the committer holds; listeners
 * are called with no lock held.
 */
public final class EclipseStoreKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(EclipseStoreKvStore.class.getName());

  private final Path directory;
  private final Durability durability;
  private final DirectoryLock directoryLock;
  private final SyncingFileWriter writer;
  private final EmbeddedStorageManager storage;

  /** Guards {@link #map}: reads take the read lock, the committer the write lock. */
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  private final PageMap map;
  private final SubscriberRegistry subscribers = new SubscriberRegistry(LOG);
  private final Housekeeping housekeeping;
  private final GroupCommitter committer;

  private EclipseStoreKvStore(Builder b) {
    this.directory = b.directory.toAbsolutePath();
    this.durability = b.durability;
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new KvStoreException("cannot create the storage directory " + directory, e);
    }
    this.directoryLock = DirectoryLock.acquire(directory);
    try {
      StorageSetup.refuseOldLayout(directory);
      StorageSetup.clearNeverWritten(directory);
    } catch (RuntimeException e) {
      directoryLock.close();
      throw e;
    }
    EmbeddedStorageManager started = null;
    SyncingFileWriter w = new SyncingFileWriter(durability == Durability.FSYNC);
    StoreRoot root;
    PageMap m;
    Storer storer;
    try {
      long t0 = System.nanoTime();
      started =
          StorageSetup.start(
              directory,
              b.housekeepingInterval,
              b.housekeepingBudget,
              b.transactionsLogMaxBytes,
              w);
      root = StorageSetup.root(started, directory);
      long t2 = System.nanoTime();
      m = new PageMap(root, b.pageBytes, directory);
      long t3 = System.nanoTime();
      int keys = m.size();
      LOG.log(
          System.Logger.Level.INFO,
          () ->
              String.format(
                  Locale.ROOT,
                  "opened %s: %d keys in %d ms (EclipseStore start and graph load %d ms, index %d ms)",
                  directory,
                  keys,
                  (t3 - t0) / 1_000_000,
                  (t2 - t0) / 1_000_000,
                  (t3 - t2) / 1_000_000));
      storer = started.createLazyStorer();
    } catch (RuntimeException | Error e) {
      release(started, w, e);
      if (e instanceof KvStoreException || e instanceof Error) {
        throw e;
      }
      throw new KvStoreException("cannot open the EclipseStore storage in " + directory, e);
    }
    this.writer = w;
    this.storage = started;
    this.map = m;
    this.housekeeping =
        new Housekeeping(
            started, w, directory.toString(), b.compactEveryBytes, b.compactSlice.toNanos());
    this.committer =
        new GroupCommitter(
            toString(), directory, lock, m, root, storer, housekeeping, subscribers, b.maxBatch);
    try {
      committer.start(b.threadFactory);
    } catch (RuntimeException | Error e) {
      // nothing was committed: give the directory back
      release(started, w, e);
      throw e;
    }
  }

  /** Undoes a failed open: shuts EclipseStore down and releases the files and the lock. */
  private void release(EmbeddedStorageManager started, SyncingFileWriter w, Throwable e) {
    if (started != null) {
      try {
        started.shutdown();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
    }
    w.close();
    directoryLock.close();
  }

  /**
   * Starts configuring a store in {@code directory} (created if missing).
   *
   * @param directory the storage directory, owned by one JVM at a time
   * @return a builder with the defaults: {@link Durability#FSYNC}, housekeeping every second for up
   *     to 10 ms, a housekeeping cycle in 5 ms slices every 64 MiB written, 2 KiB pages
   * @throws NullPointerException if {@code directory} is null
   */
  public static Builder builder(Path directory) {
    return new Builder(Objects.requireNonNull(directory, "directory"));
  }

  /**
   * Opens a store in {@code directory} with the default options.
   *
   * @param directory the storage directory, created if missing
   * @return the open store
   * @throws NullPointerException if {@code directory} is null
   * @throws KvStoreException if the directory is in use or can't be opened
   */
  public static EclipseStoreKvStore open(Path directory) {
    return builder(directory).open();
  }

  // ---- reads

  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    lock.readLock().lock();
    try {
      ensureUsable();
      return Optional.ofNullable(PageMap.entryOf(map.find(key.encoded()), key));
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    Objects.requireNonNull(keys, "keys");
    List<byte[]> encoded = new ArrayList<>(keys.size());
    for (Key k : keys) {
      encoded.add(Objects.requireNonNull(k, "key").encoded());
    }
    List<Optional<KvEntry>> result = new ArrayList<>(keys.size());
    lock.readLock().lock();
    try {
      ensureUsable();
      for (int i = 0; i < keys.size(); i++) {
        result.add(Optional.ofNullable(PageMap.entryOf(map.find(encoded.get(i)), keys.get(i))));
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
    List<KvEntry> result = new ArrayList<>(Math.min(limit, 64));
    lock.readLock().lock();
    try {
      ensureUsable();
      if (range.isEmpty()) {
        return result;
      }
      NavigableSet<Entry> sub = map.range(range);
      for (Entry n : reverse ? sub.descendingSet() : sub) {
        if (result.size() >= limit) {
          break;
        }
        result.add(PageMap.entryOf(n, null));
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
      ensureUsable();
      for (KeyRange range : ranges) {
        NavigableSet<Entry> sub = range.isEmpty() ? null : map.range(range);
        result.add(
            sub == null || sub.isEmpty()
                ? Optional.empty()
                : Optional.of(PageMap.entryOf(sub.first(), null)));
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
      ensureUsable();
      return range.isEmpty() ? 0 : map.range(range).size();
    } finally {
      lock.readLock().unlock();
    }
  }

  private void ensureUsable() {
    committer.ensureUsable();
  }

  /**
   * Reads the index entries and their records under one read lock, so that the planner sees them at
   * one consistent state: a record whose index entry is listed has not been claimed since (a claim
   * deletes the index entry in the same commit). Concurrent claims then fail their checks instead
   * of taking an entry twice, and the operations are committed as {@link #commitAll} does.
   *
   * @throws NullPointerException if an argument is null, or the planner returns null or a null key
   *     or operation
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed, or called from a change listener
   * @throws KvStoreException if the store fails
   */
  @Override
  public List<CommitResult> claim(KeyRange range, int limit, ClaimPlanner planner) {
    Objects.requireNonNull(range, "range");
    Objects.requireNonNull(planner, "planner");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    List<KvEntry> index;
    List<Optional<KvEntry>> records;
    lock.readLock().lock();
    try {
      index = list(range, limit, false);
      records = index.isEmpty() ? List.of() : getMany(ClaimPlanner.recordKeys(planner, index));
    } finally {
      lock.readLock().unlock();
    }
    List<AtomicOperation> operations =
        Objects.requireNonNull(planner.plan(index, records), "planned operations");
    return operations.isEmpty() ? List.of() : commitAll(operations);
  }

  // ---- commits

  @Override
  public CommitResult commit(AtomicOperation operation) {
    Objects.requireNonNull(operation, "operation");
    return submit(List.of(operation)).get(0);
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    Objects.requireNonNull(operations, "operations");
    List<AtomicOperation> ops = List.copyOf(operations); // null elements throw here
    if (ops.isEmpty()) {
      ensureUsable();
      return List.of();
    }
    return submit(ops);
  }

  private List<CommitResult> submit(List<AtomicOperation> ops) {
    return committer.submit(ops);
  }

  /**
   * {@inheritDoc} True: one committer thread applies every commit, a group of them at a time, and
   * each group costs its storage's writes and forces (with {@link Durability#FSYNC}, two forces)
   * whatever its size.
   */
  @Override
  public boolean commitsOneAtATime() {
    return true;
  }

  // ---- notification

  @Override
  public boolean notifiesChanges() {
    return true;
  }

  @Override
  public Subscription subscribe(Key prefix, Runnable listener) {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(listener, "listener");
    ensureUsable();
    return subscribers.subscribe(prefix, listener);
  }

  // ---- housekeeping, monitoring, close

  /**
   * Runs EclipseStore's housekeeping to the end now instead of in timed slices: a full garbage
   * collection of unreachable objects, then a full file check that rewrites data files whose live
   * share is low and deletes emptied ones. Blocks until done. Housekeeping also runs in the
   * background by itself; call this to shrink the directory at a quiet moment, for example before a
   * backup.
   *
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the storage fails
   */
  public void compact() {
    ensureUsable();
    try {
      storage.issueFullGarbageCollection();
      storage.issueFullFileCheck();
    } catch (RuntimeException e) {
      throw new KvStoreException("housekeeping failed in " + this, e);
    }
  }

  /**
   * Returns how many bytes this store has written to its storage files since it opened: commits,
   * transactions log and housekeeping copies together. For monitoring and benchmarks.
   *
   * @return the byte count
   */
  public long bytesWritten() {
    return writer.bytesWritten();
  }

  /**
   * Returns how many flushes to the storage device ({@code fdatasync} of a file or a directory)
   * this store has made since it opened; always 0 in {@link Durability#PROCESS_CRASH_SAFE} mode.
   *
   * @return the flush count
   */
  public long deviceFlushes() {
    return writer.syncs();
  }

  /** Housekeeping cycles finished on the committer thread since open; for tests. */
  long housekeepingCycles() {
    return housekeeping.cycles();
  }

  /** Housekeeping slices run on the committer thread since open; for tests. */
  long housekeepingSlices() {
    return housekeeping.slices();
  }

  /** Number of pages holding entries; for tests. Takes the read lock. */
  int pageCount() {
    lock.readLock().lock();
    try {
      return map.pageCount();
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Returns the storage directory.
   *
   * @return the absolute path
   */
  public Path directory() {
    return directory;
  }

  /**
   * Returns the durability of acknowledged commits.
   *
   * @return the mode the store was opened with
   */
  public Durability durability() {
    return durability;
  }

  /**
   * Waits for the commits already submitted, stops the committer thread, shuts EclipseStore down
   * and releases the directory lock. A second call does nothing.
   *
   * @throws IllegalStateException if called from a change listener
   * @throws KvStoreException if shutting down or releasing the lock fails
   */
  @Override
  public void close() {
    if (!committer.stopAccepting()) {
      return;
    }
    boolean interrupted = committer.awaitEnd();
    subscribers.close(); // the committer, which calls them, has ended
    RuntimeException error = null;
    lock.writeLock().lock();
    try {
      storage.shutdown();
    } catch (RuntimeException e) {
      error = new KvStoreException("EclipseStore did not shut down cleanly in " + directory, e);
    } finally {
      lock.writeLock().unlock();
      writer.close();
      try {
        directoryLock.close();
      } catch (RuntimeException e) {
        if (error == null) {
          error = e;
        } else {
          error.addSuppressed(e);
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (error != null) {
      throw error;
    }
  }

  @Override
  public String toString() {
    return "EclipseStoreKvStore[" + directory + ", " + durability + "]";
  }

  /** Options of an {@link EclipseStoreKvStore}. Not thread-safe. */
  public static final class Builder {
    private static final Duration MAX_HOUSEKEEPING_INTERVAL = Duration.ofSeconds(10);
    private final Path directory;
    private Durability durability = Durability.FSYNC;
    private Duration housekeepingInterval = Duration.ofSeconds(1);
    // EclipseStore's own default. A commit waits while a run holds the storage: with 50 ms,
    // the pickup benchmark's worst waits were 48-56 ms (docs/performance.md); the cycles run
    // every compactEvery bytes do the heavy work, in 5 ms slices.
    private Duration housekeepingBudget = Duration.ofMillis(10);
    private int transactionsLogMaxBytes =
        StorageDataFileEvaluator.Validation.maximumTransactionLogFileSize();
    private int maxBatch = 4096;
    private long compactEveryBytes = 64L << 20;
    private Duration compactSlice = Duration.ofMillis(5);
    private int pageBytes = 2048;
    private ThreadFactory threadFactory;

    private Builder(Path directory) {
      this.directory = directory;
    }

    /**
     * Sets what an acknowledged commit survives.
     *
     * @param durability {@link Durability#FSYNC} (the default) or {@link
     *     Durability#PROCESS_CRASH_SAFE}
     * @return this builder
     * @throws NullPointerException if {@code durability} is null
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /**
     * Sets how often background housekeeping runs and how long each run may take. Housekeeping
     * removes unreachable objects and rewrites data files that are mostly garbage, so that the
     * directory does not grow under a steady flow of writes.
     *
     * @param interval the time between runs, from 1 ms to 10 s (default 1 s); EclipseStore's
     *     storage thread ends up to one interval after {@link EclipseStoreKvStore#close()}
     * @param budget the time one run may take, 0 or more (default 10 ms); commits wait while a run
     *     holds the storage, so this bounds the stall it adds
     * @return this builder
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code interval} is under 1 ms or over 10 s, or {@code
     *     budget} is negative
     */
    public Builder housekeeping(Duration interval, Duration budget) {
      Objects.requireNonNull(interval, "interval");
      Objects.requireNonNull(budget, "budget");
      if (interval.toMillis() < 1 || interval.compareTo(MAX_HOUSEKEEPING_INTERVAL) > 0) {
        throw new IllegalArgumentException(
            "housekeeping interval must be from 1 ms to "
                + MAX_HOUSEKEEPING_INTERVAL
                + " (EclipseStore's thread ends up to one interval after close): "
                + interval);
      }
      if (budget.isNegative()) {
        throw new IllegalArgumentException("housekeeping budget must not be negative: " + budget);
      }
      this.housekeepingInterval = interval;
      this.housekeepingBudget = budget;
      return this;
    }

    /**
     * Sets the size at which EclipseStore compacts its transactions log. It does so in place, and a
     * crash during that compaction can damage the log, so the default is the largest size
     * EclipseStore allows (1 GiB, about 30 million group commits).
     *
     * @param bytes the size, from 1 KiB to 1 GiB
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is out of that range
     */
    public Builder transactionsLogMaxBytes(int bytes) {
      int min = StorageDataFileEvaluator.Validation.minimumTransactionLogFileSize();
      int max = StorageDataFileEvaluator.Validation.maximumTransactionLogFileSize();
      if (bytes < min || bytes > max) {
        throw new IllegalArgumentException(
            "transactions log size must be from " + min + " to " + max + " bytes: " + bytes);
      }
      this.transactionsLogMaxBytes = bytes;
      return this;
    }

    /**
     * Sets the most operations one group commit takes from the waiting commits (a single {@code
     * commitAll} larger than this is still committed whole).
     *
     * @param operations at least 1 (default 4096)
     * @return this builder
     * @throws IllegalArgumentException if {@code operations < 1}
     */
    public Builder maxBatch(int operations) {
      if (operations < 1) {
        throw new IllegalArgumentException("maxBatch must be at least 1: " + operations);
      }
      this.maxBatch = operations;
      return this;
    }

    /**
     * Sets how many bytes the store writes between the starts of two housekeeping cycles (a whole
     * garbage collection, then a whole file check) that the committer thread runs in slices of
     * {@link #compactSlice} between group commits. Background housekeeping runs as well, but falls
     * behind under a steady stream of commits; these cycles bound the directory's growth.
     *
     * @param bytes at least 1 MiB (default 64 MiB), or 0 to leave housekeeping to the background
     *     and to {@link EclipseStoreKvStore#compact()}
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is negative or between 0 and 1 MiB
     */
    public Builder compactEvery(long bytes) {
      if (bytes < 0 || (bytes > 0 && bytes < (1L << 20))) {
        throw new IllegalArgumentException("compactEvery must be 0 or at least 1 MiB: " + bytes);
      }
      this.compactEveryBytes = bytes;
      return this;
    }

    /**
     * Sets how long one slice of a {@link #compactEvery} housekeeping cycle may run on the
     * committer thread. Commits that arrive meanwhile wait for the slice to end, so this is about
     * the longest pause housekeeping adds to a commit (EclipseStore ends a slice at the next unit
     * of work after the budget, so a slice can overrun it a little).
     *
     * @param budget from 1 ms to 1 s (default 5 ms)
     * @return this builder
     * @throws NullPointerException if {@code budget} is null
     * @throws IllegalArgumentException if {@code budget} is out of that range
     */
    public Builder compactSlice(Duration budget) {
      Objects.requireNonNull(budget, "budget");
      if (budget.toMillis() < 1 || budget.compareTo(Duration.ofSeconds(1)) > 0) {
        throw new IllegalArgumentException("compactSlice must be from 1 ms to 1 s: " + budget);
      }
      this.compactSlice = budget;
      return this;
    }

    /**
     * Sets the packed size pages are filled up to. A commit rewrites each page it changes, so this
     * bounds the bytes written per changed key (plus the key's own size); opening a store loads two
     * objects per page, so larger pages open faster. An entry larger than half a page gets a page
     * of its own. Pages of any size are readable whatever this is set to: it can change between
     * opens.
     *
     * @param bytes from 256 to 1 MiB (default 2 KiB)
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is out of that range
     */
    public Builder pageBytes(int bytes) {
      if (bytes < 256 || bytes > (1 << 20)) {
        throw new IllegalArgumentException("pageBytes must be from 256 to 1048576: " + bytes);
      }
      this.pageBytes = bytes;
      return this;
    }

    /**
     * Makes the store's committer thread (which also calls the change listeners), for containers
     * that want their own (managed) threads: in a Jakarta EE server, pass the container's {@code
     * ManagedThreadFactory}. The store asks it for one thread when it opens and uses the thread as
     * it comes (name, daemon status and priority are the factory's). EclipseStore's own storage
     * threads are not made by it.
     *
     * @param threadFactory the factory, or null for a daemon thread named {@code
     *     kvmq-eclipsestore-committer <directory name>} (the default)
     * @return this builder
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /**
     * Opens the store: locks the directory, starts EclipseStore, loads the keys, builds the index
     * and starts the committer thread. If it fails, the directory is released again.
     *
     * @return the open store
     * @throws KvStoreException if the directory is in use by this or another JVM, is not a kvmq
     *     store, or can't be read
     * @throws IllegalStateException if the {@linkplain #threadFactory thread factory} makes no
     *     thread (returns null); what the factory throws is thrown as it is
     */
    public EclipseStoreKvStore open() {
      return new EclipseStoreKvStore(this);
    }
  }
}
