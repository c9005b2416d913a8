package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.KvStoreException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
