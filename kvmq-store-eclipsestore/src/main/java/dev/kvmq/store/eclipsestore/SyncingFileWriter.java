package dev.kvmq.store.eclipsestore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.eclipse.serializer.afs.types.AFile;
import org.eclipse.store.afs.nio.types.NioFileSystem;
import org.eclipse.store.storage.types.StorageFile;
import org.eclipse.store.storage.types.StorageFileProvider;
import org.eclipse.store.storage.types.StorageFileWriter;
import org.eclipse.store.storage.types.StorageImportSource;
import org.eclipse.store.storage.types.StorageLiveChannelFile;
import org.eclipse.store.storage.types.StorageLiveDataFile;
import org.eclipse.store.storage.types.StorageLiveTransactionsFile;
import org.eclipse.store.storage.types.StorageWriteController;

/**
 * EclipseStore's file writer, plus a flush to the device after every write (EclipseStore 2.1.3
 * never calls fsync itself).
 *
 * <p>EclipseStore writes a commit's data to the data file first and then appends the
 * transactions-log entry that makes it valid; both go through {@link #write}, so forcing each write
 * keeps that order on the device: a log entry is never durable before its data.
 *
 * <p>Copies made by housekeeping ({@link #writeTransfer}, {@link #writeImport}) and their log
 * entries are not forced one by one (a file cleanup makes thousands): their files are marked dirty,
 * and every force, truncation and delete first forces every dirty file. So a copy is durable before
 * any later log entry is, and before the file it was copied from is deleted. A file's first force,
 * and every delete, also forces the directory, so that the file's name survives a power loss.
 *
 * <p>With {@code sync} false it only counts bytes: the mode that survives a process crash. It also
 * counts every byte written, for the benchmarks.
 */
final class SyncingFileWriter implements StorageFileWriter {

  private final boolean sync;
  private final Map<Path, FileChannel> channels = new ConcurrentHashMap<>();
  private final Set<Path> knownFiles = ConcurrentHashMap.newKeySet();

  /** Written by housekeeping and not yet forced. */
  private final Set<Path> dirty = ConcurrentHashMap.newKeySet();

  private final LongAdder bytesWritten = new LongAdder();
  private final LongAdder syncs = new LongAdder();

  SyncingFileWriter(boolean sync) {
    this.sync = sync;
  }

  long bytesWritten() {
    return bytesWritten.sum();
  }

  long syncs() {
    return syncs.sum();
  }

  @Override
  public long write(StorageFile file, Iterable<? extends ByteBuffer> buffers) {
    long n = file.writeBytes(buffers);
    bytesWritten.add(n);
    force(file.file());
    return n;
  }

  @Override
  public long writeTransactionEntryTransfer(
      StorageLiveTransactionsFile transactionFile,
      Iterable<? extends ByteBuffer> byteBuffers,
      StorageLiveDataFile dataFile,
      long dataFileOffset,
      long storeLength) {
    long n = transactionFile.writeBytes(byteBuffers);
    bytesWritten.add(n);
    markDirty(transactionFile.file());
    return n;
  }

  @Override
  public long writeImport(
      StorageImportSource source,
      long sourceOffset,
      long copyLength,
      StorageLiveDataFile targetFile) {
    long n = StorageFileWriter.super.writeImport(source, sourceOffset, copyLength, targetFile);
    bytesWritten.add(n);
    markDirty(targetFile.file());
    return n;
  }

  @Override
  public long writeTransfer(
      StorageLiveDataFile sourceFile,
      long sourceOffset,
      long copyLength,
      StorageLiveDataFile targetFile) {
    long n =
        StorageFileWriter.super.writeTransfer(sourceFile, sourceOffset, copyLength, targetFile);
    bytesWritten.add(n);
    markDirty(targetFile.file());
    return n;
  }

  @Override
  public void truncate(
      StorageLiveChannelFile<?> file, long newLength, StorageFileProvider fileProvider) {
    forceDirty();
    StorageFileWriter.super.truncate(file, newLength, fileProvider);
    force(file.file());
  }

  @Override
  public void delete(
      StorageLiveDataFile file,
      StorageWriteController writeController,
      StorageFileProvider fileProvider) {
    forceDirty();
    Path path = pathOf(file.file());
    closeChannel(path);
    StorageFileWriter.super.delete(file, writeController, fileProvider);
    knownFiles.remove(path);
    dirty.remove(path);
    if (sync) {
      forceDirectory(path.getParent());
    }
  }

  /** Closes the channels kept for forcing. */
  void close() {
    for (Path p : channels.keySet()) {
      closeChannel(p);
    }
  }

  private void markDirty(AFile file) {
    if (sync) {
      dirty.add(pathOf(file));
    }
  }

  private void forceDirty() {
    if (!sync) {
      return;
    }
    for (Path p : dirty) {
      dirty.remove(p);
      forcePath(p);
    }
  }

  private void force(AFile file) {
    if (!sync) {
      return;
    }
    forceDirty();
    forcePath(pathOf(file));
  }

  private void forcePath(Path path) {
    try {
      FileChannel ch = channels.get(path);
      if (ch == null) {
        if (!Files.exists(path)) {
          return; // deleted since it was written: nothing to keep
        }
        ch = channels.computeIfAbsent(path, SyncingFileWriter::openForForce);
      }
      ch.force(false);
      syncs.increment();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot flush " + path + " to the storage device", e);
    }
    if (knownFiles.add(path)) {
      forceDirectory(path.getParent());
    }
  }

  private static FileChannel openForForce(Path path) {
    try {
      return FileChannel.open(path, StandardOpenOption.READ);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open " + path + " to flush it", e);
    }
  }

  private void forceDirectory(Path dir) {
    if (dir == null) {
      return;
    }
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
      syncs.increment();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot flush the directory " + dir, e);
    }
  }

  private void closeChannel(Path path) {
    FileChannel ch = channels.remove(path);
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing left to flush through it
      }
    }
  }

  private static Path pathOf(AFile file) {
    return ((NioFileSystem) file.fileSystem()).ioHandler().toPath(file);
  }
}
