package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrent claims and check-and-sets, many rounds, each on a fresh store, on 256-byte pages
 * (pages empty, merge and are refilled; in the check-and-set rounds entries also outgrow their
 * pages and move) and on the default ones. The claims go through a wrapper that does not override
 * {@link KvStore#claim}, so the default path runs (list, then getMany, then plan, then commitAll,
 * with no lock held across them): with exact checks it takes every entry exactly once, whatever
 * commits between its reads and its own commit. Written to chase a report that the contract's
 * concurrent claim test took entries twice on format 2 through that path; it did not reproduce.
 * {@code -Dkvmq.stress.rounds=N} changes the number of rounds (30 by default).
 */
class EclipseStoreConcurrentClaimStressTest {

  private static final int ROUNDS = Integer.getInteger("kvmq.stress.rounds", 30);
  private static final int ENTRIES = 120;
  private static final int THREADS = 4;

  @TempDir Path dir;

  private EclipseStoreKvStore open(String name, int pageBytes, Durability durability) {
    return EclipseStoreKvStore.builder(dir.resolve(name))
        .durability(durability)
        .pageBytes(pageBytes)
        .open();
  }

  @Test
  void defaultClaimPathTakesEveryEntryExactlyOnceOnSmallPages() throws Exception {
    long failedChecks = 0;
    for (int round = 0; round < ROUNDS; round++) {
      Durability d = round % 3 == 0 ? Durability.FSYNC : Durability.PROCESS_CRASH_SAFE;
      try (EclipseStoreKvStore store = open("small-" + round, 256, d)) {
        failedChecks += claimRound(new Delegating(store), "pageBytes=256 " + d + " round " + round);
      }
    }
    assertThat(failedChecks)
        .as("the claims collided (checks failed), so the rounds tested something")
        .isPositive();
  }

  @Test
  void defaultClaimPathTakesEveryEntryExactlyOnceOnDefaultPages() throws Exception {
    long failedChecks = 0;
    for (int round = 0; round < ROUNDS; round++) {
      Durability d = round % 3 == 0 ? Durability.FSYNC : Durability.PROCESS_CRASH_SAFE;
      try (EclipseStoreKvStore store =
          EclipseStoreKvStore.builder(dir.resolve("default-" + round)).durability(d).open()) {
        failedChecks += claimRound(new Delegating(store), "default pages " + d + " round " + round);
      }
    }
    assertThat(failedChecks)
        .as("the claims collided (checks failed), so the rounds tested something")
        .isPositive();
  }

  @Test
  void concurrentCheckAndSetOnKeysSharingPagesLosesNoUpdate() throws Exception {
    long conflicts = 0;
    long slices = 0;
    for (int round = 0; round < ROUNDS / 3; round++) {
      int pageBytes = round % 2 == 0 ? 256 : 2048;
      // a housekeeping cycle every MiB written: its slices run on the committer thread
      // between the group commits of the round
      try (EclipseStoreKvStore store =
          EclipseStoreKvStore.builder(dir.resolve("cas-" + round))
              .durability(Durability.PROCESS_CRASH_SAFE)
              .pageBytes(pageBytes)
              .compactEvery(1 << 20)
              .compactSlice(Duration.ofMillis(1))
              .open()) {
        conflicts += casRound(store, round, "pageBytes=" + pageBytes + " round " + round);
        slices += store.housekeepingSlices();
      }
    }
    assertThat(slices).as("housekeeping slices ran during the check-and-set rounds").isPositive();
    assertThat(conflicts)
        .as("check-and-sets collided (checks failed), so the rounds tested something")
        .isPositive();
  }

  // ---- claims

