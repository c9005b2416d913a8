package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link EclipseStoreKvStore.Builder#threadFactory}: where the committer thread comes from. */
class EclipseStoreThreadFactoryTest {

  @TempDir Path dir;

  private static EclipseStoreKvStore.Builder fast(Path dir) {
    return EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE);
  }

  @Test
  void theCommitterComesFromTheFactoryAndCallsTheListeners() throws Exception {
    List<Thread> made = new CopyOnWriteArrayList<>();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "app-thread-" + made.size());
          t.setDaemon(true);
          made.add(t);
          return t;
        };
    AtomicReference<Thread> listenerThread = new AtomicReference<>();
    Thread committer;
    try (EclipseStoreKvStore store = fast(dir).threadFactory(factory).open()) {
      assertThat(made).hasSize(1);
      committer = made.get(0);
      assertThat(committer.getName()).isEqualTo("app-thread-0");
      assertThat(committer.isAlive()).isTrue();
      KvStore.Subscription sub =
          store.subscribe(Key.of("k"), () -> listenerThread.set(Thread.currentThread()));
      try {
        assertThat(
                store
                    .commit(
                        AtomicOperation.builder()
                            .set(Key.of("k", 1L), "v".getBytes(StandardCharsets.UTF_8))
                            .build())
                    .ok())
            .isTrue();
        // listeners run on the committer thread, after the commit; poll with a deadline
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (listenerThread.get() == null && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        assertThat(listenerThread.get()).isSameAs(committer);
      } finally {
        sub.close();
      }
      assertThat(made).as("one thread for the store's lifetime").hasSize(1);
    }
    assertThat(committer.isAlive()).as("close() stops the committer").isFalse();
  }

  @Test
  void withoutAFactoryTheCommitterIsADaemonNamedAfterTheDirectory() {
    try (EclipseStoreKvStore store = fast(dir.resolve("named")).open()) {
      assertThat(store.directory().getFileName()).hasToString("named");
      Thread committer =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().equals("kvmq-eclipsestore-committer named"))
              .findFirst()
              .orElseThrow();
      assertThat(committer.isDaemon()).isTrue();
    }
  }

  @Test
  void aFactoryThatMakesNoThreadFailsTheOpenAndReleasesTheDirectory() {
    assertThatThrownBy(() -> fast(dir).threadFactory(r -> null).open())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "the thread factory made no committer thread for " + dir.toAbsolutePath());
    try (EclipseStoreKvStore store = fast(dir).open()) {
      assertThat(store.get(Key.of("k"))).isEmpty();
    }
  }

  @Test
  void whatTheFactoryThrowsIsThrownAsItIsAndTheDirectoryIsReleased() {
    IllegalStateException refused = new IllegalStateException("no threads during shutdown");
    assertThatThrownBy(
            () ->
                fast(dir)
                    .threadFactory(
                        r -> {
                          throw refused;
                        })
                    .open())
        .isSameAs(refused);
    try (EclipseStoreKvStore store = fast(dir).open()) {
      assertThat(store.get(Key.of("k"))).isEmpty();
    }
  }
}
