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
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The page layout: entries packed into pages, pages filled, split off, merged and dropped, and what
 * survives a reopen. Every store here uses 256- or 512-byte pages so that a few keys span many
 * pages.
 */
class EclipseStorePagesTest {

  @TempDir Path dir;

  private EclipseStoreKvStore open(int pageBytes) {
    return EclipseStoreKvStore.builder(dir)
        .durability(Durability.PROCESS_CRASH_SAFE)
        .pageBytes(pageBytes)
        .open();
  }

  private static AtomicOperation set(Key k, byte[] v) {
    return AtomicOperation.builder().set(k, v).build();
  }

  private static byte[] filled(int length, int b) {
    byte[] v = new byte[length];
    Arrays.fill(v, (byte) b);
    return v;
  }

  @Test
  void keysArePackedManyToAPageAndEmptiedPagesAreDropped() {
    try (EclipseStoreKvStore store = open(512)) {
      List<AtomicOperation> ops = new ArrayList<>();
      for (long i = 0; i < 100; i++) {
        ops.add(set(Key.of("k", i), filled(20, 1))); // ~50 bytes packed: ~10 per page
      }
      store.commitAll(ops);
      int pages = store.pageCount();
      assertThat(pages).isBetween(8, 15);
      List<AtomicOperation> deletes = new ArrayList<>();
      for (long i = 0; i < 100; i++) {
        deletes.add(AtomicOperation.builder().delete(Key.of("k", i)).build());
      }
      store.commitAll(deletes);
      assertThat(store.pageCount()).isZero();
      assertThat(store.count(KeyRange.all())).isZero();
    }
    try (EclipseStoreKvStore store = open(512)) {
      assertThat(store.pageCount()).isZero();
      store.commit(set(Key.of("again"), filled(5, 2)));
      assertThat(store.get(Key.of("again")).orElseThrow().value()).isEqualTo(filled(5, 2));
    }
  }

  @Test
  void aValueThatOutgrowsItsPageMovesAndKeepsItsNeighbours() {
    long grownVs;
    try (EclipseStoreKvStore store = open(512)) {
      List<AtomicOperation> ops = new ArrayList<>();
      for (long i = 0; i < 8; i++) {
        ops.add(set(Key.of("k", i), filled(30, (int) i)));
      }
      store.commitAll(ops); // all eight share one page (8 x ~55 bytes)
      assertThat(store.pageCount()).isEqualTo(1);
      // key 3 grows to 200 bytes: its page can't hold it any more
      grownVs = store.commit(set(Key.of("k", 3L), filled(200, 99))).versionstamp();
      assertThat(store.pageCount()).isEqualTo(2);
      assertContent(store, grownVs);
    }
    try (EclipseStoreKvStore store = open(512)) {
      assertContent(store, grownVs);
    }
  }

  private static void assertContent(EclipseStoreKvStore store, long grownVs) {
    List<KvEntry> all = store.list(KeyRange.all());
    assertThat(all)
        .extracting(KvEntry::key)
        .containsExactly(
            Key.of("k", 0L),
            Key.of("k", 1L),
            Key.of("k", 2L),
            Key.of("k", 3L),
            Key.of("k", 4L),
            Key.of("k", 5L),
            Key.of("k", 6L),
            Key.of("k", 7L));
    for (KvEntry e : all) {
      long i = (Long) e.key().parts().get(1);
      if (i == 3) {
        assertThat(e.value()).isEqualTo(filled(200, 99));
        assertThat(e.versionstamp()).isEqualTo(grownVs);
      } else {
        assertThat(e.value()).isEqualTo(filled(30, (int) i));
        assertThat(e.versionstamp())
            .isEqualTo(i + 1); // one versionstamp per operation of the commitAll
      }
    }
  }

