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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive claim of one JVM on a storage directory: an OS file lock on {@code kvmq.lock}. The
 * operating system releases it when the process ends, however it ends, so a killed JVM leaves
 * nothing that blocks the next start.
 *
 * <p>Within one JVM the directories held are also kept in a set, checked before the lock file is
 * even opened: on Linux, OS file locks belong to the process, and closing any channel on the file
 * releases them all. A second opener in the same JVM must therefore never open (and close) a
 * channel on a lock file that this JVM holds.
 */
final class DirectoryLock implements AutoCloseable {

  static final String FILE_NAME = "kvmq.lock";

  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path held;

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(Path held, FileChannel channel, FileLock lock) {
    this.held = held;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock at once or fails.
   *
   * @throws KvStoreException if another JVM, or this one, holds it, or the file can't be made
   */
  static DirectoryLock acquire(Path directory) {
    Path real;
    try {
      real = directory.toRealPath();
    } catch (IOException e) {
      throw new KvStoreException("cannot resolve the storage directory " + directory, e);
    }
    if (!HELD.add(real)) {
      throw new KvStoreException(
          "storage directory "
              + directory
              + " is already open in this JVM; close the other EclipseStoreKvStore first");
    }
    try {
      return lock(real, directory);
    } catch (RuntimeException e) {
      HELD.remove(real);
      throw e;
    }
  }

  private static DirectoryLock lock(Path real, Path directory) {
    Path file = real.resolve(FILE_NAME);
    FileChannel channel;
    try {
      channel =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new KvStoreException("cannot open the lock file " + file, e);
    }
    try {
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        throw new KvStoreException(
            "storage directory "
                + directory
                + " is already open in this JVM; close the other EclipseStoreKvStore first");
      }
      if (lock == null) {
        throw new KvStoreException(
            "storage directory "
                + directory
                + " is in use by another process ("
                + holder(file)
                + "); one JVM owns a storage directory at a time");
      }
      String me = "pid " + ProcessHandle.current().pid() + "\n";
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(me.getBytes(StandardCharsets.UTF_8)), 0);
      return new DirectoryLock(real, channel, lock);
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
      throw new KvStoreException(
          "cannot release the lock file of the storage directory " + held, e);
    } finally {
      HELD.remove(held);
    }
  }
}
