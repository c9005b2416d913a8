package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.KvStoreException;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On Linux, OS file locks belong to the process, and closing any channel on the lock file releases
 * them all. A failed second open in the same JVM used to open and close such a channel, silently
 * dropping the first store's lock: another process could then open the directory too. A second
 * opener must leave the lock alone.
 */
class DirectoryLockRegressionTest {

  @TempDir Path dir;

  @Test
  void aFailedSecondOpenInTheSameJvmKeepsOtherProcessesOut() throws Exception {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      assertThat(store.directory()).isEqualTo(dir.toAbsolutePath());
      assertThatThrownBy(() -> EclipseStoreKvStore.open(dir)).isInstanceOf(KvStoreException.class);
      assertThatThrownBy(
              () -> EclipseStoreKvStore.open(dir.resolve(".").resolve("../" + dir.getFileName())))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("already open in this JVM");
      assertThat(probe()).startsWith("REFUSED").contains("in use by another process");
    }
    assertThat(probe()).isEqualTo("OPENED");
  }

  /**
   * The set of directories this JVM holds is keyed by the directory's identity, not a path: one
   * directory can have two real paths (a bind mount), and a check by path once let a second open in
   * the same JVM through, whose failed lock closed its channel and dropped this JVM's lock (seen
   * with {@code mount --bind}, which a test can't count on being allowed to run).
   */
  @Test
  void aDirectoryIsKnownByItsFileKeyNotItsPath() throws Exception {
    Path other = java.nio.file.Files.createDirectory(dir.resolveSibling(dir.getFileName() + "-b"));
    Path link =
        java.nio.file.Files.createSymbolicLink(dir.resolveSibling(dir.getFileName() + "-l"), dir);
    try {
      Object key =
          java.nio.file.Files.readAttributes(dir, java.nio.file.attribute.BasicFileAttributes.class)
              .fileKey();
      assertThat(key).as("Linux file systems give a device and inode").isNotNull();
      assertThat(DirectoryLock.identity(dir.toRealPath())).isEqualTo(key);
      assertThat(DirectoryLock.identity(link.toRealPath()))
          .isEqualTo(DirectoryLock.identity(dir.toRealPath()));
      assertThat(DirectoryLock.identity(other.toRealPath()))
          .isNotEqualTo(DirectoryLock.identity(dir.toRealPath()));
      try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
        assertThatThrownBy(() -> EclipseStoreKvStore.open(link))
            .isInstanceOf(KvStoreException.class)
            .hasMessageContaining("already open in this JVM");
        assertThat(probe()).startsWith("REFUSED");
      }
    } finally {
      java.nio.file.Files.delete(link);
      java.nio.file.Files.delete(other);
    }
  }

  /**
   * Two applications in one server each bundle kvmq, so each has its own copy of this module's
   * classes: a static set of the directories held was one application's only, and the second one's
   * failed open closed a channel on the lock file and dropped the first one's lock (seen on WildFly
   * 39, after which another process opened the directory and both wrote to it). The register is the
   * JVM's.
   */
  @Test
  void aSecondCopyOfTheseClassesInTheSameJvmIsRefusedAndKeepsOtherProcessesOut() throws Exception {
    List<URL> path = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      path.add(Path.of(entry).toUri().toURL());
    }
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir);
        URLClassLoader otherApplication =
            new URLClassLoader(path.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      Class<?> theirs = otherApplication.loadClass(EclipseStoreKvStore.class.getName());
      assertThat(theirs).isNotSameAs(EclipseStoreKvStore.class);
      Method open = theirs.getMethod("open", Path.class);
      assertThatThrownBy(() -> open.invoke(null, dir))
          .isInstanceOf(InvocationTargetException.class)
          .cause()
          .hasMessageContaining("already open in this JVM")
          .extracting(e -> e.getClass().getName())
          .isEqualTo(KvStoreException.class.getName());
      assertThat(probe()).startsWith("REFUSED").contains("in use by another process");
      assertThat(store.get(dev.kvmq.store.Key.of("k"))).isEmpty();
    }
    assertThat(System.getProperties().keySet())
        .as("closing the store unregisters its directory")
        .noneMatch(k -> k.toString().startsWith(DirectoryLock.HELD_PROPERTY));
    assertThat(probe()).isEqualTo("OPENED");
  }

  private String probe() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                List.of(
                    java,
                    "-Xmx128m",
                    "-cp",
                    System.getProperty("java.class.path"),
                    OpenProbe.class.getName(),
                    dir.toString()))
            .redirectErrorStream(false)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return out.lines()
        .filter(l -> l.startsWith("OPENED") || l.startsWith("REFUSED"))
        .findFirst()
        .orElse(out);
  }
}