  private record Claim(
      String by, List<KvEntry> index, List<Optional<KvEntry>> records, List<CommitResult> results) {
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder(by).append(": read");
      for (Optional<KvEntry> r : records) {
        b.append(' ')
            .append(
                r.map(e -> e.key().getLong(1) + "@" + e.versionstamp() + "=" + string(e))
                    .orElse("-"));
      }
      b.append(" -> ");
      for (CommitResult c : results) {
        b.append(c.ok() ? "ok@" + c.versionstamp() : "failed").append(' ');
      }
      return b.toString();
    }
  }

  /**
   * Runs one round on a fresh store and returns how many claimed operations failed their checks.
   */
  private static int claimRound(KvStore store, String what) throws Exception {
    for (long n = 0; n < ENTRIES; n++) {
      store.commit(
          AtomicOperation.builder()
              .set(Key.of("idx", n), new byte[0])
              .set(Key.of("rec", n), bytes("ready"))
              .build());
    }
    ConcurrentLinkedQueue<Claim> log = new ConcurrentLinkedQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<List<Key>> takenBy = new ArrayList<>();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<Key>>> futures = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
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
                    log.add(new Claim(name, planner.index, planner.records, results));
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
    Map<Key, Integer> times = new HashMap<>();
    all.forEach(k -> times.merge(k, 1, Integer::sum));
    List<String> twice = new ArrayList<>();
    times.forEach(
        (k, n) -> {
          if (n > 1) {
            twice.add(k.toString());
          }
        });
    StringBuilder claims = new StringBuilder();
    if (all.size() != ENTRIES || !twice.isEmpty()) {
      for (Claim c : log) {
        claims.append("\n  ").append(c);
      }
    }
    assertThat(all)
        .as("%s: %d takes, taken more than once: %s; claims:%s", what, all.size(), twice, claims)
        .hasSize(ENTRIES)
        .doesNotHaveDuplicates();
    for (int t = 0; t < THREADS; t++) {
      for (Key k : takenBy.get(t)) {
        assertThat(string(store.get(k).orElseThrow()))
            .as("%s: the record of %s says who took it", what, k)
            .isEqualTo("t" + t);
      }
    }
    assertThat(store.count(KeyRange.all())).as(what).isEqualTo(ENTRIES);
    int failed = 0;
    for (Claim c : log) {
      failed += (int) c.results().stream().filter(r -> !r.ok()).count();
    }
    return failed;
  }

  /**
   * The contract test's planner: each record still "ready" is checked, taken and its index entry
   * deleted.
   */
  private static final class TakeEach implements KvStore.ClaimPlanner {
    final String by;
    List<KvEntry> index = List.of();
    List<Optional<KvEntry>> records = List.of();
    final List<Key> taken = new ArrayList<>();

    TakeEach(String by) {
      this.by = by;
    }

    @Override
    public Key recordKey(Key indexKey) {
      return Key.of("rec", indexKey.getLong(1));
    }

    @Override
    public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
      this.index = index;
      this.records = records;
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

  // ---- check-and-set

  /**
   * Threads increment counters that share pages with check-and-set, one or two counters per
   * operation, with values whose length changes (entries outgrow their pages and move) while
   * another thread adds and removes filler keys (pages fill, empty, merge). Every acknowledged
   * increment must be in the final counts. Returns how many commits failed their checks.
   */
  private static long casRound(KvStore store, long seed, String what) throws Exception {
    int counters = 24;
    int threads = 4;
    int opsEach = 150;
    List<AtomicOperation> init = new ArrayList<>();
    for (long c = 0; c < counters; c++) {
      init.add(AtomicOperation.builder().set(Key.of("c", c), counterBytes(0, 0)).build());
    }
    store.commitAll(init);
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    long[][] acked = new long[threads][counters];
    AtomicLong conflicts = new AtomicLong();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long[] mine = acked[t];
        SplittableRandom random = new SplittableRandom(seed * 31 + t);
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < opsEach; i++) {
                    int a = random.nextInt(counters);
                    int b = random.nextInt(counters);
                    while (true) {
                      List<Key> keys =
                          a == b
                              ? List.of(Key.of("c", a))
                              : List.of(Key.of("c", a), Key.of("c", b));
                      List<Optional<KvEntry>> read = store.getMany(keys);
                      AtomicOperation.Builder op = AtomicOperation.builder();
                      for (Optional<KvEntry> e : read) {
                        KvEntry entry = e.orElseThrow();
                        op.check(entry)
                            .set(
                                entry.key(),
                                counterBytes(counterOf(entry) + 1, random.nextInt(60)));
                      }
                      if (store.commit(op.build()).ok()) {
                        mine[a]++;
                        if (a != b) {
                          mine[b]++;
                        }
                        break;
                      }
                      conflicts.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      SplittableRandom churnRandom = new SplittableRandom(seed * 31 + 99);
      CountDownLatch workersDone = new CountDownLatch(1);
      Future<?> churn =
          pool.submit(
              () -> {
                start.await();
                long next = 0;
                while (workersDone.getCount() > 0) {
                  List<AtomicOperation> ops = new ArrayList<>();
                  for (int i = 0; i < 8; i++) {
                    ops.add(
                        AtomicOperation.builder()
                            .set(Key.of("f", next + i), new byte[churnRandom.nextInt(40)])
                            .build());
                  }
                  store.commitAll(ops);
                  List<AtomicOperation> deletes = new ArrayList<>();
                  for (int i = 0; i < 8; i++) {
                    if (churnRandom.nextInt(4) != 0) {
                      deletes.add(AtomicOperation.builder().delete(Key.of("f", next + i)).build());
                    }
                  }
                  store.commitAll(deletes);
                  next += 8;
                }
                return null;
              });
      start.countDown();
      try {
        for (Future<?> f : futures) {
          f.get(2, TimeUnit.MINUTES);
        }
      } finally {
        workersDone.countDown();
      }
      churn.get(2, TimeUnit.MINUTES);
    } finally {
      pool.shutdownNow();
    }
    for (int c = 0; c < counters; c++) {
      long expected = 0;
      for (int t = 0; t < threads; t++) {
        expected += acked[t][c];
      }
      assertThat(counterOf(store.get(Key.of("c", (long) c)).orElseThrow()))
          .as("%s: counter %d holds every acknowledged increment", what, c)
          .isEqualTo(expected);
    }
    return conflicts.get();
  }

  /** A count, then padding of the given length: the entry's size changes with each write. */
  private static byte[] counterBytes(long count, int padding) {
    return (count + ":" + "x".repeat(padding)).getBytes(StandardCharsets.UTF_8);
  }

  private static long counterOf(KvEntry e) {
    String s = string(e);
    return Long.parseLong(s.substring(0, s.indexOf(':')));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String string(KvEntry e) {
    return new String(e.value(), StandardCharsets.UTF_8);
  }

  /** Passes every call to the store but {@link KvStore#claim}, which keeps its default. */
  private static final class Delegating extends ForwardingKvStore {
    Delegating(KvStore store) {
      super(store);
    }
  }
}