  @Test
  void anEntryLargerThanAPageGetsAPageOfItsOwnAndSurvivesAReopen() {
    byte[] big = new byte[10_000];
    new SplittableRandom(7).nextBytes(big);
    try (EclipseStoreKvStore store = open(256)) {
      store.commit(set(Key.of("small"), filled(10, 1)));
      store.commit(set(Key.of("big"), big));
      store.commit(set(Key.of("small2"), filled(10, 2)));
      assertThat(store.pageCount()).isEqualTo(2); // the two small ones share a page
    }
    try (EclipseStoreKvStore store = open(256)) {
      assertThat(store.get(Key.of("big")).orElseThrow().value()).isEqualTo(big);
      assertThat(store.get(Key.of("small2")).orElseThrow().value()).isEqualTo(filled(10, 2));
      // shrinking the big value keeps it in its own page, alone
      store.commit(set(Key.of("big"), filled(3, 3)));
      assertThat(store.get(Key.of("big")).orElseThrow().value()).isEqualTo(filled(3, 3));
    }
  }

  @Test
  void aPageUnderAQuarterFullMergesIntoThePageNewKeysGoTo() {
    try (EclipseStoreKvStore store = open(512)) {
      List<AtomicOperation> ops = new ArrayList<>();
      for (long i = 0; i < 40; i++) {
        ops.add(set(Key.of("old", i), filled(30, 1))); // ~9 per page: 5 pages
      }
      store.commitAll(ops);
      store.commit(set(Key.of("new"), filled(30, 2))); // the page new keys go to has room
      int before = store.pageCount();
      // empty the first page down to one key: it merges into the page new keys go to
      List<AtomicOperation> deletes = new ArrayList<>();
      for (long i = 1; i < 9; i++) {
        deletes.add(AtomicOperation.builder().delete(Key.of("old", i)).build());
      }
      store.commitAll(deletes);
      assertThat(store.pageCount()).isEqualTo(before - 1);
    }
    try (EclipseStoreKvStore store = open(512)) {
      assertThat(store.count(KeyRange.all())).isEqualTo(40 - 8 + 1);
      assertThat(store.get(Key.of("old", 0L)).orElseThrow().value()).isEqualTo(filled(30, 1));
      assertThat(store.get(Key.of("new")).orElseThrow().value()).isEqualTo(filled(30, 2));
    }
  }

  @Test
  void randomOperationsOnSmallPagesMatchTheInMemoryModelAcrossReopens() {
    Seeds.forEach(
        "pages match the model across reopens",
        8,
        200,
        random -> {
          Path d = dir.resolve("model-" + random.nextLong());
          KvStore model = new InMemoryKvStore();
          EclipseStoreKvStore store =
              EclipseStoreKvStore.builder(d)
                  .durability(Durability.PROCESS_CRASH_SAFE)
                  .pageBytes(256)
                  .open();
          try {
            for (int round = 0; round < 60; round++) {
              List<AtomicOperation> batch = new ArrayList<>();
              int size = 1 + random.nextInt(8);
              for (int i = 0; i < size; i++) {
                batch.add(randomOperation(random, model));
              }
              List<CommitResult> expected = model.commitAll(batch);
              List<CommitResult> actual = store.commitAll(batch);
              assertThat(actual)
                  .extracting(CommitResult::ok)
                  .containsExactlyElementsOf(expected.stream().map(CommitResult::ok).toList());
              if (random.nextInt(10) == 0) {
                store.close();
                store =
                    EclipseStoreKvStore.builder(d)
                        .durability(Durability.PROCESS_CRASH_SAFE)
                        .pageBytes(random.nextBoolean() ? 256 : 1024)
                        .open(); // page size may change between opens
              }
              assertSameContent(store, model);
            }
          } finally {
            store.close();
            model.close();
          }
        });
  }

