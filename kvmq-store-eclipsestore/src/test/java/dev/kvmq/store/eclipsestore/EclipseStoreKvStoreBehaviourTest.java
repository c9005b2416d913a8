package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.Seeds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.eclipse.store.storage.types.StorageDataFileEvaluator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the contract does not cover: persistence, ownership, write sizes, flushes. */
class EclipseStoreKvStoreBehaviourTest {

  @TempDir Path dir;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static EclipseStoreKvStore fast(Path dir) {
    return EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE).open();
  }

  @Test
  void reopenKeepsKeysValuesAndVersionstampsAndVersionstampsKeepGrowing() {
    long deleteVs;
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      store.commit(
          AtomicOperation.builder()
              .set(Key.of("a"), bytes("1"))
              .set(Key.of("b"), bytes("2"))
              .build());
      store.commit(AtomicOperation.builder().set(Key.of("c"), bytes("3")).build());
      deleteVs = store.commit(AtomicOperation.builder().delete(Key.of("b")).build()).versionstamp();
    }
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      assertThat(store.list(KeyRange.all()))
          .extracting(KvEntry::key)
          .containsExactly(Key.of("a"), Key.of("c"));
      assertThat(store.get(Key.of("a")).orElseThrow().versionstamp()).isEqualTo(1);
      assertThat(store.get(Key.of("c")).orElseThrow().versionstamp()).isEqualTo(2);
      CommitResult next =
          store.commit(AtomicOperation.builder().set(Key.of("d"), bytes("4")).build());
      assertThat(next.versionstamp()).isGreaterThan(deleteVs);
    }
  }

  @Test
  void aSecondOpenInTheSameJvmFailsAtOnceAndCloseReleasesTheDirectory() {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      store.commit(AtomicOperation.builder().set(Key.of("k"), bytes("v")).build());
      assertThatThrownBy(() -> EclipseStoreKvStore.open(dir))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("already open in this JVM");
      // the failed opener left the first store working
      assertThat(store.get(Key.of("k"))).isPresent();
    }
    try (EclipseStoreKvStore again = EclipseStoreKvStore.open(dir)) {
      assertThat(again.get(Key.of("k"))).isPresent();
    }
  }

  @Test
  void aDirectoryHoldingAFileIsRefusedWithAClearError() throws Exception {
    Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
    assertThatThrownBy(() -> EclipseStoreKvStore.open(file))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining("not-a-dir");
  }

  @Test
  void bytesWrittenPerCommitDoNotGrowWithTheNumberOfKeys() {
    try (EclipseStoreKvStore store = fast(dir)) {
      long[] small = writeSizes(store, 1_000);
      long[] large = writeSizes(store, 20_000);
      // A commit rewrites the page of the key (at most 2 KiB by default) and a few small
      // objects; the 20k keys hold ~2.6 MB, so "the whole map" would be a thousand times more.
      for (int i = 0; i < 3; i++) {
        assertThat(small[i]).as("op %d at 1k keys", i).isLessThan(3_100);
        assertThat(large[i]).as("op %d at 20k keys", i).isLessThan(3_100);
      }
    }
  }

  /** Grows the store to {@code n} keys, then returns the bytes of one add, change, delete. */
  private static long[] writeSizes(EclipseStoreKvStore store, int n) {
    long have = store.count(KeyRange.prefix(Key.of("fill")));
    List<AtomicOperation> ops = new ArrayList<>();
    for (long i = have; i < n; i++) {
      ops.add(AtomicOperation.builder().set(Key.of("fill", i), new byte[100]).build());
      if (ops.size() == 1_000) {
        store.commitAll(ops);
        ops.clear();
      }
    }
    store.commitAll(ops);
    Key k = Key.of("probe", (long) n);
    long[] sizes = new long[3];
    long before = store.bytesWritten();
    store.commit(AtomicOperation.builder().set(k, new byte[100]).build());
    sizes[0] = store.bytesWritten() - before;
    before = store.bytesWritten();
    store.commit(AtomicOperation.builder().set(k, new byte[100]).build());
    sizes[1] = store.bytesWritten() - before;
    before = store.bytesWritten();
    store.commit(AtomicOperation.builder().delete(k).build());
    sizes[2] = store.bytesWritten() - before;
    return sizes;
  }

  @Test
  void fsyncModeFlushesEveryCommitAndABatchOnce() {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      assertThat(store.durability()).isEqualTo(Durability.FSYNC);
      long before = store.deviceFlushes();
      store.commit(AtomicOperation.builder().set(Key.of("one"), bytes("v")).build());
      long one = store.deviceFlushes() - before;
      assertThat(one).isGreaterThanOrEqualTo(2); // data file, then transactions log
      List<AtomicOperation> ops = new ArrayList<>();
      for (long i = 0; i < 200; i++) {
        ops.add(AtomicOperation.builder().set(Key.of("batch", i), bytes("v")).build());
      }
      before = store.deviceFlushes();
      assertThat(store.commitAll(ops)).allMatch(CommitResult::ok);
      assertThat(store.deviceFlushes() - before).isLessThanOrEqualTo(one + 2);
    }
  }

  @Test
  void processCrashSafeModeNeverFlushes() {
    try (EclipseStoreKvStore store = fast(dir)) {
      store.commit(AtomicOperation.builder().set(Key.of("k"), bytes("v")).build());
      assertThat(store.deviceFlushes()).isZero();
      assertThat(store.bytesWritten()).isPositive();
    }
  }

  @Test
  void concurrentCommittersAllLandAndSurviveAReopen() throws Exception {
    int threads = 8;
    int each = 100;
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          long thread = t;
          futures.add(
              pool.submit(
                  () -> {
                    for (long i = 0; i < each; i++) {
                      assertThat(
                              store
                                  .commit(
                                      AtomicOperation.builder()
                                          .checkAbsent(Key.of("c", thread, i))
                                          .set(Key.of("c", thread, i), bytes("v"))
                                          .build())
                                  .ok())
                          .isTrue();
                    }
                    return null;
                  }));
        }
        for (Future<?> f : futures) {
          f.get(2, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
    }
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      assertThat(store.count(KeyRange.prefix(Key.of("c")))).isEqualTo((long) threads * each);
    }
  }

  @Test
  void randomOperationsWithReopensMatchTheInMemoryModel() {
    Seeds.forEach(
        "eclipsestore matches the model across reopens",
        6,
        100,
        random -> {
          Path d = dir.resolve("model-" + random.nextLong());
          KvStore model = new InMemoryKvStore();
          EclipseStoreKvStore store = fast(d);
          try {
            for (int round = 0; round < 40; round++) {
              List<AtomicOperation> batch = new ArrayList<>();
              int size = 1 + random.nextInt(6);
              for (int i = 0; i < size; i++) {
                batch.add(randomOperation(random, model));
              }
              List<CommitResult> expected = model.commitAll(batch);
              List<CommitResult> actual = store.commitAll(batch);
              assertThat(actual)
                  .extracting(CommitResult::ok)
                  .containsExactlyElementsOf(expected.stream().map(CommitResult::ok).toList());
              if (random.nextInt(8) == 0) {
                store.close();
                store = fast(d);
              }
              assertSameContent(store, model);
            }
            store.close();
            store = fast(d);
            assertSameContent(store, model);
          } finally {
            store.close();
            model.close();
          }
        });
  }

  private static AtomicOperation randomOperation(SplittableRandom random, KvStore model) {
    AtomicOperation.Builder b = AtomicOperation.builder();
    List<Key> used = new ArrayList<>();
    int writes = 1 + random.nextInt(3);
    for (int i = 0; i < writes; i++) {
      Key k = Key.of("m", (long) random.nextInt(20));
      if (used.contains(k)) {
        continue;
      }
      used.add(k);
      if (random.nextInt(3) == 0) {
        b.delete(k);
      } else {
        byte[] v = new byte[random.nextInt(40)];
        random.nextBytes(v);
        b.set(k, v);
      }
    }
    if (random.nextInt(4) == 0) {
      Key k = Key.of("m", (long) random.nextInt(20));
      // checks that hold against the model's current state, or not, by chance
      b.check(
          k,
          model.get(k).map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT)
              + (random.nextInt(3) == 0 ? 1 : 0));
    }
    return b.build();
  }

  private static void assertSameContent(KvStore store, KvStore model) {
    List<KvEntry> got = store.list(KeyRange.all());
    List<KvEntry> want = model.list(KeyRange.all());
    assertThat(got)
        .extracting(KvEntry::key)
        .containsExactlyElementsOf(want.stream().map(KvEntry::key).toList());
    for (int i = 0; i < got.size(); i++) {
      assertThat(got.get(i).value()).isEqualTo(want.get(i).value());
    }
  }

  @Test
  void theDirectoryStaysBoundedUnderASteadyFlowOfJobs() throws Exception {
    try (EclipseStoreKvStore store =
        EclipseStoreKvStore.builder(dir)
            .durability(Durability.PROCESS_CRASH_SAFE)
            .compactEvery(1L << 20)
            .open()) {
      byte[] record = new byte[200];
      long maxSize = 0;
      for (long id = 0; id < 30_000; id++) {
        store.commit(
            AtomicOperation.builder()
                .set(Key.of("job", id), record)
                .set(Key.of("ready", id), new byte[0])
                .build());
        store.commit(
            AtomicOperation.builder()
                .delete(Key.of("job", id))
                .delete(Key.of("ready", id))
                .build());
        if (id % 1_000 == 0) {
          maxSize = Math.max(maxSize, sizeOf(dir));
        }
      }
      // ~30 MB written in all (without housekeeping the directory would be that large); a
      // housekeeping cycle starts every 1 MiB written and runs in time-budgeted slices
      // between commits, so how far it lags behind a flat-out writer depends on the machine
      // (under 12 MB in most runs here, 14.0 MB in one): the directory stays well
      // below what was written
      assertThat(store.bytesWritten()).isGreaterThan(25_000_000);
      assertThat(maxSize)
          .as("largest directory size while writing")
          .isLessThan(store.bytesWritten() * 2 / 3);
      // A full pass leaves the data files (*.dat) at 0.2 to 1.0 MB in runs here; a CI run
      // saw the whole directory at 8.08 MB, so the bound is one data file's maximum size
      // (8 MiB) plus slack, still far below the ~45 MB written. The transactions log (*.sft,
      // 3.2 MB here) is left out: EclipseStore compacts it only at its maximum size (see
      // docs/embedded-store.md, Housekeeping).
      store.compact();
      assertThat(sizeOf(dir, ".dat"))
          .as("data files after compact(), %d bytes written", store.bytesWritten())
          .isLessThanOrEqualTo(
              StorageDataFileEvaluator.Defaults.defaultFileMaximumSize() + 1_000_000L);
      // the cycles ran on the committer thread, in slices
      assertThat(store.housekeepingCycles()).isPositive();
      assertThat(store.housekeepingSlices()).isGreaterThanOrEqualTo(2 * store.housekeepingCycles());
    }
  }

  private static long sizeOf(Path dir) throws java.io.IOException {
    return sizeOf(dir, "");
  }

  private static long sizeOf(Path dir, String suffix) throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(suffix))
          .mapToLong(p -> p.toFile().length())
          .sum();
    }
  }

  @Test
  void aListenerThatCommitsIsRefusedInsteadOfDeadlocking() throws Exception {
    try (EclipseStoreKvStore store = fast(dir)) {
      java.util.concurrent.CompletableFuture<Throwable> seen =
          new java.util.concurrent.CompletableFuture<>();
      KvStore.Subscription sub =
          store.subscribe(
              Key.of("w"),
              () -> {
                try {
                  store.commit(AtomicOperation.builder().set(Key.of("x"), bytes("v")).build());
                  seen.complete(null);
                } catch (RuntimeException e) {
                  seen.complete(e);
                }
              });
      try {
        store.commit(AtomicOperation.builder().set(Key.of("w", 1L), bytes("v")).build());
        assertThat(seen.get(10, TimeUnit.SECONDS))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("change listener must not commit");
      } finally {
        sub.close();
      }
      assertThat(store.get(Key.of("x"))).isEmpty();
    }
  }

  @Test
  void badOptionsAreRefusedWithTheirName() {
    assertThatThrownBy(() -> EclipseStoreKvStore.builder(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("directory");
    EclipseStoreKvStore.Builder b = EclipseStoreKvStore.builder(dir);
    assertThatThrownBy(() -> b.durability(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("durability");
    assertThatThrownBy(() -> b.housekeeping(Duration.ZERO, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("interval");
    assertThatThrownBy(() -> b.housekeeping(Duration.ofMinutes(1), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("interval");
    assertThatThrownBy(() -> b.housekeeping(Duration.ofSeconds(1), Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("budget");
    assertThatThrownBy(() -> b.transactionsLogMaxBytes(10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("transactions log");
    assertThatThrownBy(() -> b.compactEvery(1000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("compactEvery");
    assertThatThrownBy(() -> b.maxBatch(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxBatch");
  }
}
