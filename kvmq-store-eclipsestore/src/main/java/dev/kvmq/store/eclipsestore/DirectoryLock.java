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
import java.nio.file.attribute.BasicFileAttributes;
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
 * channel on a lock file that this JVM holds. The set holds each directory's identity ({@link
 * #identity}: its device and inode where the file system has them), not its path: one directory can
 * have two real paths (a bind mount, a container volume mounted twice), and a check by path let the
 * second open through, whose failed lock then closed its channel and dropped this JVM's lock.
 */
final class DirectoryLock implements AutoCloseable {

  static final String FILE_NAME = "kvmq.lock";

  private static final Set<Object> HELD = ConcurrentHashMap.newKeySet();

  private final Object held;
  private final Path directory;

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(Object held, Path directory, FileChannel channel, FileLock lock) {
    this.held = held;
    this.directory = directory;
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
    Object identity;
    try {
      real = directory.toRealPath();
      identity = identity(real);
    } catch (IOException e) {
      throw new KvStoreException("cannot resolve the storage directory " + directory, e);
    }
    if (!HELD.add(identity)) {
      throw new KvStoreException(
          "storage directory "
              + directory
              + " is already open in this JVM (perhaps under another path: a link or a second"
              + " mount); close the other EclipseStoreKvStore first");
    }
    try {
      return lock(identity, real, directory);
    } catch (RuntimeException e) {
      HELD.remove(identity);
      throw e;
    }
  }

  /**
   * What makes two paths one directory: its file key (device and inode on Linux and macOS), or its
   * real path where the file system has no such key.
   *
   * @param real the directory's real path
   * @throws IOException if its attributes can't be read
   */
  static Object identity(Path real) throws IOException {
    Object key = Files.readAttributes(real, BasicFileAttributes.class).fileKey();
    return key != null ? key : real;
  }

  private static DirectoryLock lock(Object identity, Path real, Path directory) {
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
      return new DirectoryLock(identity, real, channel, lock);
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
          "cannot release the lock file of the storage directory " + directory, e);
    } finally {
      HELD.remove(held);
    }
  }
}
