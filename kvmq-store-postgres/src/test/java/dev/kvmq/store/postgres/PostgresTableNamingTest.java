package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two nodes that reach the same table by different names (one built with {@code schema(s)}, one
 * whose connections' search_path is {@code s}) take the same locks and hear each other: their
 * check-and-set commits on one key lose no update, and a commit on one wakes the other's
 * subscribers. Before, the locks and the channel were named after the configured name, so such
 * nodes lost updates and missed each other's notifications.
 */
@PostgresTest
class PostgresTableNamingTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Key COUNTER = Key.of("counter");

  @Test
  void aSchemaNamedInTheBuilderAndOneFoundOnTheSearchPathShareLocksAndNotifications(
      TestSchema fresh) throws Exception {
    TestDatabase db = fresh.db();
    try (TestPool searchPathPool = new TestPool(db.withSearchPath(fresh.name()));
        PostgresKvStore named = PostgresKvStore.builder(db.pool()).schema(fresh.name()).build();
        PostgresKvStore onPath = PostgresKvStore.builder(searchPathPool).build()) {
      named.commit(AtomicOperation.builder().set(COUNTER, bytes(0)).build());
      assertThat(onPath.get(COUNTER)).as("both reach the same table").isPresent();

      AtomicInteger woken = new AtomicInteger();
      onPath.subscribe(Key.of("wake"), woken::incrementAndGet);
      TestDatabase.await("listening", WAIT, onPath::isListening);
      int before = woken.get();
      named.commit(AtomicOperation.builder().set(Key.of("wake", 1L), bytes(1)).build());
      TestDatabase.await("the other node hears the commit", WAIT, () -> woken.get() > before);

      int perThread = 100;
      ExecutorService threads = Executors.newFixedThreadPool(4);
      List<Future<Integer>> done = new ArrayList<>();
      try {
        for (int t = 0; t < 4; t++) {
          PostgresKvStore store = t % 2 == 0 ? named : onPath;
          done.add(threads.submit(() -> increments(store, perThread)));
        }
        int applied = 0;
        for (Future<Integer> f : done) {
          applied += f.get();
        }
        assertThat(value(named.get(COUNTER)))
            .as("every check-and-set that committed counted once")
            .isEqualTo(applied)
            .isEqualTo(4 * perThread);
      } finally {
        threads.shutdownNow();
      }
    }
  }

  /** Increments the counter {@code times} times with check-and-set, retrying refused checks. */
  private static int increments(PostgresKvStore store, int times) {
    int applied = 0;
    while (applied < times) {
      KvEntry e = store.get(COUNTER).orElseThrow();
      if (store
          .commit(
              AtomicOperation.builder()
                  .check(COUNTER, e.versionstamp())
                  .set(COUNTER, bytes(value(Optional.of(e)) + 1))
                  .build())
          .ok()) {
        applied++;
      }
    }
    return applied;
  }

  private static byte[] bytes(int n) {
    return ByteBuffer.allocate(4).putInt(n).array();
  }

  private static int value(Optional<KvEntry> e) {
    return ByteBuffer.wrap(e.orElseThrow().value()).getInt();
  }
}
