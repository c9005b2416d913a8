package dev.kvmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link KvStore} passes. A store's test extends this class and says how to open
 * a fresh, empty store; every test then runs against it.
 *
 * <pre>{@code
 * class MyStoreTest extends KvStoreContract {
 *   @Override protected KvStore openStore() { return new MyStore(tempDir); }
 * }
 * }</pre>
 *
 * <p>Shipped in the kernel's test jar ({@code <type>test-jar</type>}).
 */
public abstract class KvStoreContract {

  /** The store under test, opened fresh and empty before each test. */
  protected KvStore store;

  /**
   * Opens a fresh, empty store. Called before every test.
   *
   * @return the store under test
   * @throws Exception if the store can't be opened
   */
  protected abstract KvStore openStore() throws Exception;

  /**
   * Releases what {@link #openStore()} made, after the store is closed. Override to delete
   * directories or drop schemas.
   *
   * @throws Exception if cleaning up fails
   */
  protected void cleanUp() throws Exception {}

  /**
   * Whether the store reads all the ranges of a {@link KvStore#firstEntries} call at one consistent
   * state (the SPI allows reading each range at its own). Override to return true and the contract
   * checks it.
   *
   * @return true if {@code firstEntries} reads at one state
   */
  protected boolean firstEntriesAtOneState() {
    return false;
  }

  /**
   * What the store answers to {@link KvStore#commitsOneAtATime()}: a worker lets outcomes ride in
   * its claims only where it is true, so a store's answer is part of its contract. Override to
   * return true for a store that commits one at a time.
   *
   * @return the answer expected
   */
  protected boolean commitsOneAtATime() {
    return false;
  }

  @Test
  void saysWhetherItCommitsOneAtATime() {
    assertThat(store.commitsOneAtATime()).isEqualTo(commitsOneAtATime());
  }

  @BeforeEach
  void openFreshStore() throws Exception {
    store = openStore();
  }

  @AfterEach
  void closeStore() throws Exception {
    try {
      store.close();
    } finally {
      cleanUp();
    }
  }

  // ---- helpers

  /** Sets one key and returns the commit's versionstamp. */
  protected long set(Key key, String value) {
    CommitResult r = store.commit(AtomicOperation.builder().set(key, bytes(value)).build());
    assertThat(r.ok()).isTrue();
    return r.versionstamp();
  }

  protected static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  protected static String string(KvEntry e) {
    return new String(e.value(), StandardCharsets.UTF_8);
  }

  private static List<Key> keysOf(List<KvEntry> entries) {
    return entries.stream().map(KvEntry::key).toList();
  }

  // ---- get, set, delete

  @Test
  void getOfAnAbsentKeyIsEmpty() {
    assertThat(store.get(Key.of("nothing", "here"))).isEmpty();
  }

  @Test
  void setThenGetReturnsValueAndVersionstamp() {
    long vs = set(Key.of("a", 1L), "one");
    KvEntry e = store.get(Key.of("a", 1L)).orElseThrow();
    assertThat(string(e)).isEqualTo("one");
    assertThat(e.versionstamp()).isEqualTo(vs).isPositive();
    assertThat(e.key()).isEqualTo(Key.of("a", 1L));
  }

  @Test
  void emptyValuesAreValues() {
    store.commit(AtomicOperation.builder().set(Key.of("empty"), new byte[0]).build());
    assertThat(store.get(Key.of("empty")).orElseThrow().valueLength()).isZero();
  }

  @Test
  void deleteRemovesAndDeletingAnAbsentKeyStillCommits() {
    set(Key.of("k"), "v");
    assertThat(store.commit(AtomicOperation.builder().delete(Key.of("k")).build()).ok()).isTrue();
    assertThat(store.get(Key.of("k"))).isEmpty();
    assertThat(store.commit(AtomicOperation.builder().delete(Key.of("k")).build()).ok()).isTrue();
  }

  @Test
  void valuesAreCopiedNotShared() {
    byte[] value = bytes("original");
    store.commit(AtomicOperation.builder().set(Key.of("k"), value).build());
    value[0] = 'X';
    byte[] read = store.get(Key.of("k")).orElseThrow().value();
    read[1] = 'Y';
    assertThat(string(store.get(Key.of("k")).orElseThrow())).isEqualTo("original");
  }

  @Test
  void largestValueRoundTrips() {
    byte[] big = new byte[KvStore.MAX_VALUE_BYTES];
    new Random(7).nextBytes(big);
    store.commit(AtomicOperation.builder().set(Key.of("big"), big).build());
    assertThat(store.get(Key.of("big")).orElseThrow().value()).isEqualTo(big);
  }

