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
import java.util.UUID;

/**
 * The exclusive claim of one JVM on a storage directory: an OS file lock on {@code kvmq.lock}. The
 * operating system releases it when the process ends, however it ends, so a killed JVM leaves
 * nothing that blocks the next start.
 *
 * <p>Within one JVM the directories held are also registered, checked before the lock file is even
 * opened: on Linux, OS file locks belong to the process, and closing any channel on the file
 * releases them all. A second opener in the same JVM must therefore never open (and close) a
 * channel on a lock file that this JVM holds. The register is the JVM's system properties (one
 * property {@code dev.kvmq.store.eclipsestore.held.<identity>} per directory held), because a
 * static set belongs to one class loader: two applications in one server each bundle this class,
 * and a second application's failed open, passing a set of its own, closed its channel and dropped
 * the first one's lock (seen on WildFly 39), after which another process could open the directory.
 * It holds each directory's identity ({@link #identity}: its device and inode where the file system
 * has them), not its path: one directory can have two real paths (a bind mount, a container volume
 * mounted twice), and a check by path let the second open through in the same way.
 */
final class DirectoryLock implements AutoCloseable {

  static final String FILE_NAME = "kvmq.lock";

  /** The system properties that register the directories held in this JVM start so. */
  static final String HELD_PROPERTY = "dev.kvmq.store.eclipsestore.held.";

  private final String held;
  private final String token;
  private final Path directory;

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(
      String held, String token, Path directory, FileChannel channel, FileLock lock) {
    this.held = held;
    this.token = token;
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
    String held = HELD_PROPERTY + identity;
    String token = "pid " + ProcessHandle.current().pid() + " " + UUID.randomUUID();
    if (System.getProperties().putIfAbsent(held, token) != null) {
      throw new KvStoreException(
          "storage directory "
              + directory
              + " is already open in this JVM, by this application or another one deployed"
              + " beside it (perhaps under another path: a link or a second mount); close the"
              + " other EclipseStoreKvStore first, or give each application its own directory"
              + " (kvmq.data-dir)");
    }
    try {
      return lock(held, token, real, directory);
    } catch (RuntimeException e) {
      System.getProperties().remove(held, token);
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

  private static DirectoryLock lock(String held, String token, Path real, Path directory) {
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
      return new DirectoryLock(held, token, real, channel, lock);
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
      System.getProperties().remove(held, token);
    }
  }
}
