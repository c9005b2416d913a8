package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two {@link PostgresKvStore} instances on one database stand for two nodes: what one commits, the
 * other sees, hears of, and orders after.
 */
@PostgresTest
class PostgresTwoNodesTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  private TestDatabase db;
  private String schema;
  private PostgresKvStore a;
  private PostgresKvStore b;

  @BeforeEach
  void openTwoNodes(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    a = PostgresKvStore.builder(db.pool()).schema(schema).build();
    b = PostgresKvStore.builder(db.pool()).schema(schema).build();
  }

  @AfterEach
  void closeNodes() {
    a.close();
    b.close();
  }

  @Test
  void aCommitOnOneNodeIsSeenAndHeardOnTheOther() {
    AtomicInteger onA = new AtomicInteger();
    AtomicInteger onB = new AtomicInteger();
    a.subscribe(Key.of("q", "ready"), onA::incrementAndGet);
    b.subscribe(Key.of("q", "ready"), onB::incrementAndGet);
    TestDatabase.await("both listeners connected", WAIT, () -> a.isListening() && b.isListening());

    int before = onB.get();
    long vs = set(a, Key.of("q", "ready", 1L), "from a");
    TestDatabase.await("b hears a's commit", WAIT, () -> onB.get() > before);
    KvEntry seen = b.get(Key.of("q", "ready", 1L)).orElseThrow();
    assertThat(seen.versionstamp()).isEqualTo(vs);

    int beforeA = onA.get();
    set(b, Key.of("q", "ready", 2L), "from b");
    TestDatabase.await("a hears b's commit", WAIT, () -> onA.get() > beforeA);
    assertThat(a.get(Key.of("q", "ready", 2L))).isPresent();
  }

  @Test
  void remoteNotificationsAreFilteredByPrefix() {
    AtomicInteger ready = new AtomicInteger();
    AtomicInteger delayed = new AtomicInteger();
    AtomicInteger marker = new AtomicInteger();
    b.subscribe(Key.of("q", "ready"), ready::incrementAndGet);
    b.subscribe(Key.of("q", "delayed"), delayed::incrementAndGet);
    b.subscribe(Key.of("marker"), marker::incrementAndGet);
    // Every subscriber is woken once when the listener connects; count from after that.
    TestDatabase.await("listener connected", WAIT, b::isListening);
    int delayedBefore = delayed.get();
    int readyBefore = ready.get();
    int markerBefore = marker.get();

    set(a, Key.of("q", "ready", 10L, "job-1"), "x");
    set(a, Key.of("marker", 1L), "x");
    // One connection delivers notifications in commit order: the marker comes last.
    TestDatabase.await("marker heard", WAIT, () -> marker.get() > markerBefore);

    assertThat(ready.get()).isGreaterThan(readyBefore);
    assertThat(delayed.get())
        .as("a commit under [q, ready] does not wake [q, delayed]")
        .isEqualTo(delayedBefore);
  }

  @Test
  void concurrentCheckAndSetFromBothNodesLosesNoUpdate() throws Exception {
    Key counter = Key.of("counter");
    a.commit(AtomicOperation.builder().set(counter, longBytes(0)).build());
    int threadsPerNode = 3;
    int incrementsEach = 100;
    ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerNode);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (PostgresKvStore node : List.of(a, b)) {
        for (int t = 0; t < threadsPerNode; t++) {
          futures.add(
              pool.submit(
                  () -> {
                    start.await();
                    for (int i = 0; i < incrementsEach; i++) {
                      while (true) {
                        KvEntry e = node.get(counter).orElseThrow();
                        long next = ByteBuffer.wrap(e.value()).getLong() + 1;
                        if (node.commit(
                                AtomicOperation.builder()
                                    .check(e)
                                    .set(counter, longBytes(next))
                                    .build())
                            .ok()) {
                          break;
                        }
                      }
                    }
                    return null;
                  }));
        }
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    long total = ByteBuffer.wrap(b.get(counter).orElseThrow().value()).getLong();
    assertThat(total).isEqualTo(2L * threadsPerNode * incrementsEach);
  }

  /** One commit as seen by the thread that made it. */
  private record Timed(long startNanos, long endNanos, long versionstamp, long counter) {}

  @Test
  void versionstampsFromBothNodesIncreaseInCommitOrder() throws Exception {
    // Each thread alternates a blind write of its own key and a checked increment of a
    // shared counter. Checked increments are totally ordered by the counter's value; all
    // commits are ordered in real time where one ended before another started.
    Key counter = Key.of("order", "counter");
    a.commit(AtomicOperation.builder().set(counter, longBytes(0)).build());
    int threadsPerNode = 3;
    int commitsEach = 120;
    ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerNode);
    List<Timed> all = new ArrayList<>();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<Timed>>> futures = new ArrayList<>();
      int id = 0;
      for (PostgresKvStore node : List.of(a, b)) {
        for (int t = 0; t < threadsPerNode; t++) {
          Key own = Key.of("order", "thread", (long) id++);
          futures.add(
              pool.submit(
                  () -> {
                    start.await();
                    List<Timed> mine = new ArrayList<>();
                    for (int i = 0; i < commitsEach; i++) {
                      if (i % 2 == 0) {
                        long t0 = System.nanoTime();
                        CommitResult r =
                            node.commit(AtomicOperation.builder().set(own, longBytes(i)).build());
                        mine.add(new Timed(t0, System.nanoTime(), r.versionstamp(), -1));
                      } else {
                        while (true) {
                          KvEntry e = node.get(counter).orElseThrow();
                          long next = ByteBuffer.wrap(e.value()).getLong() + 1;
                          long t0 = System.nanoTime();
                          CommitResult r =
                              node.commit(
                                  AtomicOperation.builder()
                                      .check(e)
                                      .set(counter, longBytes(next))
                                      .build());
                          if (r.ok()) {
                            mine.add(new Timed(t0, System.nanoTime(), r.versionstamp(), next));
                            break;
                          }
                        }
                      }
                    }
                    return mine;
                  }));
        }
      }
      start.countDown();
      for (Future<List<Timed>> f : futures) {
        all.addAll(f.get(2, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }

    Set<Long> distinct = new HashSet<>();
    all.forEach(t -> distinct.add(t.versionstamp()));
    assertThat(distinct).as("every commit has its own versionstamp").hasSize(all.size());

    List<Timed> increments =
        all.stream()
            .filter(t -> t.counter() >= 0)
            .sorted(Comparator.comparingLong(Timed::counter))
            .toList();
    for (int i = 1; i < increments.size(); i++) {
      assertThat(increments.get(i).versionstamp())
          .as(
              "increment %d commits after increment %d",
              increments.get(i).counter(), increments.get(i - 1).counter())
          .isGreaterThan(increments.get(i - 1).versionstamp());
    }

    // Real-time order: if commit x returned before commit y started, vs(x) < vs(y).
    List<Timed> byVersionstamp =
        all.stream().sorted(Comparator.comparingLong(Timed::versionstamp)).toList();
    long latestStartBefore = Long.MIN_VALUE;
    for (Timed t : byVersionstamp) {
      assertThat(t.endNanos())
          .as(
              "commit %d ended before a commit with a smaller versionstamp started",
              t.versionstamp())
          .isGreaterThanOrEqualTo(latestStartBefore);
      latestStartBefore = Math.max(latestStartBefore, t.startNanos());
    }
    // The latest versionstamp read by either node is the greatest committed.
    long greatest = byVersionstamp.get(byVersionstamp.size() - 1).versionstamp();
    assertThat(
            a.commit(
                    AtomicOperation.builder()
                        .check(counter, b.get(counter).orElseThrow().versionstamp())
                        .build())
                .versionstamp())
        .isEqualTo(greatest);
  }

  @Test
  void nodesStartingTogetherCreateTheSchemaOnce() throws Exception {
    // A race: several rounds, each with a fresh schema and four nodes of two table prefixes
    // whose first call comes at once. (Once failed with a duplicate key in pg_namespace, when the
    // DDL's
    // transaction began before the advisory lock was granted.)
    for (int round = 0; round < 5; round++) {
      String fresh = TestDatabase.freshSchemaName();
      int nodes = 4;
      List<PostgresKvStore> stores = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        // two table prefixes: the lock is the schema's (it was the tables', so stores of two
        // prefixes created the new schema at once and one failed on pg_namespace)
        stores.add(
            PostgresKvStore.builder(i % 2 == 0 ? db.unpooled() : db.pool())
                .schema(fresh)
                .tablePrefix(i < nodes / 2 ? "kvmq" : "other")
                .build());
      }
      ExecutorService pool = Executors.newFixedThreadPool(nodes);
      try {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<CommitResult>> futures = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
          PostgresKvStore s = stores.get(i);
          Key k = Key.of("node", (long) i);
          futures.add(
              pool.submit(
                  () -> {
                    start.await();
                    return s.commit(AtomicOperation.builder().set(k, longBytes(1)).build());
                  }));
        }
        start.countDown();
        for (Future<CommitResult> f : futures) {
          assertThat(f.get(1, TimeUnit.MINUTES).ok()).isTrue();
        }
        assertThat(stores.get(0).list(KeyRange.prefix(Key.of("node")))).hasSize(nodes / 2);
        assertThat(stores.get(nodes - 1).list(KeyRange.prefix(Key.of("node")))).hasSize(nodes / 2);
      } finally {
        pool.shutdownNow();
        stores.forEach(PostgresKvStore::close);
        db.dropSchema(fresh);
      }
    }
  }

  private static long set(KvStore store, Key key, String value) {
    CommitResult r = store.commit(AtomicOperation.builder().set(key, value.getBytes()).build());
    assertThat(r.ok()).isTrue();
    return r.versionstamp();
  }

  private static byte[] longBytes(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }
}
