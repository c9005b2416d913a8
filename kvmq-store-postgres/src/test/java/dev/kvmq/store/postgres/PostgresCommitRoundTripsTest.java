package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A commit is one round trip (its call and its {@code COMMIT} in one message) and a claim two, on
 * every connection, also after the connection ran operations of more than 48 keys (taken under the
 * store's own lock, their lock arrays bound as nulls). A null of no type made pgjdbc describe the
 * prepared call once it was prepared on the server (its fifth use); from then on pgjdbc could not
 * bound the size of the call's result and sent a {@code Sync} after it, before the {@code COMMIT}:
 * every later commit on that connection took a round trip more, with its locks held across it. The
 * round trips are counted as pgjdbc's protocol log has them: one {@code Sync} message each.
 */
@PostgresTest
class PostgresCommitRoundTripsTest {

  private static final String PROTOCOL_LOG = "org.postgresql.core.v3.QueryExecutorImpl";

  private TestDatabase db;
  private String schema;
  private PostgresKvStore store;

  @BeforeEach
  void open(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    store = PostgresKvStore.builder(db.pool()).schema(schema).build();
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void aCommitIsOneRoundTripAndAClaimTwoAlsoAfterOperationsOfManyKeysOnTheConnection() {
    assertThat(store.commit(set("schema", 0)).ok()).isTrue(); // the store's first use sets it up
    try (Syncs syncs = Syncs.onThisThread()) {
      assertThat(store.commit(set("before", 0)).ok()).isTrue();
      assertThat(syncs.taken()).as("a commit, before any big operation").isEqualTo(1);
    }
    // one connection (the test pool reuses it, one thread): past pgjdbc's prepare threshold (5)
    for (int round = 0; round < 8; round++) {
      AtomicOperation.Builder big = AtomicOperation.builder();
      for (long k = 0; k < 60; k++) {
        big.set(Key.of("big", (long) round, k), new byte[] {1});
      }
      assertThat(store.commit(big.build()).ok()).isTrue();
    }
    List<AtomicOperation> fill = new ArrayList<>();
    for (long n = 0; n < 8; n++) {
      fill.add(
          AtomicOperation.builder()
              .set(Key.of("idx", n), new byte[0])
              .set(Key.of("rec", n), new byte[] {0})
              .build());
    }
    try (Syncs syncs = Syncs.onThisThread()) {
      assertThat(store.commit(set("after", 1)).ok()).isTrue();
      assertThat(syncs.taken()).as("a commit, after eight big operations").isEqualTo(1);

      assertThat(store.commitAll(fill)).hasSize(8).allMatch(CommitResult::ok);
      assertThat(syncs.taken()).as("a batch of eight operations, one transaction").isEqualTo(1);

      assertThat(store.claim(KeyRange.prefix(Key.of("idx")), 4, new TakeAll()))
          .hasSize(4)
          .allMatch(CommitResult::ok);
      assertThat(syncs.taken())
          .as("a claim: the lock-and-read, then the call and its COMMIT")
          .isEqualTo(2);
    }
    assertThat(store.list(KeyRange.prefix(Key.of("idx")), 10, false)).hasSize(4);
  }

  private static AtomicOperation set(String name, long n) {
    return AtomicOperation.builder().set(Key.of(name, n), new byte[] {1}).build();
  }

  /**
   * Deletes every index entry it is given, checked; its record key rule lets the store read the
   * records with the index rows, as the kernel's claims do.
   */
  private static final class TakeAll implements KvStore.ClaimPlanner {
    @Override
    public Key recordKey(Key indexKey) {
      return Key.of("rec", indexKey.getLong(1));
    }

    @Override
    public Optional<RecordKeyRule> recordKeyRule() {
      return Optional.of(new RecordKeyRule(Key.of("rec"), Key.of("idx").encoded().length));
    }

    @Override
    public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
      List<AtomicOperation> ops = new ArrayList<>();
      for (KvEntry e : index) {
        ops.add(AtomicOperation.builder().check(e).delete(e.key()).build());
      }
      return ops;
    }
  }

  /**
   * Counts the {@code Sync} messages pgjdbc sends on the thread that made it (its protocol log at
   * FINEST), each the end of a round trip; restores the log's level when closed.
   */
  private static final class Syncs extends Handler implements AutoCloseable {
    private final Logger logger = Logger.getLogger(PROTOCOL_LOG);
    private final Level before = logger.getLevel();
    private final long thread = Thread.currentThread().getId();
    private final AtomicInteger count = new AtomicInteger();

    static Syncs onThisThread() {
      Syncs s = new Syncs();
      s.logger.setLevel(Level.FINEST);
      s.logger.addHandler(s);
      return s;
    }

    /** The Syncs sent since the last call (or since it was made). */
    int taken() {
      return count.getAndSet(0);
    }

    @Override
    public void publish(LogRecord r) {
      if (r.getLongThreadID() == thread
          && r.getMessage() != null
          && r.getMessage().contains("FE=> Sync")) {
        count.incrementAndGet();
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
      logger.removeHandler(this);
      logger.setLevel(before);
    }
  }
}
