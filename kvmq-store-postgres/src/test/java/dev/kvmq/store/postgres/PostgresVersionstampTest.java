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
 * Schema version 2's versionstamps: a sequence read after per-key advisory locks. Commits on one
 * key wait for each other and get increasing versionstamps in their commit order; commits on
 * different keys don't wait for each other, and may become visible in another order than their
 * versionstamps (which the SPI allows: a versionstamp is greater than those of every commit that
 * finished before its commit started; PostgresTwoNodesTest checks that on real timings from two
 * nodes).
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
  void lockKeysAreSortedDistinctNeverTheStoreLockAndNoneForHugeBatches() {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < KeyLocks.MAX_KEY_LOCKS; i++) {
      keys.add(Key.of("k", (long) i).encoded());
    }
    Integer[] locks = KeyLocks.lockKeys(keys, keys.subList(0, 10));
    assertThat(locks).hasSize(KeyLocks.MAX_KEY_LOCKS).doesNotContain(0).isSorted();
    assertThat(KeyLocks.lockKeys(keys, List.of())).containsExactly(locks);
    assertThat(KeyLocks.lockHash(Key.of("k", 1L).encoded()))
        .isEqualTo(KeyLocks.lockHash(Key.of("k", 1L).encoded()));
    List<byte[]> many = new ArrayList<>();
    for (int i = 0; i <= KeyLocks.MAX_KEY_LOCKS; i++) {
      many.add(Key.of("m", (long) i).encoded());
    }
    assertThat(KeyLocks.lockKeys(many, List.of())).as("a whole-store lock instead").isNull();
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
    Tables tables = new Tables(schema, "kvmq");
    try (PreparedStatement ps = c.prepareStatement(tables.commit)) {
      ps.setInt(1, 1);
      ps.setInt(2, tables.lockSpace);
      ps.setArray(3, c.createArrayOf("int4", KeyLocks.lockKeys(List.of(), List.of(key.encoded()))));
      ps.setArray(4, c.createArrayOf("int4", new Integer[0]));
      ps.setArray(5, c.createArrayOf("bytea", new byte[0][]));
      ps.setArray(6, c.createArrayOf("int8", new Long[0]));
      ps.setArray(7, c.createArrayOf("int4", new Integer[] {1}));
      ps.setArray(8, c.createArrayOf("bytea", new byte[][] {key.encoded()}));
      ps.setArray(9, c.createArrayOf("bytea", new byte[][] {{1}}));
      ps.setString(10, tables.channel);
      ps.setArray(11, c.createArrayOf("text", new String[0]));
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
