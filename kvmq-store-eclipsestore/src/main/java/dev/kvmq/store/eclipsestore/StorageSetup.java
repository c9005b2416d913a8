package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.KvStoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * How the store sets EclipseStore up: its configuration (one channel, housekeeping, file sizes, the
 * transactions log), the store's own file writer, no EclipseStore lock file, and the checks of what
 * a directory holds before and after EclipseStore loads it.
 *
 * <p><b>Locking.</b> None: stateless, called while the store opens, before any other thread sees
 * it; the directory lock is already held.
 */
final class StorageSetup {

  private static final System.Logger LOG = System.getLogger(EclipseStoreKvStore.class.getName());

  private StorageSetup() {}

  /** Starts EclipseStore in {@code directory} with the store's settings and file writer. */
  static EmbeddedStorageManager start(
      Path directory,
      Duration housekeepingInterval,
      Duration housekeepingBudget,
      int transactionsLogMaxBytes,
      SyncingFileWriter writer) {
    NioFileSystem fs = NioFileSystem.New();
    StorageConfiguration config =
        Storage.ConfigurationBuilder()
            .setStorageFileProvider(
                Storage.FileProviderBuilder(fs)
                    .setDirectory(fs.ensureDirectory(directory))
                    .createFileProvider())
            // One channel: more channels mean more files to flush per commit.
            .setChannelCountProvider(Storage.ChannelCountProvider(1))
            .setHousekeepingController(
                StorageHousekeepingController.New(
                    housekeepingInterval.toMillis(), housekeepingBudget.toNanos()))
            // Default file sizes and use ratio; the transactions log is compacted only at its
            // largest allowed size, because EclipseStore compacts it in place (truncate, then
            // rewrite), which a crash at that moment would damage.
            .setDataFileEvaluator(
                StorageDataFileEvaluator.New(
                    StorageDataFileEvaluator.Defaults.defaultFileMinimumSize(),
                    StorageDataFileEvaluator.Defaults.defaultFileMaximumSize(),
                    0.75,
                    true,
                    transactionsLogMaxBytes))
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
   * Clears what a process stopped while it created the storage left behind, if that is all there
   * is: channel directories that hold nothing but empty transactions logs, and no data file.
   * EclipseStore creates a channel's transactions log before its first data file, and refuses to
   * start on a channel without a data file ("No data file in channel directory ... found!"), so a
   * {@code kill -9} at that moment of the first open left a directory that never opened again. A
   * channel without a data file holds no data: EclipseStore keeps every entity in data files.
   *
   * @throws KvStoreException if the leftovers can't be read or removed
   */
  static void clearNeverWritten(Path directory) {
    List<Path> leftovers = new ArrayList<>();
    try (DirectoryStream<Path> channels = Files.newDirectoryStream(directory, "channel_*")) {
      for (Path channel : channels) {
        if (!Files.isDirectory(channel)) {
          return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(channel)) {
          for (Path f : files) {
            String name = f.getFileName().toString();
            if (!name.endsWith(".sft") || !Files.isRegularFile(f) || Files.size(f) != 0) {
              return; // a data file, a log with entries, or something else: not ours to clear
            }
            leftovers.add(f);
          }
        }
        leftovers.add(channel);
      }
    } catch (IOException e) {
      throw new KvStoreException("cannot read the storage directory " + directory, e);
    }
    if (leftovers.isEmpty()) {
      return;
    }
    LOG.log(
        System.Logger.Level.WARNING,
        () ->
            "the EclipseStore storage in "
                + directory
                + " was being created when its process stopped, and holds no data: creating it"
                + " again (removing "
                + leftovers.stream().map(p -> directory.relativize(p).toString()).toList()
                + ")");
    try {
      for (Path p : leftovers) { // each channel's files come before the channel
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new KvStoreException(
          "cannot remove the leftovers of an interrupted creation in " + directory, e);
    }
  }

  /**
   * Refuses a directory written by a development build before pages (format 1, a node per key): its
   * type dictionary names a class that no longer exists, and EclipseStore would fail to load it
   * with a less helpful error.
   */
  static void refuseOldLayout(Path directory) {
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
      throw new KvStoreException(
          "storage directory "
              + directory
              + " has format 1 (a node per key,"
              + " written by a development build of kvmq); this version reads format "
              + StoreRoot.CURRENT_FORMAT
              + " only. No release wrote format 1: move the directory away"
              + " and start with an empty one");
    }
  }

  /**
   * Gives the root of a started storage, storing an empty one in a new directory.
   *
   * @throws KvStoreException if the directory holds another format or another storage
   */
  static StoreRoot root(EmbeddedStorageManager started, Path directory) {
    Object existing = started.root(); // loaded by start(): the whole graph
    if (existing == null) {
      StoreRoot r = StoreRoot.empty();
      started.setRoot(r);
      started.storeRoot();
      return r;
    }
    if (existing instanceof StoreRoot sr) {
      if (sr.format != StoreRoot.CURRENT_FORMAT) {
        throw new KvStoreException(
            "storage directory "
                + directory
                + " has format "
                + sr.format
                + "; this version of kvmq reads format "
                + StoreRoot.CURRENT_FORMAT);
      }
      return sr;
    }
    throw new KvStoreException(
        "storage directory "
            + directory
            + " holds an EclipseStore storage that is not a kvmq store (root is a "
            + existing.getClass().getName()
            + ")");
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
}
