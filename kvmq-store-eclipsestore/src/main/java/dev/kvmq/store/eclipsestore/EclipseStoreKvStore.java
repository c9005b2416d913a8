package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.eclipse.serializer.persistence.types.Storer;
import org.eclipse.store.afs.nio.types.NioFileSystem;
import org.eclipse.store.storage.embedded.types.EmbeddedStorage;
import org.eclipse.store.storage.embedded.types.EmbeddedStorageFoundation;
import org.eclipse.store.storage.embedded.types.EmbeddedStorageManager;
import org.eclipse.store.storage.types.Storage;
import org.eclipse.store.storage.types.StorageConfiguration;
import org.eclipse.store.storage.types.StorageDataFileEvaluator;
import org.eclipse.store.storage.types.StorageHousekeepingController;
import org.eclipse.store.storage.types.StorageLockFileManager;

/**
 * The embedded durable {@link KvStore}: an ordered, versioned key-value map kept in an
 * EclipseStore storage directory that one JVM owns.
 *
 * <pre>{@code
 * try (EclipseStoreKvStore store = EclipseStoreKvStore.builder(Path.of("/var/lib/app/kvmq"))
 *     .open()) {
 *   store.commit(AtomicOperation.builder().set(Key.of("k"), bytes).build());
 * }
 * }</pre>
 *
 * <h2>Durability</h2>
 * When {@link #commit} or {@link #commitAll} returns, the commit is on the storage device
 * ({@link Durability#FSYNC}, the default) or, in {@link Durability#PROCESS_CRASH_SAFE} mode,
 * in the operating system's hands (it survives a kill of the JVM, not a power loss). Reads
 * never see a commit before it is that durable.
 *
 * <h2>Group commit</h2>
 * A committer thread owned by the store takes every commit waiting at a moment, applies
 * them in arrival order (each with its own checks and versionstamp), writes them with one
 * EclipseStore commit and one flush, and then releases all their callers. Many threads
 * committing at once therefore share flushes; {@link #commitAll} shares one flush by itself.
 *
 * <h2>Data structure</h2>
 * Each key is one small persisted object; the key order lives in an index in the heap,
 * rebuilt when the store opens. A commit writes a few hundred bytes per key it changes,
 * whatever the size of the map (see {@code docs/embedded-store.md}).
 *
 * <h2>Ownership</h2>
 * Opening takes an OS lock on {@code kvmq.lock} in the directory: a second opener, in this
 * JVM or another, fails at once with a {@link KvStoreException}. {@link #close()} releases
 * everything; a JVM killed without closing leaves a directory the next start opens.
 *
 * <p>Thread-safe. Change notification is supported: listeners run on the committer thread.
 */
