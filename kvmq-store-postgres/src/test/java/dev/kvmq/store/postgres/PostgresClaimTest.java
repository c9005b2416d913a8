package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL claim path ({@link PostgresKvStore#claim}): claims from two nodes, with several
 * threads each, take different entries (no entry twice, none refused), a claim skips only the rows
 * another claim holds, and a claim that deadlocks with a writer is retried instead of failing.
 */
@PostgresTest
class PostgresClaimTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final KeyRange INDEX = KeyRange.prefix(Key.of("idx"));

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

  /** Index ["idx", n] points at ["rec", n]; each claim marks the record and drops the entry. */
  private static class Take implements KvStore.ClaimPlanner {
    final String by;
    final List<Long> taken = new ArrayList<>();
    int calls;
    int seen;

    /** Entries whose record another claim had already taken: a collision. */
    int stale;

    Take(String by) {
      this.by = by;
    }

    @Override
    public Key recordKey(Key indexKey) {
      return Key.of("rec", indexKey.getLong(1));
    }

    @Override
    public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
      calls++;
      seen = index.size();
      taken.clear();
      stale = 0;
      List<AtomicOperation> ops = new ArrayList<>();
      for (int i = 0; i < index.size(); i++) {
        KvEntry r = records.get(i).orElseThrow();
        if (r.value().length != 1 || r.value()[0] != 0) {
          stale++;
          continue;
        }
        ops.add(
            AtomicOperation.builder()
                .check(r)
                .set(r.key(), by.getBytes(StandardCharsets.UTF_8))
                .delete(index.get(i).key())
                .build());
        taken.add(index.get(i).key().getLong(1));
      }
      return ops;
    }
  }

  private void fill(int entries) {
    List<AtomicOperation> ops = new ArrayList<>();
    for (long n = 0; n < entries; n++) {
      ops.add(
          AtomicOperation.builder()
              .set(Key.of("idx", n), new byte[0])
              .set(Key.of("rec", n), new byte[] {0})
              .build());
    }
    assertThat(a.commitAll(ops)).allMatch(CommitResult::ok);
  }

  @Test
  void claimsFromTwoNodesTakeEveryEntryOnceAndAreNeverRefused() throws Exception {
    int entries = 600;
    int threadsPerNode = 4;
    fill(entries);
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger claimCalls = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerNode);
    Map<Long, String> takenBy = new HashMap<>();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Map<Long, String>>> futures = new ArrayList<>();
      for (int t = 0; t < 2 * threadsPerNode; t++) {
        PostgresKvStore node = t % 2 == 0 ? a : b;
        String name = (t % 2 == 0 ? "a" : "b") + t;
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  Map<Long, String> mine = new HashMap<>();
                  while (true) {
                    Take planner = new Take(name);
                    List<CommitResult> results = node.claim(INDEX, 5, planner);
                    claimCalls.incrementAndGet();
                    refused.addAndGet(planner.stale);
                    if (planner.seen == 0 && node.count(INDEX) == 0) {
                      return mine;
                    }
                    for (int i = 0; i < results.size(); i++) {
                      if (results.get(i).ok()) {
                        assertThat(mine.put(planner.taken.get(i), name)).isNull();
                      } else {
                        refused.incrementAndGet();
                      }
                    }
                  }
                }));
      }
      start.countDown();
      for (Future<Map<Long, String>> f : futures) {
        for (Map.Entry<Long, String> e : f.get(2, TimeUnit.MINUTES).entrySet()) {
          assertThat(takenBy.put(e.getKey(), e.getValue()))
              .as("entry %s taken twice", e.getKey())
              .isNull();
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(takenBy).hasSize(entries);
    assertThat(refused.get())
        .as(
            "claims refused by their checks or planned from a taken record (of %s claim calls)",
            claimCalls.get())
        .isZero();
    assertThat(takenBy.values().stream().filter(n -> n.startsWith("a")).count())
        .as("node a took some")
        .isPositive();
    assertThat(takenBy.values().stream().filter(n -> n.startsWith("b")).count())
        .as("node b took some")
        .isPositive();
    for (Map.Entry<Long, String> e : takenBy.entrySet()) {
      assertThat(
              new String(
                  a.get(Key.of("rec", e.getKey())).orElseThrow().value(), StandardCharsets.UTF_8))
          .isEqualTo(e.getValue());
    }
  }

  @Test
  void aClaimSkipsOnlyTheRowsAnotherClaimHoldsInKeyOrder() throws Exception {
    fill(10);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Take first =
          new Take("a") {
            @Override
            public List<AtomicOperation> plan(
                List<KvEntry> index, List<Optional<KvEntry>> records) {
              List<AtomicOperation> ops = super.plan(index, records);
              holding.countDown();
              await(release);
              return ops;
            }
          };
      Future<List<CommitResult>> held = pool.submit(() -> a.claim(INDEX, 3, first));
      await(holding);

      Take second = new Take("b");
      List<CommitResult> results = b.claim(INDEX, 3, second);
      assertThat(second.taken).as("the next three, in order").containsExactly(3L, 4L, 5L);
      assertThat(results).hasSize(3).allMatch(CommitResult::ok);

      release.countDown();
      assertThat(held.get(1, TimeUnit.MINUTES)).hasSize(3).allMatch(CommitResult::ok);
      assertThat(first.taken).containsExactly(0L, 1L, 2L);
      assertThat(first.calls).isEqualTo(1);
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
    Take rest = new Take("c");
    b.claim(INDEX, 10, rest);
    assertThat(rest.taken).containsExactly(6L, 7L, 8L, 9L);
  }

  @Test
  void aClaimThatDeadlocksWithADeleteIsRetriedAndBothSeeOneOutcome() throws Exception {
    // The claim locks idx/0, then waits for the versionstamp row that a delete of idx/0
    // holds while it waits for idx/0: PostgreSQL aborts one of them, which is run again.
    fill(1);
    KvEntry record = a.get(Key.of("rec", 0L)).orElseThrow();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Take claim =
          new Take("a") {
            @Override
            public List<AtomicOperation> plan(
                List<KvEntry> index, List<Optional<KvEntry>> records) {
              List<AtomicOperation> ops = super.plan(index, records);
              holding.countDown();
              await(release);
              return ops;
            }
          };
      Future<List<CommitResult>> claimed = pool.submit(() -> a.claim(INDEX, 1, claim));
      await(holding);
      Future<CommitResult> deleted =
          pool.submit(
              () ->
                  b.commit(
                      AtomicOperation.builder()
                          .check(record)
                          .delete(Key.of("idx", 0L))
                          .delete(Key.of("rec", 0L))
                          .build()));
      TestDatabase.await(
          "the delete waits for the claim's row lock", WAIT, () -> waitingForLocks() == 1);
      release.countDown();

      List<CommitResult> claimResults = claimed.get(1, TimeUnit.MINUTES);
      CommitResult deleteResult = deleted.get(1, TimeUnit.MINUTES);
      // Exactly one of the two applied, whichever PostgreSQL let through first.
      boolean claimWon = !claimResults.isEmpty() && claimResults.get(0).ok();
      assertThat(claimWon).isNotEqualTo(deleteResult.ok());
      if (claimWon) {
        assertThat(
                new String(a.get(Key.of("rec", 0L)).orElseThrow().value(), StandardCharsets.UTF_8))
            .isEqualTo("a");
      } else {
        assertThat(a.get(Key.of("rec", 0L))).isEmpty();
        assertThat(claim.calls).as("the claim ran again after it was aborted").isGreaterThan(1);
      }
      assertThat(a.count(INDEX)).isZero();
      assertThat(a.isHealthy()).isTrue();
      assertThat(b.isHealthy()).isTrue();
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void aClaimReadsTheRecordsWithTheIndexRowsByThePlannersRuleAndChecksEveryKeyItYields()
      throws Exception {
    fill(12);
    // records a wrong rule would find: ["alt", n], marked taken
    List<AtomicOperation> alt = new ArrayList<>();
    for (long n = 0; n < 12; n++) {
      alt.add(AtomicOperation.builder().set(Key.of("alt", n), new byte[] {1}).build());
    }
    assertThat(a.commitAll(alt)).allMatch(CommitResult::ok);
    List<String> statements = new CopyOnWriteArrayList<>();
    int indexPrefixBytes = Key.of("idx").encoded().length;
    try (PostgresKvStore counted =
        PostgresKvStore.builder(recordingStatements(db.pool(), statements))
            .schema(schema)
            .build()) {
      Take right = new RuleTake("a", Key.of("rec"), indexPrefixBytes);
      assertThat(counted.claim(INDEX, 4, right)).hasSize(4).allMatch(CommitResult::ok);
      assertThat(right.taken).containsExactly(0L, 1L, 2L, 3L);
      assertThat(right.stale).isZero();
      assertThat(statements)
          .as("the records came with the index rows")
          .noneMatch(s -> s.contains("ANY"));

      statements.clear();
      Take wrong = new RuleTake("b", Key.of("alt"), indexPrefixBytes);
      assertThat(counted.claim(INDEX, 4, wrong)).hasSize(4).allMatch(CommitResult::ok);
      assertThat(wrong.stale)
          .as("the records the wrong rule found were not given to the planner")
          .isZero();
      assertThat(wrong.taken).containsExactly(4L, 5L, 6L, 7L);
      assertThat(statements)
          .as("the right records were read apart")
          .anyMatch(s -> s.contains("ANY"));

      statements.clear();
      Take nowhere = new RuleTake("c", Key.of("rec"), indexPrefixBytes + 1);
      assertThat(counted.claim(INDEX, 4, nowhere)).hasSize(4).allMatch(CommitResult::ok);
      assertThat(nowhere.taken).containsExactly(8L, 9L, 10L, 11L);
      assertThat(statements).anyMatch(s -> s.contains("ANY"));
    }
    for (long n = 0; n < 12; n++) {
      String by = n < 4 ? "a" : n < 8 ? "b" : "c";
      assertThat(new String(a.get(Key.of("rec", n)).orElseThrow().value(), StandardCharsets.UTF_8))
          .isEqualTo(by);
      assertThat(a.get(Key.of("alt", n)).orElseThrow().value()).containsExactly(1);
    }
  }

  /** {@link Take} with a record key rule, right or wrong. */
  private static final class RuleTake extends Take {
    private final KvStore.ClaimPlanner.RecordKeyRule rule;

    RuleTake(String by, Key prefix, int dropped) {
      super(by);
      this.rule = new KvStore.ClaimPlanner.RecordKeyRule(prefix, dropped);
    }

    @Override
    public Optional<RecordKeyRule> recordKeyRule() {
      return Optional.of(rule);
    }
  }

  /** A data source whose connections note the SQL of every statement they prepare. */
  private static DataSource recordingStatements(DataSource target, List<String> statements) {
    return (DataSource)
        Proxy.newProxyInstance(
            PostgresClaimTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(method, target, args);
              if (!(result instanceof Connection c)) {
                return result;
              }
              return Proxy.newProxyInstance(
                  PostgresClaimTest.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p, m, a) -> {
                    if (m.getName().equals("prepareStatement")) {
                      statements.add((String) a[0]);
                    }
                    return invoke(m, c, a);
                  });
            });
  }

  private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private int waitingForLocks() {
    try (Connection c = db.unpooled().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) {
      rs.next();
      return rs.getInt(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError("timed out waiting for a latch");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