  @Test
  void getManyKeepsOrderAndReportsAbsentKeys() {
    set(Key.of("x", 1L), "1");
    set(Key.of("x", 3L), "3");
    List<Optional<KvEntry>> got =
        store.getMany(List.of(Key.of("x", 3L), Key.of("x", 2L), Key.of("x", 1L), Key.of("x", 3L)));
    assertThat(got).hasSize(4);
    assertThat(string(got.get(0).orElseThrow())).isEqualTo("3");
    assertThat(got.get(1)).isEmpty();
    assertThat(string(got.get(2).orElseThrow())).isEqualTo("1");
    assertThat(string(got.get(3).orElseThrow())).isEqualTo("3");
  }

  // ---- order

  @Test
  void keysListInTheOneTotalOrderAcrossTypes() {
    List<Key> expected =
        List.of(
            Key.of("t", new byte[0]),
            Key.of("t", new byte[] {0}),
            Key.of("t", new byte[] {0, 0}),
            Key.of("t", new byte[] {1}),
            Key.of("t", new byte[] {(byte) 0xFF}),
            Key.of("t", ""),
            Key.of("t", "\0"),
            Key.of("t", "A"),
            Key.of("t", "a"),
            Key.of("t", "a", 5L),
            Key.of("t", "a\0"),
            Key.of("t", "b"),
            Key.of("t", "\uFFFF"),
            Key.of("t", "\uD83D\uDE00"),
            Key.of("t", Long.MIN_VALUE),
            Key.of("t", -1L),
            Key.of("t", 0L),
            Key.of("t", 0L, "x"),
            Key.of("t", 1L),
            Key.of("t", Long.MAX_VALUE),
            Key.of("t", false),
            Key.of("t", true));
    List<Key> shuffled = new ArrayList<>(expected);
    Collections.shuffle(shuffled, new Random(42));
    for (Key k : shuffled) {
      set(k, k.toString());
    }
    assertThat(keysOf(store.list(KeyRange.prefix(Key.of("t")))))
        .containsExactlyElementsOf(expected);
    List<Key> reversed = new ArrayList<>(expected);
    Collections.reverse(reversed);
    assertThat(keysOf(store.list(KeyRange.prefix(Key.of("t")), 1000, true)))
        .containsExactlyElementsOf(reversed);
  }

  @Test
  void randomKeysListInKeyCompareOrder() {
    Random random = new Random(1234);
    List<Key> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(Key.of("r", randomPart(random), randomPart(random)));
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    keys.stream().distinct().forEach(k -> op.set(k, bytes("v")));
    store.commit(op.build());
    List<Key> expected = keys.stream().distinct().sorted().toList();
    assertThat(keysOf(store.list(KeyRange.prefix(Key.of("r")))))
        .containsExactlyElementsOf(expected);
  }

  private static Object randomPart(Random random) {
    return switch (random.nextInt(4)) {
      case 0 -> {
        byte[] b = new byte[random.nextInt(3)];
        random.nextBytes(b);
        yield b;
      }
      case 1 -> List.of("", "a", "ab", "b", "\0", "é", "z\0z").get(random.nextInt(7));
      case 2 -> (long) (random.nextInt(7) - 3) * (random.nextBoolean() ? 1 : Long.MAX_VALUE / 4);
      default -> random.nextBoolean();
    };
  }

  // ---- list

  @Test
  void prefixListExcludesThePrefixItselfAndOtherPrefixes() {
    set(Key.of("q"), "the prefix itself");
    set(Key.of("q", "a"), "1");
    set(Key.of("q", "a", 1L), "2");
    set(Key.of("q", "b"), "3");
    set(Key.of("qq"), "other");
    set(Key.of("p", "a"), "other");
    assertThat(keysOf(store.list(KeyRange.prefix(Key.of("q")))))
        .containsExactly(Key.of("q", "a"), Key.of("q", "a", 1L), Key.of("q", "b"));
  }

  @Test
  void rangeListIsStartInclusiveEndExclusive() {
    for (long i = 0; i < 10; i++) {
      set(Key.of("n", i), "v" + i);
    }
    assertThat(keysOf(store.list(KeyRange.between(Key.of("n", 3L), Key.of("n", 6L)))))
        .containsExactly(Key.of("n", 3L), Key.of("n", 4L), Key.of("n", 5L));
    assertThat(store.list(KeyRange.between(Key.of("n", 6L), Key.of("n", 3L)))).isEmpty();
  }

  @Test
  void prefixRangeNarrowedByStartAndEnd() {
    for (long i = 0; i < 10; i++) {
      set(Key.of("n", i), "v" + i);
    }
    set(Key.of("o", 0L), "outside");
    KeyRange from7 = KeyRange.prefix(Key.of("n")).from(Key.of("n", 7L));
    assertThat(keysOf(store.list(from7)))
        .containsExactly(Key.of("n", 7L), Key.of("n", 8L), Key.of("n", 9L));
    KeyRange until2 = KeyRange.prefix(Key.of("n")).until(Key.of("n", 2L));
    assertThat(keysOf(store.list(until2))).containsExactly(Key.of("n", 0L), Key.of("n", 1L));
    assertThat(store.count(from7)).isEqualTo(3);
  }