public final class EclipseStoreKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(EclipseStoreKvStore.class.getName());

  private final Path directory;
  private final Durability durability;
  private final DirectoryLock directoryLock;
  private final SyncingFileWriter writer;
  private final EmbeddedStorageManager storage;
  private final StoreRoot root;
  private final Storer storer;

  /** Key order; guarded by {@link #lock}. Changed by the committer thread only. */
  private final NavigableSet<Node> index = new TreeSet<>(Node::compareKeys);
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  /** The ring the next new key goes to; used by the committer thread only. */
  private int nextRing;
  private final List<Sub> subscribers = new CopyOnWriteArrayList<>();

  /** Commits waiting for the committer; guarded by itself, as are {@link #closed}. */
  private final ArrayDeque<Request> queue = new ArrayDeque<>();
  private final Thread committer;
  private final int maxBatch;
  private final long compactEveryBytes;
  /** {@link SyncingFileWriter#bytesWritten()} after the last compaction; committer thread only. */
  private long compactedAt;
  private volatile boolean closed;
  private boolean closeDone;
  /** Set when a write failed after the heap was changed: the heap no longer matches the disk. */
  private volatile Throwable failure;

  private EclipseStoreKvStore(Builder b) {
    this.directory = b.directory.toAbsolutePath();
    this.durability = b.durability;
    this.maxBatch = b.maxBatch;
    this.compactEveryBytes = b.compactEveryBytes;
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new KvStoreException("cannot create the storage directory " + directory, e);
    }
    this.directoryLock = DirectoryLock.acquire(directory);
    EmbeddedStorageManager started = null;
    SyncingFileWriter w = new SyncingFileWriter(durability == Durability.FSYNC);
    try {
      long t0 = System.nanoTime();
      started = startStorage(b, w);
      Object existing = started.root(); // loaded by start(): the whole graph
      long t2 = System.nanoTime();
      StoreRoot r;
      if (existing == null) {
        r = StoreRoot.empty();
        started.setRoot(r);
        started.storeRoot();
      } else if (existing instanceof StoreRoot sr) {
        if (sr.format != StoreRoot.CURRENT_FORMAT) {
          throw new KvStoreException("storage directory " + directory + " has format " + sr.format
              + "; this version of kvmq reads format " + StoreRoot.CURRENT_FORMAT);
        }
        r = sr;
      } else {
        throw new KvStoreException("storage directory " + directory
            + " holds an EclipseStore storage that is not a kvmq store (root is a "
            + existing.getClass().getName() + ")");
      }
      this.root = r;
      rebuildIndex();
      long t3 = System.nanoTime();
      LOG.log(System.Logger.Level.INFO, () -> String.format(Locale.ROOT,
          "opened %s: %d keys in %d ms (EclipseStore start and graph load %d ms, index %d ms)",
          directory, index.size(), (t3 - t0) / 1_000_000, (t2 - t0) / 1_000_000, (t3 - t2) / 1_000_000));
      this.storer = started.createLazyStorer();
    } catch (RuntimeException | Error e) {
      if (started != null) {
        try {
          started.shutdown();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      w.close();
      directoryLock.close();
      if (e instanceof KvStoreException || e instanceof Error) {
        throw e;
      }
      throw new KvStoreException("cannot open the EclipseStore storage in " + directory, e);
    }
    this.writer = w;
    this.storage = started;
    this.committer = new Thread(this::runCommitter, "kvmq-eclipsestore-committer " + directory.getFileName());
    this.committer.setDaemon(true);
    this.committer.start();
  }

  /**
   * Starts configuring a store in {@code directory} (created if missing).
   *
   * @param directory the storage directory, owned by one JVM at a time
   * @return a builder with the defaults: {@link Durability#FSYNC}, housekeeping every second
   *     for up to 50 ms
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

  private static EmbeddedStorageManager startStorage(Builder b, SyncingFileWriter writer) {
    NioFileSystem fs = NioFileSystem.New();
    StorageConfiguration config = Storage.ConfigurationBuilder()
        .setStorageFileProvider(Storage.FileProviderBuilder(fs)
            .setDirectory(fs.ensureDirectory(b.directory.toAbsolutePath()))
            .createFileProvider())
        // One channel: more channels mean more files to flush per commit.
        .setChannelCountProvider(Storage.ChannelCountProvider(1))
        .setHousekeepingController(StorageHousekeepingController.New(
            b.housekeepingInterval.toMillis(), b.housekeepingBudget.toNanos()))
        // Default file sizes and use ratio; the transactions log is compacted only at its
        // largest allowed size, because EclipseStore compacts it in place (truncate, then
        // rewrite), which a crash at that moment would damage.
        .setDataFileEvaluator(StorageDataFileEvaluator.New(
            StorageDataFileEvaluator.Defaults.defaultFileMinimumSize(),
            StorageDataFileEvaluator.Defaults.defaultFileMaximumSize(),
            0.75, true, b.transactionsLogMaxBytes))
        .createConfiguration();
    EmbeddedStorageFoundation<?> foundation = EmbeddedStorage.Foundation(config);
    foundation.setWriterProvider(() -> writer);
    // kvmq.lock (an OS lock) guards the directory. EclipseStore's own lock file would make
    // a restart after a kill wait for the old lock to expire, and rewrites itself constantly.
    foundation.setLockFileManagerCreator((setup, controller, threads) -> new NoLockFileManager());
    EmbeddedStorageManager manager = foundation.createEmbeddedStorageManager();
    manager.start();
    return manager;
  }

  private void rebuildIndex() {
    if (root.rings == null || root.rings.length != StoreRoot.RINGS) {
      throw new KvStoreException("storage directory " + directory + " is damaged: the rings of keys are missing");
    }
    for (Node s : root.rings) {
      for (Node n = s.next; n != s; n = n.next) {
        if (n == null || n.next == null || n.next.prev != n) {
          throw new KvStoreException("storage directory " + directory + " is damaged: broken link in a key ring");
        }
        if (!index.add(n)) {
          throw new KvStoreException("storage directory " + directory + " is damaged: a key is stored twice");
        }
      }
    }
  }

  // ---- reads

  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    Node probe = Node.probe(key.encoded());
    lock.readLock().lock();
    try {
      ensureUsable();
      return Optional.ofNullable(entryOf(find(probe), key));
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    Objects.requireNonNull(keys, "keys");
    List<Node> probes = new ArrayList<>(keys.size());
    for (Key k : keys) {
      probes.add(Node.probe(Objects.requireNonNull(k, "key").encoded()));
    }
    List<Optional<KvEntry>> result = new ArrayList<>(keys.size());
    lock.readLock().lock();
    try {
      ensureUsable();
      for (int i = 0; i < keys.size(); i++) {
        result.add(Optional.ofNullable(entryOf(find(probes.get(i)), keys.get(i))));
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
      NavigableSet<Node> sub = subSet(range);
      for (Node n : reverse ? sub.descendingSet() : sub) {
        if (result.size() >= limit) {
          break;
        }
        result.add(entryOf(n, null));
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
      return range.isEmpty() ? 0 : subSet(range).size();
    } finally {
      lock.readLock().unlock();
    }
  }

  private NavigableSet<Node> subSet(KeyRange range) {
    return index.subSet(Node.probe(range.lowerBound()), true, Node.probe(range.upperBound()), false);
  }

  private Node find(Node probe) {
    Node n = index.ceiling(probe);
    return n != null && Node.compareKeys(n, probe) == 0 ? n : null;
  }

  private static KvEntry entryOf(Node n, Key knownKey) {
    if (n == null) {
      return null;
    }
    Key key = knownKey != null ? knownKey : Key.decode(n.key());
    return new KvEntry(key, n.value(), n.versionstamp);
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
    refuseOnCommitterThread("commit");
    Request request = new Request(ops);
    synchronized (queue) {
      ensureUsable();
      queue.add(request);
      queue.notifyAll();
    }
    try {
      return request.done.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof KvStoreException k) {
        throw new KvStoreException(k.getMessage(), k);
      }
      if (cause instanceof IllegalStateException ise) {
        throw new IllegalStateException(ise.getMessage(), ise);
      }
      throw new KvStoreException("commit failed in " + this, cause);
    }
  }

  private void runCommitter() {
    List<Request> batch = new ArrayList<>();
    while (true) {
      synchronized (queue) {
        while (queue.isEmpty() && !closed) {
          try {
            queue.wait();
          } catch (InterruptedException e) {
            // only close() stops this thread, after the queue is empty
          }
        }
        if (queue.isEmpty()) {
          return;
        }
        int ops = 0;
        while (!queue.isEmpty() && (ops == 0 || ops + queue.peek().ops.size() <= maxBatch)) {
          Request r = queue.poll();
          ops += r.ops.size();
          batch.add(r);
        }
      }
      try {
        commitBatch(batch);
        maybeCompact();
      } catch (Throwable t) {
        // commitBatch completes its requests; this is a last guard against a hang
        for (Request r : batch) {
          r.done.completeExceptionally(t);
        }
      }
      batch.clear();
    }
  }

  private void commitBatch(List<Request> batch) {
    List<AtomicOperation> applied = new ArrayList<>();
    List<List<CommitResult>> results = new ArrayList<>(batch.size());
    Throwable error = null;
    lock.writeLock().lock();
    try {
      if (failure != null) {
        error = brokenException();
      } else {
        Set<Object> dirty = Collections.newSetFromMap(new IdentityHashMap<>());
        long vs = root.versionstamp;
        for (Request r : batch) {
          List<CommitResult> rs = new ArrayList<>(r.ops.size());
          for (AtomicOperation op : r.ops) {
            if (!checksHold(op)) {
              rs.add(CommitResult.checkFailed());
            } else if (op.isReadOnly()) {
              rs.add(CommitResult.committed(Math.max(1, vs)));
            } else {
              vs++;
              apply(op, vs, dirty);
              applied.add(op);
              rs.add(CommitResult.committed(vs));
            }
          }
          results.add(Collections.unmodifiableList(rs));
        }
        if (!dirty.isEmpty() || vs != root.versionstamp) {
          root.versionstamp = vs;
          try {
            for (Object o : dirty) {
              storer.store(o);
            }
            storer.store(root);
            storer.commit();
          } catch (RuntimeException | Error e) {
            // The heap is ahead of the disk now; refuse everything until reopened.
            failure = e;
            try {
              storer.clear();
            } catch (RuntimeException ignored) {
              // the store is broken either way
            }
            error = brokenException();
          }
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
    for (int i = 0; i < batch.size(); i++) {
      if (error != null) {
        batch.get(i).done.completeExceptionally(error);
      } else {
        batch.get(i).done.complete(results.get(i));
      }
    }
    if (error == null) {
      notifySubscribers(applied);
    }
  }

  private boolean checksHold(AtomicOperation op) {
    for (AtomicOperation.Check c : op.checks()) {
      Node n = find(Node.probe(c.key().encoded()));
      long current = n == null ? AtomicOperation.ABSENT : n.versionstamp;
      if (current != c.versionstamp()) {
        return false;
      }
    }
    return true;
  }

  private void apply(AtomicOperation op, long vs, Set<Object> dirty) {
    for (AtomicOperation.Mutation m : op.mutations()) {
      byte[] key = m.key().encoded();
      Node existing = find(Node.probe(key));
      if (m.isDelete()) {
        if (existing != null) {
          index.remove(existing);
          unlink(existing, dirty);
        }
      } else if (existing != null) {
        existing.data = Node.pack(key, m.value());
        existing.versionstamp = vs;
        dirty.add(existing);
      } else {
        Node n = new Node(Node.pack(key, m.value()), vs);
        link(n, dirty);
        index.add(n);
      }
    }
  }

  /** Inserts {@code n} right after the sentinel of the next ring in turn. */
  private void link(Node n, Set<Object> dirty) {
    Node s = root.rings[nextRing++ & (StoreRoot.RINGS - 1)];
    Node first = s.next;
    n.prev = s;
    n.next = first;
    first.prev = n;
    s.next = n;
    dirty.add(n);
    dirty.add(first);
    dirty.add(s);
  }

  private void unlink(Node n, Set<Object> dirty) {
    Node p = n.prev;
    Node x = n.next;
    p.next = x;
    x.prev = p;
    dirty.remove(n); // nothing references it any more: not worth writing
    dirty.add(p);
    dirty.add(x);
  }

  /**
   * Runs a full housekeeping pass on the committer thread (commits wait meanwhile) once
   * {@link Builder#compactEvery} bytes were written since the last one. EclipseStore's
   * background housekeeping alone falls behind under a steady stream of commits (measured:
   * the directory grew by ~650 bytes per pushed and completed job at 18k jobs/s).
   */
  private void maybeCompact() {
    if (compactEveryBytes <= 0 || failure != null || writer.bytesWritten() - compactedAt < compactEveryBytes) {
      return;
    }
    long t0 = System.nanoTime();
    try {
      storage.issueFullGarbageCollection();
      storage.issueFullFileCheck();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "housekeeping of " + directory + " failed; commits go on", e);
    }
    compactedAt = writer.bytesWritten();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    LOG.log(System.Logger.Level.DEBUG, () -> "compacted " + directory + " in " + ms + " ms");
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
    Sub sub = new Sub(prefix.encoded(), listener);
    subscribers.add(sub);
    return () -> subscribers.remove(sub);
  }

  private void notifySubscribers(List<AtomicOperation> applied) {
    if (applied.isEmpty() || subscribers.isEmpty()) {
      return;
    }
    for (Sub sub : subscribers) {
      if (touches(applied, sub.prefix)) {
        try {
          sub.listener.run();
        } catch (RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "change listener failed; ignored", e);
        }
      }
    }
  }

  private static boolean touches(List<AtomicOperation> applied, byte[] prefix) {
    for (AtomicOperation op : applied) {
      for (AtomicOperation.Mutation m : op.mutations()) {
        if (m.key().encodedLength() >= prefix.length) {
          byte[] k = m.key().encoded();
          if (Arrays.equals(k, 0, prefix.length, prefix, 0, prefix.length)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  // ---- housekeeping, monitoring, close

  /**
   * Runs EclipseStore's housekeeping to the end now instead of in timed slices: a full
   * garbage collection of unreachable objects, then a full file check that rewrites data
   * files whose live share is low and deletes emptied ones. Blocks until done. Housekeeping
   * also runs in the background by itself; call this to shrink the directory at a quiet
   * moment, for example before a backup.
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
   * Returns how many bytes this store has written to its storage files since it opened:
   * commits, transactions log and housekeeping copies together. For monitoring and
   * benchmarks.
   *
   * @return the byte count
   */
  public long bytesWritten() {
    return writer.bytesWritten();
  }

  /**
   * Returns how many flushes to the storage device ({@code fdatasync} of a file or a
   * directory) this store has made since it opened; always 0 in
   * {@link Durability#PROCESS_CRASH_SAFE} mode.
   *
   * @return the flush count
   */
  public long deviceFlushes() {
    return writer.syncs();
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
   * Waits for the commits already submitted, stops the committer thread, shuts EclipseStore
   * down and releases the directory lock. A second call does nothing.
   *
   * @throws IllegalStateException if called from a change listener
   * @throws KvStoreException if shutting down or releasing the lock fails
   */
  @Override
  public void close() {
    refuseOnCommitterThread("close");
    synchronized (queue) {
      if (closeDone) {
        return;
      }
      closeDone = true;
      closed = true;
      queue.notifyAll();
    }
    boolean interrupted = false;
    while (committer.isAlive()) {
      try {
        committer.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    subscribers.clear();
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

  /** A change listener that commits or closes would wait for itself: refuse instead. */
  private void refuseOnCommitterThread(String what) {
    if (Thread.currentThread() == committer) {
      throw new IllegalStateException("a change listener must not " + what
          + " the store: it runs on the store's committer thread; schedule the work elsewhere");
    }
  }

  private void ensureUsable() {
    if (closed) {
      throw new IllegalStateException("the store is closed: " + directory);
    }
    if (failure != null) {
      throw brokenException();
    }
  }

  private KvStoreException brokenException() {
    return new KvStoreException("a write to " + directory
        + " failed; the store refuses further calls: close it and open it again", failure);
  }

  private static final class Request {
    final List<AtomicOperation> ops;
    final CompletableFuture<List<CommitResult>> done = new CompletableFuture<>();

    Request(List<AtomicOperation> ops) {
      this.ops = ops;
    }
  }

  private static final class Sub {
    final byte[] prefix;
    final Runnable listener;

    Sub(byte[] prefix, Runnable listener) {
      this.prefix = prefix;
      this.listener = listener;
    }
  }

  /** EclipseStore's lock file manager, disabled: {@link DirectoryLock} guards the directory. */
  private static final class NoLockFileManager implements StorageLockFileManager {
    private boolean initialized;

    @Override
    public StorageLockFileManager start() {
      return this;
    }

    @Override
    public StorageLockFileManager stop() {
      return this;
    }

    @Override
    public void initialize() {
      initialized = true;
    }

    @Override
    public boolean isInitialized() {
      return initialized;
    }

    @Override
    public void run() {
      // nothing to refresh
    }
  }

  /**
   * Options of an {@link EclipseStoreKvStore}. Not thread-safe.
   */
  public static final class Builder {
    private static final Duration MAX_HOUSEKEEPING_INTERVAL = Duration.ofSeconds(10);
    private final Path directory;
    private Durability durability = Durability.FSYNC;
    private Duration housekeepingInterval = Duration.ofSeconds(1);
    private Duration housekeepingBudget = Duration.ofMillis(50);
    private int transactionsLogMaxBytes =
        StorageDataFileEvaluator.Validation.maximumTransactionLogFileSize();
    private int maxBatch = 4096;
    private long compactEveryBytes = 64L << 20;

    private Builder(Path directory) {
      this.directory = directory;
    }

    /**
     * Sets what an acknowledged commit survives.
     *
     * @param durability {@link Durability#FSYNC} (the default) or
     *     {@link Durability#PROCESS_CRASH_SAFE}
     * @return this builder
     * @throws NullPointerException if {@code durability} is null
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /**
     * Sets how often background housekeeping runs and how long each run may take.
     * Housekeeping removes unreachable objects and rewrites data files that are mostly
     * garbage, so that the directory does not grow under a steady flow of writes.
     *
     * @param interval the time between runs, from 1 ms to 10 s (default 1 s); EclipseStore's
     *     storage thread ends up to one interval after {@link EclipseStoreKvStore#close()}
     * @param budget the time one run may take, 0 or more (default 50 ms)
     * @return this builder
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code interval} is under 1 ms or over 10 s, or
     *     {@code budget} is negative
     */
    public Builder housekeeping(Duration interval, Duration budget) {
      Objects.requireNonNull(interval, "interval");
      Objects.requireNonNull(budget, "budget");
      if (interval.toMillis() < 1 || interval.compareTo(MAX_HOUSEKEEPING_INTERVAL) > 0) {
        throw new IllegalArgumentException("housekeeping interval must be from 1 ms to "
            + MAX_HOUSEKEEPING_INTERVAL + " (EclipseStore's thread ends up to one interval after close): "
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
     * Sets the size at which EclipseStore compacts its transactions log. It does so in
     * place, and a crash during that compaction can damage the log, so the default is the
     * largest size EclipseStore allows (1 GiB, about 30 million group commits).
     *
     * @param bytes the size, from 1 KiB to 1 GiB
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is out of that range
     */
    public Builder transactionsLogMaxBytes(int bytes) {
      int min = StorageDataFileEvaluator.Validation.minimumTransactionLogFileSize();
      int max = StorageDataFileEvaluator.Validation.maximumTransactionLogFileSize();
      if (bytes < min || bytes > max) {
        throw new IllegalArgumentException("transactions log size must be from " + min + " to "
            + max + " bytes: " + bytes);
      }
      this.transactionsLogMaxBytes = bytes;
      return this;
    }

    /**
     * Sets the most operations one group commit takes from the waiting commits (a single
     * {@code commitAll} larger than this is still committed whole).
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
     * Sets how many bytes the store writes between two full housekeeping passes (a full
     * garbage collection and file check, run on the committer thread while commits wait).
     * Background housekeeping runs as well, but falls behind under a steady stream of
     * commits; these passes bound the directory's growth to about this many bytes of garbage.
     *
     * @param bytes at least 1 MiB (default 64 MiB), or 0 to leave housekeeping to the
     *     background and to {@link EclipseStoreKvStore#compact()}
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
     * Opens the store: locks the directory, starts EclipseStore, loads the keys and builds
     * the index.
     *
     * @return the open store
     * @throws KvStoreException if the directory is in use by this or another JVM, is not a
     *     kvmq store, or can't be read
     */
    public EclipseStoreKvStore open() {
      return new EclipseStoreKvStore(this);
    }
  }
}