  private static AtomicOperation randomOperation(SplittableRandom random, KvStore model) {
    AtomicOperation.Builder b = AtomicOperation.builder();
    List<Key> used = new ArrayList<>();
    int writes = 1 + random.nextInt(4);
    for (int i = 0; i < writes; i++) {
      Key k = Key.of("m", (long) random.nextInt(60));
      if (used.contains(k)) {
        continue;
      }
      used.add(k);
      if (random.nextInt(3) == 0) {
        b.delete(k);
      } else {
        // mostly small values, sometimes one larger than half a page or than a page
        int length =
            switch (random.nextInt(10)) {
              case 0 -> 130 + random.nextInt(300);
              case 1, 2 -> random.nextInt(90);
              default -> random.nextInt(30);
            };
        byte[] v = new byte[length];
        random.nextBytes(v);
        b.set(k, v);
      }
    }
    if (random.nextInt(4) == 0) {
      Key k = Key.of("m", (long) random.nextInt(60));
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
      assertThat(got.get(i).value())
          .as("value of %s", got.get(i).key())
          .isEqualTo(want.get(i).value());
    }
  }

  @Test
  void aPageWrittenToTheDataFileWithoutItsTransactionsEntryIsDroppedOnReopen() throws IOException {
    // What a kill in the middle of a page rewrite leaves: bytes at the end of the data file
    // that the transactions log does not cover. The reopen must ignore them.
    List<KvEntry> before;
    try (EclipseStoreKvStore store = open(512)) {
      for (long i = 0; i < 50; i++) {
        store.commit(set(Key.of("k", i), filled(40, (int) i)));
      }
      before = store.list(KeyRange.all());
    }
    Path head = lastDataFile();
    long length = Files.size(head);
    byte[] torn = new byte[700];
    new SplittableRandom(3).nextBytes(torn);
    Files.write(head, torn, StandardOpenOption.APPEND);
    try (EclipseStoreKvStore store = open(512)) {
      List<KvEntry> after = store.list(KeyRange.all());
      assertThat(after)
          .extracting(KvEntry::key)
          .containsExactlyElementsOf(before.stream().map(KvEntry::key).toList());
      for (int i = 0; i < after.size(); i++) {
        assertThat(after.get(i).value()).isEqualTo(before.get(i).value());
        assertThat(after.get(i).versionstamp()).isEqualTo(before.get(i).versionstamp());
      }
      assertThat(store.commit(set(Key.of("k", 0L), filled(3, 3))).ok()).isTrue();
    }
    assertThat(Files.size(head)).isGreaterThanOrEqualTo(length);
    try (EclipseStoreKvStore store = open(512)) {
      assertThat(store.get(Key.of("k", 0L)).orElseThrow().value()).isEqualTo(filled(3, 3));
      assertThat(store.count(KeyRange.all())).isEqualTo(50);
    }
  }

  private Path lastDataFile() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("channel_0"))) {
      return files
          .filter(p -> p.getFileName().toString().endsWith(".dat"))
          .max((a, b) -> Long.compare(fileNumber(a), fileNumber(b)))
          .orElseThrow();
    }
  }

  private static long fileNumber(Path p) {
    String n = p.getFileName().toString();
    return Long.parseLong(n.substring(n.lastIndexOf('_') + 1, n.length() - 4));
  }

  @Test
  void aDirectoryOfTheOldNodePerKeyLayoutIsRefusedWithAClearError() throws IOException {
    // format 1's type dictionary names the Node class, which no longer exists
    Files.writeString(
        dir.resolve("PersistenceTypeDictionary.ptd"),
        "00000000000001000011 dev.kvmq.store.eclipsestore.Node{\n  [byte] data,\n}\n");
    assertThatThrownBy(() -> open(512))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining("format 1")
        .hasMessageContaining("move the directory away");
    // the refusal released the directory
    Files.delete(dir.resolve("PersistenceTypeDictionary.ptd"));
    try (EclipseStoreKvStore store = open(512)) {
      assertThat(store.count(KeyRange.all())).isZero();
    }
  }

  @Test
  void badPageAndSliceSizesAreRefused() {
    EclipseStoreKvStore.Builder b = EclipseStoreKvStore.builder(dir);
    assertThatThrownBy(() -> b.pageBytes(100))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pageBytes");
    assertThatThrownBy(() -> b.pageBytes(2 << 20))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pageBytes");
    assertThatThrownBy(() -> b.compactSlice(java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("compactSlice");
    assertThatThrownBy(() -> b.compactSlice(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("budget");
  }
}
