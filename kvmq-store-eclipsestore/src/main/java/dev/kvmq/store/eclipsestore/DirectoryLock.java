package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.KvStoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The exclusive claim of one JVM on a storage directory: an OS file lock on
 * {@code kvmq.lock}. The operating system releases it when the process ends, however it
 * ends, so a killed JVM leaves nothing that blocks the next start.
 */
final class DirectoryLock implements AutoCloseable {

  static final String FILE_NAME = "kvmq.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock at once or fails.
   *
   * @throws KvStoreException if another JVM, or this one, holds it, or the file can't be made
   */
  static DirectoryLock acquire(Path directory) {
    Path file = directory.resolve(FILE_NAME);
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new KvStoreException("cannot open the lock file " + file, e);
    }
    try {
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        throw new KvStoreException("storage directory " + directory
            + " is already open in this JVM; close the other EclipseStoreKvStore first");
      }
      if (lock == null) {
        throw new KvStoreException("storage directory " + directory
            + " is in use by another process (" + holder(file)
            + "); one JVM owns a storage directory at a time");
      }
      String me = "pid " + ProcessHandle.current().pid() + "\n";
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(me.getBytes(StandardCharsets.UTF_8)), 0);
      return new DirectoryLock(channel, lock);
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      if (e instanceof KvStoreException k) {
        throw k;
      }
      throw new KvStoreException("cannot lock the storage directory " + directory, e);
    }
  }

  private static String holder(Path file) {
    try {
      String s = Files.readString(file, StandardCharsets.UTF_8).trim();
      return s.isEmpty() ? "holder unknown" : s;
    } catch (IOException | RuntimeException e) {
      return "holder unknown";
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // already failing
    }
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException e) {
      throw new KvStoreException("cannot release the lock file of the storage directory", e);
    }
  }
}
