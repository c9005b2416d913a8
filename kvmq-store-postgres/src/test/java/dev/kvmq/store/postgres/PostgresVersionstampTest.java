package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Schema version 4's locks and versionstamps: a sequence read after per-key advisory locks (the
 * keys of one job share one; a key only checked is locked shared). Commits on one key wait for each
 * other and get increasing versionstamps in their commit order; commits on different keys don't
 * wait for each other, and may become visible in another order than their versionstamps (which the
 * SPI allows: a versionstamp is greater than those of every commit that finished before its commit
 * started; PostgresTwoNodesTest checks that on real timings from two nodes).
 */
@PostgresTest
class PostgresVersionstampTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private TestDatabase db;
  private String schema;
  private PostgresKvStore store;

  @BeforeEach
  void open(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    store = PostgresKvStore.builder(db.pool()).schema(schema).build();
    store.commit(AtomicOperation.builder().set(Key.of("init"), new byte[0]).build());
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void aCommitThatFailsAfterItsFirstWriteLeavesNothingThoughItsCommitWentInTheSameMessage()
      throws SQLException {
    // A trigger fails the batch's second write, after the function wrote the first one; the
    // COMMIT sent with the call must be skipped, and the first write rolled back.
    try (Connection c = db.unpooled().getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE FUNCTION "
              + schema
              + ".refuse() RETURNS trigger LANGUAGE plpgsql AS $$"
              + " BEGIN IF NEW.value = '\\xff'::bytea THEN RAISE EXCEPTION 'refused by the test'; END IF;"
              + " RETURN NEW; END $$");
      st.execute(
          "CREATE TRIGGER refuse BEFORE INSERT ON "
              + schema
              + ".kvmq_kv FOR EACH ROW EXECUTE FUNCTION "
              + schema
              + ".refuse()");
    }
    AtomicInteger woken = new AtomicInteger();
    store.subscribe(Key.of("refused"), woken::incrementAndGet);
    TestDatabase.await("listening", WAIT, store::isListening);
    int wokenBefore = woken.get();
    assertThatThrownBy(
            () ->
                store.commitAll(
                    List.of(
                        AtomicOperation.builder()
                            .set(Key.of("refused", 1L), new byte[] {1})
                            .build(),
                        AtomicOperation.builder()
                            .set(Key.of("refused", 2L), new byte[] {(byte) 0xff})
                            .build())))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining("refused by the test")
        .hasMessageNotContaining("outcome is unknown");
    assertThat(store.list(KeyRange.prefix(Key.of("refused")), 10, false)).isEmpty();
    assertThat(woken.get()).as("a commit known to have failed wakes nobody").isEqualTo(wokenBefore);
    assertThat(
            store
                .commit(
                    AtomicOperation.builder().set(Key.of("refused", 3L), new byte[] {3}).build())
                .ok())
        .isTrue();
    assertThat(store.list(KeyRange.prefix(Key.of("refused")), 10, false)).hasSize(1);
  }

  @Test
  void checksOfOneKeyDoNotWaitForEachOtherAndAWriteOfItWaitsForThem() throws Exception {
    Key pause = Key.of("kvmq", "q", "startsPaused");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection raw = db.unpooled().getConnection()) {
      raw.setAutoCommit(false);
      commitFunction(raw, List.of(pause), Key.of("kvmq", "q", "job", "a")); // holds pause shared

      // a second check of the key does not wait (if it did, this get would time out)
      CommitResult alsoChecks =
          pool.submit(
                  () ->
                      store.commit(
                          AtomicOperation.builder()
                              .check(pause, AtomicOperation.ABSENT)
                              .set(Key.of("kvmq", "q", "job", "b"), new byte[] {1})
                              .build()))
              .get(1, TimeUnit.MINUTES);
      assertThat(alsoChecks.ok()).isTrue();

      Future<CommitResult> writes =
          pool.submit(
              () -> store.commit(AtomicOperation.builder().set(pause, new byte[0]).build()));
      TestDatabase.await(
          "the write of the checked key waits for the check", WAIT, () -> waitingForLocks() == 1);
      assertThat(writes.isDone()).isFalse();
      raw.commit();
      assertThat(writes.get(1, TimeUnit.MINUTES).ok()).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aCommitOnAnIndexEntryWaitsForOneOnItsJobsRecordAndNotForAnotherJobs() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection raw = db.unpooled().getConnection()) {
      raw.setAutoCommit(false);
      commitFunction(raw, List.of(), Key.of("kvmq", "q", "job", "a")); // holds job a's lock

      // another job's entry does not wait (if it did, this get would time out)
      CommitResult other =
          pool.submit(
                  () ->
                      store.commit(
                          AtomicOperation.builder()
                              .set(Key.of("kvmq", "q", "ready", 7L, "b"), new byte[0])
                              .build()))
              .get(1, TimeUnit.MINUTES);
      assertThat(other.ok()).isTrue();

      Future<CommitResult> same =
          pool.submit(
              () ->
                  store.commit(
                      AtomicOperation.builder()
                          .set(Key.of("kvmq", "q", "ready", 7L, "a"), new byte[0])
                          .build()));
      TestDatabase.await(
          "job a's ready entry waits for job a's record", WAIT, () -> waitingForLocks() == 1);
      assertThat(same.isDone()).isFalse();
      raw.commit();
      assertThat(same.get(1, TimeUnit.MINUTES).ok()).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void commitsOnOneKeyWaitForEachOtherAndCommitsOnOthersDoNot() throws Exception {
    Key k1 = Key.of("k1");
    Key k2 = Key.of("k2");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection raw = db.unpooled().getConnection()) {
      raw.setAutoCommit(false);
      long rawVs = commitFunction(raw, k1); // holds k1's lock until raw ends

      // Another key: does not wait, and its versionstamp comes after the open one's.
      CommitResult other = store.commit(AtomicOperation.builder().set(k2, new byte[] {2}).build());
      assertThat(other.versionstamp()).isGreaterThan(rawVs);

      // The same key: waits for the open transaction.
      Future<CommitResult> same =
          pool.submit(
              () -> store.commit(AtomicOperation.builder().set(k1, new byte[] {3}).build()));
      TestDatabase.await(
          "the commit on k1 waits for k1's lock", WAIT, () -> waitingForLocks() == 1);
      assertThat(same.isDone()).isFalse();
      raw.commit();
      CommitResult after = same.get(1, TimeUnit.MINUTES);

      // k1's writes: in commit order. Across keys: k1's first write committed after k2's
      // with a smaller versionstamp, which the SPI allows (the two commits overlapped).
      assertThat(after.versionstamp()).isGreaterThan(other.versionstamp());
      assertThat(store.get(k1).orElseThrow().versionstamp()).isEqualTo(after.versionstamp());
      assertThat(store.get(k2).orElseThrow().versionstamp()).isEqualTo(other.versionstamp());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anOperationOnTooManyKeysLocksTheWholeStore() throws Exception {
    AtomicOperation.Builder huge = AtomicOperation.builder();
    for (int i = 0; i <= KeyLocks.MAX_KEY_LOCKS; i++) {
      huge.set(Key.of("h", (long) i), new byte[0]);
    }
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection raw = db.unpooled().getConnection()) {
      raw.setAutoCommit(false);
      commitFunction(raw, Key.of("k1")); // an open commit on an unrelated key
      Future<CommitResult> batch = pool.submit(() -> store.commit(huge.build()));
      TestDatabase.await(
          "the huge operation waits for every open commit", WAIT, () -> waitingForLocks() == 1);
      raw.rollback();
      assertThat(batch.get(1, TimeUnit.MINUTES).ok()).isTrue();
      assertThat(store.get(Key.of("k1"))).isEmpty();
      assertThat(store.list(KeyRange.prefix(Key.of("h")))).hasSize(KeyLocks.MAX_KEY_LOCKS + 1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aBatchOfManySmallOperationsIsCutIntoTransactionsThatLockOnlyTheirKeys() throws Exception {
    List<AtomicOperation> many = new ArrayList<>();
    for (int i = 0; i < 3 * KeyLocks.MAX_KEY_LOCKS; i++) {
      many.add(AtomicOperation.builder().set(Key.of("s", (long) i), new byte[] {(byte) i}).build());
    }
    List<List<AtomicOperation>> parts = KeyLocks.lockGroups(many);
    assertThat(parts).hasSize(3).allSatisfy(p -> assertThat(p).hasSize(KeyLocks.MAX_KEY_LOCKS));
    assertThat(parts.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(many);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection raw = db.unpooled().getConnection()) {
      raw.setAutoCommit(false);
      commitFunction(raw, Key.of("k1")); // an open commit on an unrelated key does not stop it
      List<CommitResult> results =
          pool.submit(() -> store.commitAll(many)).get(1, TimeUnit.MINUTES);
      assertThat(results).hasSize(many.size()).allMatch(CommitResult::ok);
      // in order: each part's versionstamps come after the previous part's
      assertThat(results).extracting(CommitResult::versionstamp).isSorted();
      assertThat(store.list(KeyRange.prefix(Key.of("s")))).hasSize(many.size());
      raw.rollback();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void lockGroupsKeepAnOperationWholeAndCountSharedKeysOnce() {
    AtomicOperation.Builder big = AtomicOperation.builder();
    for (int i = 0; i <= KeyLocks.MAX_KEY_LOCKS; i++) {
      big.set(Key.of("b", (long) i), new byte[0]);
    }
    AtomicOperation small = AtomicOperation.builder().set(Key.of("x"), new byte[0]).build();
    AtomicOperation sameKey =
        AtomicOperation.builder().check(Key.of("x"), 0).set(Key.of("x"), new byte[0]).build();
    assertThat(KeyLocks.lockGroups(List.of(small, big.build(), small)))
        .extracting(List::size)
        .containsExactly(1, 1, 1);
    List<AtomicOperation> shared = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      shared.add(i % 2 == 0 ? small : sameKey); // one key in all: one lock
    }
    assertThat(KeyLocks.lockGroups(shared))
        .singleElement(InstanceOfAssertFactories.LIST)
        .hasSize(200);
  }

  /** Calls the commit function for one set of {@code key} in {@code c}'s open transaction. */
  private long commitFunction(Connection c, Key key) throws SQLException {
    return commitFunction(c, List.of(), key);
  }

  /**
   * Calls the commit function in {@code c}'s open transaction for one operation that checks that
   * each of {@code absent} is absent and sets {@code key}.
   */
  private long commitFunction(Connection c, List<Key> absent, Key key) throws SQLException {
    Tables tables = new Tables(schema, "kvmq");
    KeyLocks.Locks locks =
        KeyLocks.lockKeys(absent.stream().map(Key::encoded).toList(), List.of(key.encoded()));
    Integer[] checkOps = absent.stream().map(k -> 1).toArray(Integer[]::new);
    byte[][] checkKeys = absent.stream().map(Key::encoded).toArray(byte[][]::new);
    Long[] checkVs = absent.stream().map(k -> AtomicOperation.ABSENT).toArray(Long[]::new);
    try (PreparedStatement ps = c.prepareStatement(tables.commit)) {
      ps.setInt(1, 1);
      ps.setInt(2, tables.lockSpace);
      ps.setObject(3, locks.hashes());
      ps.setObject(4, locks.shared());
      ps.setArray(5, c.createArrayOf("int4", checkOps));
      ps.setArray(6, c.createArrayOf("bytea", checkKeys));
      ps.setArray(7, c.createArrayOf("int8", checkVs));
      ps.setArray(8, c.createArrayOf("int4", new Integer[] {1}));
      ps.setArray(9, c.createArrayOf("bytea", new byte[][] {key.encoded()}));
      ps.setArray(10, c.createArrayOf("bytea", new byte[][] {{1}}));
      ps.setString(11, tables.channel);
      ps.setArray(12, c.createArrayOf("text", new String[0]));
      ps.setBoolean(13, true);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return ((Long[]) rs.getArray(1).getArray())[0];
      }
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
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