  @Test
  void limitAndReverse() {
    for (long i = 0; i < 10; i++) {
      set(Key.of("n", i), "v" + i);
    }
    KeyRange all = KeyRange.prefix(Key.of("n"));
    assertThat(keysOf(store.list(all, 2, false))).containsExactly(Key.of("n", 0L), Key.of("n", 1L));
    assertThat(keysOf(store.list(all, 2, true))).containsExactly(Key.of("n", 9L), Key.of("n", 8L));
    assertThat(store.list(all, 100, false)).hasSize(10);
  }

  @Test
  void firstEntriesReadTheFirstEntryOfEachRangeInTheirOrder() {
    for (long i = 0; i < 10; i++) {
      set(Key.of("n", i), "v" + i);
    }
    set(Key.of("o", "only"), "o");
    KeyRange all = KeyRange.prefix(Key.of("n"));
    KeyRange from7 = all.from(Key.of("n", 7L));
    KeyRange none = KeyRange.prefix(Key.of("none"));
    KeyRange backwards = KeyRange.between(Key.of("n", 6L), Key.of("n", 3L));
    List<KeyRange> ranges =
        List.of(from7, none, all, KeyRange.prefix(Key.of("o")), backwards, from7);
    List<Optional<KvEntry>> firsts = store.firstEntries(ranges);
    assertThat(firsts).hasSize(6);
    assertThat(firsts.get(0).orElseThrow().key()).isEqualTo(Key.of("n", 7L));
    assertThat(string(firsts.get(0).orElseThrow())).isEqualTo("v7");
    assertThat(firsts.get(1)).isEmpty();
    assertThat(firsts.get(2).orElseThrow().key()).isEqualTo(Key.of("n", 0L));
    assertThat(firsts.get(3).orElseThrow().key()).isEqualTo(Key.of("o", "only"));
    assertThat(firsts.get(4)).isEmpty();
    assertThat(firsts.get(5).orElseThrow().key()).isEqualTo(Key.of("n", 7L));
    for (int i = 0; i < ranges.size(); i++) {
      List<KvEntry> listed = store.list(ranges.get(i), 1, false);
      Optional<KvEntry> first = firsts.get(i);
      assertThat(first.isPresent())
          .as("range %d has a first entry", i)
          .isEqualTo(!listed.isEmpty());
      if (first.isPresent()) {
        assertThat(first.get().key()).isEqualTo(listed.get(0).key());
        assertThat(first.get().value()).isEqualTo(listed.get(0).value());
        assertThat(first.get().versionstamp()).isEqualTo(listed.get(0).versionstamp());
      }
    }
    assertThat(store.firstEntries(List.of())).isEmpty();
    List<KeyRange> withNull = new ArrayList<>(List.of(all));
    withNull.add(null);
    assertThatThrownBy(() -> store.firstEntries(withNull)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.firstEntries(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void countCountsTheRange() {
    for (long i = 0; i < 25; i++) {
      set(Key.of("c", i), "v");
    }
    set(Key.of("d", 0L), "v");
    assertThat(store.count(KeyRange.prefix(Key.of("c")))).isEqualTo(25);
    assertThat(store.count(KeyRange.between(Key.of("c", 5L), Key.of("c", 15L)))).isEqualTo(10);
    assertThat(store.count(KeyRange.prefix(Key.of("none")))).isZero();
    assertThat(store.count(KeyRange.all())).isEqualTo(26);
  }

  // ---- versionstamps and atomic operations

  @Test
  void versionstampsIncreaseStrictlyAndAreSharedWithinACommit() {
    long previous = 0;
    for (int i = 0; i < 20; i++) {
      CommitResult r =
          store.commit(
              AtomicOperation.builder()
                  .set(Key.of("v", "a"), bytes("a" + i))
                  .set(Key.of("v", "b"), bytes("b" + i))
                  .build());
      assertThat(r.versionstamp()).isGreaterThan(previous);
      previous = r.versionstamp();
      assertThat(store.get(Key.of("v", "a")).orElseThrow().versionstamp()).isEqualTo(previous);
      assertThat(store.get(Key.of("v", "b")).orElseThrow().versionstamp()).isEqualTo(previous);
    }
  }

  @Test
  void checkOnVersionstampPassesThenFailsAfterAnotherWrite() {
    long vs = set(Key.of("k"), "1");
    assertThat(
            store
                .commit(
                    AtomicOperation.builder()
                        .check(Key.of("k"), vs)
                        .set(Key.of("k"), bytes("2"))
                        .build())
                .ok())
        .isTrue();
    CommitResult stale =
        store.commit(
            AtomicOperation.builder().check(Key.of("k"), vs).set(Key.of("k"), bytes("3")).build());
    assertThat(stale.ok()).isFalse();
    assertThat(stale.versionstamp()).isZero();
    assertThat(string(store.get(Key.of("k")).orElseThrow())).isEqualTo("2");
  }

  @Test
  void failedCheckAppliesNothing() {
    set(Key.of("a"), "a0");
    long bVs = set(Key.of("b"), "b0");
    set(Key.of("b"), "b1");
    CommitResult r =
        store.commit(
            AtomicOperation.builder()
                .check(Key.of("b"), bVs)
                .set(Key.of("a"), bytes("a1"))
                .delete(Key.of("b"))
                .set(Key.of("c"), bytes("c1"))
                .build());
    assertThat(r.ok()).isFalse();
    assertThat(string(store.get(Key.of("a")).orElseThrow())).isEqualTo("a0");
    assertThat(string(store.get(Key.of("b")).orElseThrow())).isEqualTo("b1");
    assertThat(store.get(Key.of("c"))).isEmpty();
  }

  @Test
  void absenceCheck() {
    Key k = Key.of("once");
    assertThat(
            store.commit(AtomicOperation.builder().checkAbsent(k).set(k, bytes("1")).build()).ok())
        .isTrue();
    assertThat(
            store.commit(AtomicOperation.builder().checkAbsent(k).set(k, bytes("2")).build()).ok())
        .isFalse();
    assertThat(string(store.get(k).orElseThrow())).isEqualTo("1");
  }

  @Test
  void readOnlyOperationReportsItsChecks() {
    long vs = set(Key.of("k"), "1");
    assertThat(store.commit(AtomicOperation.builder().check(Key.of("k"), vs).build()).ok())
        .isTrue();
    assertThat(store.commit(AtomicOperation.builder().checkAbsent(Key.of("k")).build()).ok())
        .isFalse();
  }

  @Test
  void commitAllAppliesEachOperationOnItsOwnInOrder() {
    long vs = set(Key.of("k"), "0");
    List<CommitResult> results =
        store.commitAll(
            List.of(
                AtomicOperation.builder()
                    .check(Key.of("k"), vs)
                    .set(Key.of("k"), bytes("1"))
                    .build(),
                // sees the first operation's write, so its check on the old versionstamp fails
                AtomicOperation.builder()
                    .check(Key.of("k"), vs)
                    .set(Key.of("k"), bytes("2"))
                    .build(),
                AtomicOperation.builder().set(Key.of("other"), bytes("x")).build()));
    assertThat(results).extracting(CommitResult::ok).containsExactly(true, false, true);
    assertThat(results.get(2).versionstamp()).isGreaterThan(results.get(0).versionstamp());
    assertThat(string(store.get(Key.of("k")).orElseThrow())).isEqualTo("1");
    assertThat(store.get(Key.of("other"))).isPresent();
    assertThat(store.commitAll(List.of())).isEmpty();
  }

  // ---- claim

  /** A claim planner for the tests: index ["idx", n] points at ["rec", n]. */
  private static final class TakeEach implements KvStore.ClaimPlanner {
    final String by;
    final List<List<KvEntry>> indexSeen = new ArrayList<>();
    final List<List<Optional<KvEntry>>> recordsSeen = new ArrayList<>();
    final List<Key> taken = new ArrayList<>();

    TakeEach(String by) {
      this.by = by;
    }

    @Override
    public Key recordKey(Key indexKey) {
      return Key.of("rec", indexKey.getLong(1));
    }

    /**
     * Each record still "ready": checked, marked taken by {@code by}, its index entry deleted. Like
     * the kernel, it plans from the record: an entry read before another claim committed may point
     * at a record that claim already took.
     */
    @Override
    public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
      indexSeen.add(index);
      recordsSeen.add(records);
      taken.clear();
      List<AtomicOperation> ops = new ArrayList<>();
      for (int i = 0; i < index.size(); i++) {
        if (records.get(i).isPresent() && string(records.get(i).get()).equals("ready")) {
          KvEntry r = records.get(i).get();
          ops.add(
              AtomicOperation.builder()
                  .check(r)
                  .set(r.key(), bytes(by))
                  .delete(index.get(i).key())
                  .build());
          taken.add(r.key());
        }
      }
      return ops;
    }
  }

  private void index(int from, int to) {
    for (int n = from; n < to; n++) {
      store.commit(
          AtomicOperation.builder()
              .set(Key.of("idx", (long) n), new byte[0])
              .set(Key.of("rec", (long) n), bytes("ready"))
              .build());
    }
  }

  @Test
  void claimPlansFromTheFirstEntriesAndTheirRecordsThenCommits() {
    index(0, 5);
    store.commit(
        AtomicOperation.builder().delete(Key.of("rec", 1L)).build()); // an entry without its record
    set(Key.of("idz"), "outside the range");
    TakeEach planner = new TakeEach("a");

    List<CommitResult> results = store.claim(KeyRange.prefix(Key.of("idx")), 3, planner);

    assertThat(keysOf(planner.indexSeen.get(planner.indexSeen.size() - 1)))
        .containsExactly(Key.of("idx", 0L), Key.of("idx", 1L), Key.of("idx", 2L));
    List<Optional<KvEntry>> records = planner.recordsSeen.get(planner.recordsSeen.size() - 1);
    assertThat(records).hasSize(3);
    assertThat(records.get(0).map(KvStoreContract::string)).contains("ready");
    assertThat(records.get(1)).isEmpty();
    assertThat(records.get(2).map(KvEntry::key)).contains(Key.of("rec", 2L));
    assertThat(results).hasSize(2).allMatch(CommitResult::ok);
    assertThat(string(store.get(Key.of("rec", 0L)).orElseThrow())).isEqualTo("a");
    assertThat(store.get(Key.of("rec", 2L)).orElseThrow().versionstamp())
        .isEqualTo(results.get(1).versionstamp());
    assertThat(keysOf(store.list(KeyRange.prefix(Key.of("idx")))))
        .containsExactly(Key.of("idx", 1L), Key.of("idx", 3L), Key.of("idx", 4L));

    TakeEach next = new TakeEach("b");
    assertThat(store.claim(KeyRange.prefix(Key.of("idx")), 10, next))
        .hasSize(2)
        .allMatch(CommitResult::ok);
    assertThat(next.taken).containsExactly(Key.of("rec", 3L), Key.of("rec", 4L));
  }

  @Test
  void claimCommitsNothingWhenNothingIsPlannedAndStalePlansFailTheirChecks() {
    index(0, 2);
    List<String> before = store.list(KeyRange.all()).stream().map(KvEntry::toString).toList();
    KvStore.ClaimPlanner nothing =
        new KvStore.ClaimPlanner() {
          @Override
          public Key recordKey(Key indexKey) {
            return Key.of("rec", indexKey.getLong(1));
          }

          @Override
          public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
            return List.of();
          }
        };
    assertThat(store.claim(KeyRange.prefix(Key.of("idx")), 5, nothing)).isEmpty();
    assertThat(store.claim(KeyRange.prefix(Key.of("empty")), 5, nothing)).isEmpty();
    assertThat(store.list(KeyRange.all()).stream().map(KvEntry::toString).toList())
        .as("keys and versionstamps unchanged")
        .isEqualTo(before);

    KvEntry rec = store.get(Key.of("rec", 0L)).orElseThrow();
    set(Key.of("rec", 0L), "changed");
    KvStore.ClaimPlanner stale =
        new KvStore.ClaimPlanner() {
          @Override
          public Key recordKey(Key indexKey) {
            return Key.of("rec", indexKey.getLong(1));
          }

          @Override
          public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
            return List.of(AtomicOperation.builder().check(rec).delete(index.get(0).key()).build());
          }
        };
    assertThat(store.claim(KeyRange.prefix(Key.of("idx")), 1, stale))
        .containsExactly(CommitResult.checkFailed());
    assertThat(store.get(Key.of("idx", 0L))).isPresent();
  }

