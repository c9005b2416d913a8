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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadFactory;
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
 * Entries are packed into pages of about {@link Builder#pageBytes} bytes, each page one
 * persisted byte array; the key order lives in an index in the heap, rebuilt when the store
 * opens. A commit rewrites the pages whose entries it changed: at most about a page per key
 * it changes, whatever the size of the map, and opening loads two objects per page, not per
 * key (see {@code docs/embedded-store.md}).
 *
 * <h2>Housekeeping</h2>
 * EclipseStore's background housekeeping runs in small timed slices. In addition, every
 * {@link Builder#compactEvery} bytes written, the committer thread runs a whole garbage
 * collection and file check in slices of {@link Builder#compactSlice} between group commits,
 * so that commits wait for one slice at most, never for a whole pass.
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

  private static final Comparator<Entry> KEY_ORDER = Entry::compareKeys;

  /** Key order; guarded by {@link #lock}. Changed by the committer thread only. */
  private NavigableSet<Entry> index = new TreeSet<>(KEY_ORDER);
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  /** The ring the next new page goes to; used by the committer thread only. */
  private int nextRing;
  /** The packed size a page is filled up to. */
  private final int pageBytes;
  /** The page new keys go to while it has room; committer thread only. */
  private Page fill;
  /** Pages under half full, to be filled again (some may have filled up or died since). */
  private final ArrayDeque<Page> roomy = new ArrayDeque<>();
  /** Pages changed by the group commit being applied; committer thread only. */
  private final List<Page> changedPages = new ArrayList<>();
  private final SubscriberRegistry subscribers = new SubscriberRegistry(LOG);

  /** Commits waiting for the committer; guarded by itself, as are {@link #closed}. */
  private final ArrayDeque<Request> queue = new ArrayDeque<>();
  private final Thread committer;
  private final int maxBatch;
  private final long compactEveryBytes;
  private final long compactSliceNanos;
  /** {@link SyncingFileWriter#bytesWritten()} when the last housekeeping cycle started; committer thread only. */
  private long compactedAt;
  /** 0: no cycle running; 1: garbage collection; 2: file check. Committer thread only. */
  private int compactPhase;
  private long compactStarted;
  private long compactSlices;
  private long compactCycles;
  private volatile boolean closed;
  private boolean closeDone;
  /** Set when a write failed after the heap was changed: the heap no longer matches the disk. */
  private volatile Throwable failure;

  private EclipseStoreKvStore(Builder b) {
    this.directory = b.directory.toAbsolutePath();
    this.durability = b.durability;
    this.maxBatch = b.maxBatch;
    this.compactEveryBytes = b.compactEveryBytes;
    this.compactSliceNanos = b.compactSlice.toNanos();
    this.pageBytes = b.pageBytes;
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new KvStoreException("cannot create the storage directory " + directory, e);
    }
    this.directoryLock = DirectoryLock.acquire(directory);
    try {
      refuseOldLayout(directory);
    } catch (RuntimeException e) {
      directoryLock.close();
      throw e;
    }
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
    Thread t;
    try {
      t = b.threadFactory != null ? b.threadFactory.newThread(this::runCommitter)
          : daemonThread(this::runCommitter, "kvmq-eclipsestore-committer " + directory.getFileName());
      if (t == null) {
        throw new IllegalStateException("the thread factory made no committer thread for " + directory);
      }
      t.start();
    } catch (RuntimeException | Error e) {
      // nothing was committed: give the directory back
      try {
        started.shutdown();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      w.close();
      directoryLock.close();
      throw e;
    }
    this.committer = t;
  }

  private static Thread daemonThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Starts configuring a store in {@code directory} (created if missing).
   *
   * @param directory the storage directory, owned by one JVM at a time
   * @return a builder with the defaults: {@link Durability#FSYNC}, housekeeping every second
   *     for up to 10 ms, a housekeeping cycle in 5 ms slices every 64 MiB written, 2 KiB pages
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

  /**
   * Refuses a directory written by a development build before pages (format 1, a node per
   * key): its type dictionary names a class that no longer exists, and EclipseStore would
   * fail to load it with a less helpful error.
   */
  private static void refuseOldLayout(Path directory) {
    Path dictionary = directory.resolve("PersistenceTypeDictionary.ptd");
    if (!Files.isRegularFile(dictionary)) {
      return;
    }
    String text;
    try {
      text = Files.readString(dictionary, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new KvStoreException("cannot read " + dictionary, e);
    }
    if (text.contains("dev.kvmq.store.eclipsestore.Node")) {
      throw new KvStoreException("storage directory " + directory + " has format 1 (a node per key,"
          + " written by a development build of kvmq); this version reads format "
          + StoreRoot.CURRENT_FORMAT + " only. No release wrote format 1: move the directory away"
          + " and start with an empty one");
    }
  }

  /**
   * Walks the rings of pages, unpacks their entries and builds the key index: the entries are
   * sorted once and the index is built from the sorted run in linear time.
   */
  private void rebuildIndex() {
    if (root.rings == null || root.rings.length != StoreRoot.RINGS) {
      throw new KvStoreException("storage directory " + directory + " is damaged: the rings of pages are missing");
    }
    List<Entry> all = new ArrayList<>();
    for (Page s : root.rings) {
      if (s == null) {
        throw new KvStoreException("storage directory " + directory + " is damaged: a ring sentinel is missing");
      }
      s.initHeap();
      for (Page p = s.next; p != s; p = p.next) {
        if (p == null || p.next == null || p.next.prev != p || p.data == null) {
          throw new KvStoreException("storage directory " + directory + " is damaged: broken link in a page ring");
        }
        p.initHeap();
        byte[] d = p.data;
        int pos = 0;
        while (pos < d.length) {
          int size = Entry.sizeAt(d, pos);
          if (size < 0) {
            throw new KvStoreException("storage directory " + directory + " is damaged: a page holds a cut entry");
          }
          Entry e = new Entry(d, pos);
          e.page = p;
          p.entries.add(e);
          all.add(e);
          pos += size;
        }
        p.bytes = d.length;
        if (p.entries.isEmpty()) {
          throw new KvStoreException("storage directory " + directory + " is damaged: an empty page is linked");
        }
        if (p.bytes < pageBytes / 2) {
          p.roomy = true;
          roomy.add(p);
        }
      }
    }
    Entry[] sorted = all.toArray(new Entry[0]);
    all = null;
    Arrays.sort(sorted, KEY_ORDER);
    for (int i = 1; i < sorted.length; i++) {
      if (Entry.compareKeys(sorted[i - 1], sorted[i]) == 0) {
        throw new KvStoreException("storage directory " + directory + " is damaged: a key is stored twice");
      }
    }
    TreeSet<Entry> built = new TreeSet<>(KEY_ORDER);
    built.addAll(new SortedRun(sorted)); // TreeSet builds from a SortedSet in linear time
    index = built;
  }

  /**
   * A sorted array seen as a {@link SortedSet} with the index's comparator: what
   * {@link TreeSet#addAll} needs to build its tree in one linear pass. Only iteration and
   * size are used.
   */
  private static final class SortedRun extends AbstractSet<Entry> implements SortedSet<Entry> {
    private final Entry[] sorted;

    SortedRun(Entry[] sorted) {
      this.sorted = sorted;
    }

    @Override
    public Iterator<Entry> iterator() {
      return Arrays.asList(sorted).iterator();
    }

    @Override
    public int size() {
      return sorted.length;
    }

    @Override
    public Comparator<? super Entry> comparator() {
      return KEY_ORDER;
    }

    @Override
    public SortedSet<Entry> subSet(Entry from, Entry to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public SortedSet<Entry> headSet(Entry to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public SortedSet<Entry> tailSet(Entry from) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Entry first() {
      return sorted[0];
    }

    @Override
    public Entry last() {
      return sorted[sorted.length - 1];
    }
  }

  // ---- reads

  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    Entry probe = Entry.probe(key.encoded());
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
    List<Entry> probes = new ArrayList<>(keys.size());
    for (Key k : keys) {
      probes.add(Entry.probe(Objects.requireNonNull(k, "key").encoded()));
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
      NavigableSet<Entry> sub = subSet(range);
      for (Entry n : reverse ? sub.descendingSet() : sub) {
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

  private NavigableSet<Entry> subSet(KeyRange range) {
    return index.subSet(Entry.probe(range.lowerBound()), true, Entry.probe(range.upperBound()), false);
  }

  private Entry find(Entry probe) {
    Entry n = index.ceiling(probe);
    return n != null && Entry.compareKeys(n, probe) == 0 ? n : null;
  }

  private static KvEntry entryOf(Entry n, Key knownKey) {
    if (n == null) {
      return null;
    }
    Key key = knownKey != null ? knownKey : Key.decode(n.key());
    return new KvEntry(key, n.value(), n.versionstamp());
  }

  /**
   * Reads the index entries and their records under one read lock, so that the planner sees
   * them at one consistent state: a record whose index entry is listed has not been claimed
   * since (a claim deletes the index entry in the same commit). Concurrent claims then fail
   * their checks instead of taking an entry twice, and the operations are committed as
   * {@link #commitAll} does.
   *
   * @throws NullPointerException if an argument is null, or the planner returns null or a
   *     null key or operation
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
    List<AtomicOperation> operations = Objects.requireNonNull(planner.plan(index, records), "planned operations");
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
        // while a housekeeping cycle is under way, an idle committer runs its slices
        while (queue.isEmpty() && !closed && compactPhase == 0) {
          try {
            queue.wait();
          } catch (InterruptedException e) {
            // only close() stops this thread, after the queue is empty
          }
        }
        if (queue.isEmpty() && closed) {
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
        if (!batch.isEmpty()) {
          commitBatch(batch);
        }
        housekeepingSlice();
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
        changedPages.clear();
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
        for (Page p : changedPages) {
          p.dirty = false;
          if (!p.dead) {
            p.rewrite();
            dirty.add(p);
          }
        }
        changedPages.clear();
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
      subscribers.notifyCommitted(applied);
    }
  }

  private boolean checksHold(AtomicOperation op) {
    for (AtomicOperation.Check c : op.checks()) {
      Entry n = find(Entry.probe(c.key().encoded()));
      long current = n == null ? AtomicOperation.ABSENT : n.versionstamp();
      if (current != c.versionstamp()) {
        return false;
      }
    }
    return true;
  }

  private void apply(AtomicOperation op, long vs, Set<Object> dirty) {
    for (AtomicOperation.Mutation m : op.mutations()) {
      byte[] key = m.key().encoded();
      Entry existing = find(Entry.probe(key));
      if (m.isDelete()) {
        if (existing != null) {
          index.remove(existing);
          removeFromPage(existing, dirty);
        }
      } else if (existing != null) {
        byte[] packed = Entry.pack(key, m.value(), vs);
        Page p = existing.page;
        int grows = packed.length - existing.size();
        if (p.bytes + grows <= pageBytes || p.entries.size() == 1) {
          existing.buf = packed;
          existing.off = 0;
          p.bytes += grows;
          changed(p);
        } else {
          // it no longer fits: move it to a page with room
          removeFromPage(existing, dirty);
          existing.buf = packed;
          existing.off = 0;
          place(existing, dirty);
        }
      } else {
        Entry e = new Entry(Entry.pack(key, m.value(), vs), 0);
        place(e, dirty);
        index.add(e);
      }
    }
  }

  private void changed(Page p) {
    if (!p.dirty) {
      p.dirty = true;
      changedPages.add(p);
    }
  }

  /**
   * Puts an entry (new, or moved out of a page it outgrew) in a page with room: the page new
   * keys go to, else a page under half full, else a new page. An entry larger than a page
   * gets a page of its own.
   */
  private void place(Entry e, Set<Object> dirty) {
    int size = e.size();
    Page p;
    if (size > pageBytes / 2) {
      p = new Page(new byte[0]);
      link(p, dirty);
    } else {
      p = fill;
      if (p == null || p.dead || p.bytes + size > pageBytes) {
        // any page under half full has room for an entry of at most half a page
        p = null;
        while (!roomy.isEmpty()) {
          Page r = roomy.poll();
          r.roomy = false;
          if (!r.dead && r.bytes < pageBytes / 2) {
            p = r;
            break;
          }
        }
        if (p == null) {
          p = new Page(new byte[0]);
          link(p, dirty);
        }
        fill = p;
      }
    }
    e.page = p;
    p.entries.add(e);
    p.bytes += size;
    changed(p);
  }

  /**
   * Takes an entry out of its page. An emptied page leaves its ring; a page that falls under
   * a quarter full moves its entries to the page new keys go to, if they fit there, and
   * leaves its ring too (a merge); a page under half full is offered to new keys.
   */
  private void removeFromPage(Entry e, Set<Object> dirty) {
    Page p = e.page;
    removeEntry(p, e);
    p.bytes -= e.size();
    e.page = null;
    changed(p);
    if (p.entries.isEmpty()) {
      unlink(p, dirty);
      return;
    }
    Page f = fill;
    if (p.bytes < pageBytes / 4 && f != null && f != p && !f.dead && f.bytes + p.bytes <= pageBytes) {
      for (Entry moved : p.entries) {
        moved.page = f;
        f.entries.add(moved);
      }
      f.bytes += p.bytes;
      changed(f);
      p.entries.clear();
      p.bytes = 0;
      unlink(p, dirty);
      return;
    }
    if (p.bytes < pageBytes / 2 && !p.roomy && p != fill) {
      p.roomy = true;
      roomy.add(p);
    }
  }

  private static void removeEntry(Page p, Entry e) {
    ArrayList<Entry> list = p.entries;
    for (int i = list.size() - 1; i >= 0; i--) {
      if (list.get(i) == e) {
        list.remove(i);
        return;
      }
    }
    throw new IllegalStateException("an entry is not in its page");
  }

  /** Inserts page {@code p} right after the sentinel of the next ring in turn. */
  private void link(Page p, Set<Object> dirty) {
    Page s = root.rings[nextRing++ & (StoreRoot.RINGS - 1)];
    Page first = s.next;
    p.prev = s;
    p.next = first;
    first.prev = p;
    s.next = p;
    dirty.add(first);
    dirty.add(s);
    // p itself is written by the page rewrite at the end of the group commit
  }

  private void unlink(Page p, Set<Object> dirty) {
    Page before = p.prev;
    Page after = p.next;
    before.next = after;
    after.prev = before;
    p.dead = true;
    dirty.remove(p); // nothing references it any more: not worth writing
    dirty.add(before);
    dirty.add(after);
    if (fill == p) {
      fill = null;
    }
  }

  /**
   * Runs one slice of a housekeeping cycle (a whole garbage collection, then a whole file
   * check) on the committer thread, between group commits: commits wait for one slice at
   * most. A cycle starts every {@link Builder#compactEvery} bytes written. EclipseStore's
   * background housekeeping alone falls behind under a steady stream of commits (measured:
   * the directory grew by ~650 bytes per pushed and completed job at 18k jobs/s).
   */
  private void housekeepingSlice() {
    if (failure != null || compactEveryBytes <= 0) {
      compactPhase = 0;
      return;
    }
    if (compactPhase == 0) {
      if (writer.bytesWritten() - compactedAt < compactEveryBytes) {
        return;
      }
      compactedAt = writer.bytesWritten();
      compactStarted = System.nanoTime();
      compactPhase = 1;
    }
    try {
      compactSlices++;
      if (compactPhase == 1) {
        if (storage.issueGarbageCollection(compactSliceNanos)) {
          compactPhase = 2;
        }
      } else if (storage.issueFileCheck(compactSliceNanos)) {
        compactPhase = 0;
        compactCycles++;
        long ms = (System.nanoTime() - compactStarted) / 1_000_000;
        LOG.log(System.Logger.Level.DEBUG, () -> "housekeeping cycle of " + directory + " done in " + ms + " ms");
      }
    } catch (RuntimeException e) {
      compactPhase = 0;
      LOG.log(System.Logger.Level.WARNING, "housekeeping of " + directory + " failed; commits go on", e);
    }
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

  /** Housekeeping cycles finished on the committer thread since open; for tests. */
  long housekeepingCycles() {
    return compactCycles;
  }

  /** Housekeeping slices run on the committer thread since open; for tests. */
  long housekeepingSlices() {
    return compactSlices;
  }

  /** Number of pages holding entries; for tests. Takes the read lock. */
  int pageCount() {
    lock.readLock().lock();
    try {
      int n = 0;
      for (Page s : root.rings) {
        for (Page p = s.next; p != s; p = p.next) {
          n++;
        }
      }
      return n;
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
     * @param budget the time one run may take, 0 or more (default 10 ms); commits wait while
     *     a run holds the storage, so this bounds the stall it adds
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
     * Sets how many bytes the store writes between the starts of two housekeeping cycles (a
     * whole garbage collection, then a whole file check) that the committer thread runs in
     * slices of {@link #compactSlice} between group commits. Background housekeeping runs
     * as well, but falls behind under a steady stream of commits; these cycles bound the
     * directory's growth.
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
     * Sets how long one slice of a {@link #compactEvery} housekeeping cycle may run on the
     * committer thread. Commits that arrive meanwhile wait for the slice to end, so this is
     * about the longest pause housekeeping adds to a commit (EclipseStore ends a slice at the
     * next unit of work after the budget, so a slice can overrun it a little).
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
     * Sets the packed size pages are filled up to. A commit rewrites each page it changes,
     * so this bounds the bytes written per changed key (plus the key's own size); opening a
     * store loads two objects per page, so larger pages open faster. An entry larger than
     * half a page gets a page of its own. Pages of any size are readable whatever this is
     * set to: it can change between opens.
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
     * Makes the store's committer thread (which also calls the change listeners), for
     * containers that want their own (managed) threads: in a Jakarta EE server, pass the
     * container's {@code ManagedThreadFactory}. The store asks it for one thread when it
     * opens and uses the thread as it comes (name, daemon status and priority are the
     * factory's). EclipseStore's own storage threads are not made by it.
     *
     * @param threadFactory the factory, or null for a daemon thread named
     *     {@code kvmq-eclipsestore-committer <directory name>} (the default)
     * @return this builder
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /**
     * Opens the store: locks the directory, starts EclipseStore, loads the keys, builds
     * the index and starts the committer thread. If it fails, the directory is released
     * again.
     *
     * @return the open store
     * @throws KvStoreException if the directory is in use by this or another JVM, is not a
     *     kvmq store, or can't be read
     * @throws IllegalStateException if the {@linkplain #threadFactory thread factory} makes
     *     no thread (returns null); what the factory throws is thrown as it is
     */
    public EclipseStoreKvStore open() {
      return new EclipseStoreKvStore(this);
    }
  }
}