  // ---- concurrency
  @Test
  void concurrentClaimsTakeEveryEntryExactlyOnce() throws Exception {
    int entries = 120;
    int threads = 4;
    index(0, entries);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<List<Key>> takenBy = new ArrayList<>();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<Key>>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String name = "t" + t;
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  List<Key> mine = new ArrayList<>();
                  while (store.count(KeyRange.prefix(Key.of("idx"))) > 0) {
                    TakeEach planner = new TakeEach(name);
                    List<CommitResult> results =
                        store.claim(KeyRange.prefix(Key.of("idx")), 4, planner);
                    for (int i = 0; i < results.size(); i++) {
                      if (results.get(i).ok()) {
                        mine.add(planner.taken.get(i));
                      }
                    }
                  }
                  return mine;
                }));
      }
      start.countDown();
      for (Future<List<Key>> f : futures) {
        takenBy.add(f.get(2, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }
    List<Key> all = new ArrayList<>();
    takenBy.forEach(all::addAll);
    assertThat(all).hasSize(entries).doesNotHaveDuplicates();
    for (int t = 0; t < threads; t++) {
      for (Key k : takenBy.get(t)) {
        assertThat(string(store.get(k).orElseThrow()))
            .as("the record of %s says who took it", k)
            .isEqualTo("t" + t);
      }
    }
  }

  @Test
  void concurrentCheckAndSetLosesNoUpdate() throws Exception {
    int threads = 8;
    int incrementsEach = 200;
    Key counter = Key.of("counter");
    store.commit(AtomicOperation.builder().set(counter, longBytes(0)).build());
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Integer>> futures = new ArrayList<>();
      CountDownLatch start = new CountDownLatch(1);
      for (int t = 0; t < threads; t++) {
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  int conflicts = 0;
                  for (int i = 0; i < incrementsEach; i++) {
                    while (true) {
                      KvEntry e = store.get(counter).orElseThrow();
                      long next = ByteBuffer.wrap(e.value()).getLong() + 1;
                      if (store
                          .commit(
                              AtomicOperation.builder()
                                  .check(e)
                                  .set(counter, longBytes(next))
                                  .build())
                          .ok()) {
                        break;
                      }
                      conflicts++;
                    }
                  }
                  return conflicts;
                }));
      }
      start.countDown();
      for (Future<Integer> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    long total = ByteBuffer.wrap(store.get(counter).orElseThrow().value()).getLong();
    assertThat(total).isEqualTo((long) threads * incrementsEach);
  }

  @Test
  void listsSeeWholeCommitsOnly() throws Exception {
    // A writer moves one token between two keys, atomically; every list sees exactly one.
    Key a = Key.of("move", "a");
    Key b = Key.of("move", "b");
    store.commit(AtomicOperation.builder().set(a, bytes("token")).build());
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Integer> writer =
          pool.submit(
              () -> {
                int moves = 0;
                while (!stop.get() && moves < 20_000) {
                  boolean atA = store.get(a).isPresent();
                  store.commit(
                      AtomicOperation.builder()
                          .delete(atA ? a : b)
                          .set(atA ? b : a, bytes("token"))
                          .build());
                  moves++;
                }
                return moves;
              });
      for (int i = 0; i < 2_000; i++) {
        assertThat(store.list(KeyRange.prefix(Key.of("move")))).hasSize(1);
        assertThat(store.getMany(List.of(a, b)).stream().filter(Optional::isPresent).count())
            .isEqualTo(1);
        assertThat(store.count(KeyRange.prefix(Key.of("move")))).isEqualTo(1);
        assertThat(store.firstEntries(List.of(KeyRange.prefix(Key.of("move")))).get(0)).isPresent();
        if (firstEntriesAtOneState()) {
          assertThat(
                  store
                      .firstEntries(
                          List.of(KeyRange.between(a, b), KeyRange.prefix(Key.of("move")).from(b)))
                      .stream()
                      .filter(Optional::isPresent)
                      .count())
              .as("the two ranges read at one state hold the one token once")
              .isEqualTo(1);
        }
      }
      stop.set(true);
      assertThat(writer.get(1, TimeUnit.MINUTES)).isPositive();
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
  }

  private static byte[] longBytes(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  // ---- notification

  @Test
  void subscribersAreNotifiedOfCommitsUnderTheirPrefix() throws Exception {
    if (!store.notifiesChanges()) {
      assertThatThrownBy(() -> store.subscribe(Key.of("w"), () -> {}))
          .isInstanceOf(UnsupportedOperationException.class);
      return;
    }
    AtomicInteger calls = new AtomicInteger();
    KvStore.Subscription sub = store.subscribe(Key.of("w"), calls::incrementAndGet);
    try {
      set(Key.of("w", "job", 1L), "x");
      awaitAtLeast(calls, 1);
      int before = calls.get();
      set(Key.of("w", "job", 2L), "y");
      awaitAtLeast(calls, before + 1);
    } finally {
      sub.close();
    }
  }

  @Test
  void closedSubscriptionsAreNotCalled() throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    AtomicInteger closed = new AtomicInteger();
    AtomicInteger open = new AtomicInteger();
    KvStore.Subscription sub = store.subscribe(Key.of("z"), closed::incrementAndGet);
    sub.close();
    sub.close();
    // While it was open, the subscription may have had a spurious wake-up (a store wakes every
    // subscriber once when its listener connects): only calls after close() returned are wrong.
    int callsWhileOpen = closed.get();
    KvStore.Subscription witness = store.subscribe(Key.of("z"), open::incrementAndGet);
    try {
      set(Key.of("z", 1L), "x");
      awaitAtLeast(open, 1);
      assertThat(closed.get()).isEqualTo(callsWhileOpen);
    } finally {
      witness.close();
    }
  }

  @Test
  void aFailingListenerDoesNotBreakCommits() throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    AtomicInteger calls = new AtomicInteger();
    KvStore.Subscription bad =
        store.subscribe(
            Key.of("f"),
            () -> {
              calls.incrementAndGet();
              throw new IllegalStateException("listener bug");
            });
    try {
      set(Key.of("f", 1L), "x");
      set(Key.of("f", 2L), "y");
      awaitAtLeast(calls, 1);
      assertThat(store.get(Key.of("f", 2L))).isPresent();
    } finally {
      bad.close();
    }
  }

  /**
   * Two threads commit under the prefix without pause while subscriptions come and go: once a
   * subscription's close has returned, its listener never starts again.
   */
  @Test
  void noListenerCallStartsAfterTheSubscriptionsCloseReturns() throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    AtomicInteger late = new AtomicInteger();
    AtomicInteger witnessed = new AtomicInteger();
    KvStore.Subscription witness = store.subscribe(Key.of("race"), witnessed::incrementAndGet);
    try (Committers committers = new Committers(Key.of("race"), 2)) {
      for (int round = 0; round < 20; round++) {
        AtomicBoolean closeReturned = new AtomicBoolean();
        AtomicInteger calls = new AtomicInteger();
        KvStore.Subscription sub =
            store.subscribe(
                Key.of("race"),
                () -> {
                  if (closeReturned.get()) {
                    late.incrementAndGet();
                  }
                  calls.incrementAndGet();
                });
        awaitAtLeast(calls, 1);
        sub.close();
        closeReturned.set(true);
        // commits made after the close reach the witness: the closed listener had its chance
        awaitAtLeast(witnessed, witnessed.get() + 4);
      }
      committers.assertNoFailure();
    } finally {
      witness.close();
    }
    assertThat(late.get()).as("listener calls that started after close() returned").isZero();
  }

  /**
   * Commits run on two threads while the store closes: once the store's close has returned, no
   * listener starts again.
   */
  @Test
  void noListenerCallStartsAfterTheStoresCloseReturns() throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    AtomicBoolean closeReturned = new AtomicBoolean();
    AtomicInteger late = new AtomicInteger();
    AtomicInteger calls = new AtomicInteger();
    store.subscribe(
        Key.of("race"),
        () -> {
          if (closeReturned.get()) {
            late.incrementAndGet();
          }
          calls.incrementAndGet();
        });
    try (Committers committers = new Committers(Key.of("race"), 2)) {
      awaitAtLeast(calls, 3);
      store.close();
      closeReturned.set(true);
      committers.awaitStopped();
    }
    assertThat(late.get())
        .as("listener calls that started after the store's close() returned")
        .isZero();
  }

  /**
   * A listener runs (held on a latch) when its subscription is closed on another thread: close
   * waits until the call has returned.
   */
  @Test
  void closingASubscriptionWaitsForItsRunningCall() throws Exception {
    assertCloseWaitsForARunningCall(false);
  }

  /** The same for the store's close: it returns only after a running listener has. */
  @Test
  void closingTheStoreWaitsForARunningListener() throws Exception {
    assertCloseWaitsForARunningCall(true);
  }

  private void assertCloseWaitsForARunningCall(boolean closeStore) throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean callEnded = new AtomicBoolean();
    AtomicBoolean once = new AtomicBoolean();
    KvStore.Subscription sub =
        store.subscribe(
            Key.of("held"),
            () -> {
              if (!once.compareAndSet(false, true)) {
                return;
              }
              entered.countDown();
              try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                  throw new AssertionError("the test did not release the listener");
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              callEnded.set(true);
            });
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      Future<?> commit =
          threads.submit(
              () -> {
                try {
                  set(Key.of("held", 1L), "x");
                } catch (IllegalStateException closedMeanwhile) {
                  // a store whose commit waits for its listeners may be closed before it returns
                }
              });
      assertThat(entered.await(10, TimeUnit.SECONDS)).as("the listener was called").isTrue();
      AtomicBoolean closeReturned = new AtomicBoolean();
      AtomicBoolean endedBeforeCloseReturned = new AtomicBoolean();
      AtomicReference<Thread> closer = new AtomicReference<>();
      Future<?> closing =
          threads.submit(
              () -> {
                closer.set(Thread.currentThread());
                if (closeStore) {
                  store.close();
                } else {
                  sub.close();
                }
                endedBeforeCloseReturned.set(callEnded.get());
                closeReturned.set(true);
              });
      // wait until the closer blocks (or, wrongly, returns)
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!closeReturned.get() && !isBlocked(closer.get())) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the closing thread neither returned nor blocked");
        }
        Thread.onSpinWait();
      }
      assertThat(closeReturned.get())
          .as("close() returned while the listener was running")
          .isFalse();
      release.countDown();
      closing.get(10, TimeUnit.SECONDS);
      commit.get(10, TimeUnit.SECONDS);
      assertThat(endedBeforeCloseReturned.get())
          .as("the running call had ended when close() returned")
          .isTrue();
    } finally {
      release.countDown();
      threads.shutdownNow();
      assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static boolean isBlocked(Thread t) {
    if (t == null) {
      return false;
    }
    Thread.State state = t.getState();
    return state == Thread.State.WAITING
        || state == Thread.State.TIMED_WAITING
        || state == Thread.State.BLOCKED;
  }

  /**
   * A listener closes its own subscription from within its call: that close does not wait for
   * itself.
   */
  @Test
  void aListenerMayCloseItsOwnSubscription() throws Exception {
    if (!store.notifiesChanges()) {
      return;
    }
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger witnessed = new AtomicInteger();
    AtomicReference<KvStore.Subscription> self = new AtomicReference<>();
    KvStore.Subscription witness = store.subscribe(Key.of("self"), witnessed::incrementAndGet);
    try {
      self.set(
          store.subscribe(
              Key.of("self"),
              () -> {
                calls.incrementAndGet();
                self.get().close();
              }));
      set(Key.of("self", 1L), "x");
      awaitAtLeast(calls, 1);
      set(Key.of("self", 2L), "y");
      set(Key.of("self", 3L), "z");
      awaitAtLeast(witnessed, 3);
      assertThat(calls.get()).isEqualTo(1);
    } finally {
      witness.close();
    }
  }

  /** Threads that commit under a prefix until closed, or until the store refuses them. */
  private final class Committers implements AutoCloseable {
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());

    Committers(Key prefix, int count) {
      for (int t = 0; t < count; t++) {
        long id = t;
        Thread thread =
            new Thread(
                () -> {
                  long i = 0;
                  while (!stop.get()) {
                    try {
                      store.commit(
                          AtomicOperation.builder()
                              .set(prefix.append(id, i++ % 16), bytes("v"))
                              .build());
                    } catch (IllegalStateException closed) {
                      return;
                    } catch (RuntimeException | Error e) {
                      failures.add(e);
                      return;
                    }
                  }
                },
                "contract-committer-" + t);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
      }
    }

    void assertNoFailure() {
      assertThat(failures).isEmpty();
    }

    /** Waits for the threads to end by themselves (the store closed under them). */
    void awaitStopped() throws InterruptedException {
      for (Thread t : threads) {
        t.join(Duration.ofSeconds(10).toMillis());
        assertThat(t.isAlive())
            .as(t.getName() + " still running 10 s after the store closed")
            .isFalse();
      }
      assertNoFailure();
    }

    @Override
    public void close() {
      stop.set(true);
      for (Thread t : threads) {
        try {
          t.join(Duration.ofSeconds(10).toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError("interrupted while stopping " + t.getName(), e);
        }
        assertThat(t.isAlive())
            .as(t.getName() + " still running 10 s after being stopped")
            .isFalse();
      }
    }
  }

  /** Polls with a deadline: notifications may arrive on another thread. */
  protected static void awaitAtLeast(AtomicInteger counter, int atLeast)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    Object monitor = new Object();
    while (counter.get() < atLeast) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "expected at least " + atLeast + " notifications, saw " + counter.get());
      }
      synchronized (monitor) {
        monitor.wait(5);
      }
    }
  }

  // ---- bad input

  @Test
  void badInputIsRefusedWithAClearMessageAndWritesNothing() {
    assertThatThrownBy(() -> Key.of())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least one part");
    assertThatThrownBy(() -> Key.of("a", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("part 1 is null");
    assertThatThrownBy(() -> Key.of("a", 1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("part 1 is a java.lang.Double");
    assertThatThrownBy(() -> Key.of("x".repeat(KvStore.MAX_KEY_BYTES)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the limit");
    assertThatThrownBy(
            () -> AtomicOperation.builder().set(Key.of("v"), new byte[KvStore.MAX_VALUE_BYTES + 1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the limit");
    assertThatThrownBy(
            () ->
                AtomicOperation.builder().set(Key.of("twice"), bytes("1")).delete(Key.of("twice")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("written twice");
    assertThatThrownBy(() -> AtomicOperation.builder().set(Key.of("v"), null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.get(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.commit(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.list(KeyRange.prefix(Key.of("a")), 0, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit");
    assertThatThrownBy(() -> KeyRange.prefix(Key.of("a")).from(Key.of("b", 1L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not inside prefix");
    KvStore.ClaimPlanner planner = new TakeEach("x");
    assertThatThrownBy(() -> store.claim(null, 1, planner))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.claim(KeyRange.all(), 1, null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.claim(KeyRange.all(), 0, planner))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit");
    assertThat(store.count(KeyRange.all())).isZero();
  }

  @Test
  void aClosedStoreRefusesCalls() {
    store.close();
    store.close();
    assertThatThrownBy(() -> store.get(Key.of("k")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(
            () -> store.commit(AtomicOperation.builder().set(Key.of("k"), bytes("v")).build()))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.list(KeyRange.all(), 10, false))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.firstEntries(List.of(KeyRange.all())))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.claim(KeyRange.all(), 10, new TakeEach("x")))
        .isInstanceOf(IllegalStateException.class);
  }
}
