package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The LISTEN side: its own DataSource and thread factory, its failures, its shutdown. */
@PostgresTest
class PostgresListenerTest {

  private static final Duration WAIT = Duration.ofSeconds(20);

  private TestDatabase db;
  private String schema;

  @BeforeEach
  void freshSchema(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
  }

  @Test
  void theListenerUsesItsOwnDataSourceAndThreadFactoryAndStopsOnClose() {
    List<Thread> made = new CopyOnWriteArrayList<>();
    PostgresKvStore listening =
        PostgresKvStore.builder(db.pool())
            .schema(schema)
            .listenerDataSource(db.unpooled())
            .threadFactory(
                r -> {
                  Thread t = new Thread(r, "test-listener");
                  t.setDaemon(true);
                  made.add(t);
                  return t;
                })
            .build();
    try (PostgresKvStore other = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
      heardAcross(other, listening, 1);
      assertThat(made).as("the listener thread").hasSize(1);
      assertThat(made.get(0).isAlive()).isTrue();

      // The first commit through the store starts its notifier thread, from the same factory.
      heardAcross(listening, other, 2);
      assertThat(made).as("the listener and notifier threads").hasSize(2).allMatch(Thread::isAlive);
    } finally {
      listening.close();
    }
    assertThat(made).as("close() stops the store's threads").noneMatch(Thread::isAlive);
  }

  @Test
  void closeGivesTheListenerConnectionBackToItsPoolWithoutItsListenInsteadOfAbortingIt()
      throws Exception {
    try (TestPool listenerPool = new TestPool(db.unpooled())) {
      PostgresKvStore listening =
          PostgresKvStore.builder(db.pool())
              .schema(schema)
              .listenerDataSource(listenerPool)
              .build();
      try (PostgresKvStore other = PostgresKvStore.builder(db.pool()).schema(schema).build()) {
        heardAcross(other, listening, 1);
        assertThat(listenerPool.idle()).as("the listener holds its connection").isZero();
      } finally {
        listening.close();
      }
      // An aborted connection is dropped by a pool (HikariCP logs it as broken, with a stack
      // trace); a returned one waits to be reused, and must not listen any more.
      assertThat(listenerPool.idle()).as("the listener's connection, returned").isEqualTo(1);
      try (Connection reused = listenerPool.getConnection();
          java.sql.Statement s = reused.createStatement();
          java.sql.ResultSet channels = s.executeQuery("SELECT pg_listening_channels()")) {
        assertThat(channels.next()).as("a channel still listened to").isFalse();
      }
    }
  }

  /**
   * Subscribes {@code hearing} to {@code ["q"]}, commits {@code ["q", n]} through {@code from}, and
   * waits until it is heard.
   */
  private static void heardAcross(PostgresKvStore from, PostgresKvStore hearing, long n) {
    AtomicInteger heard = new AtomicInteger();
    hearing.subscribe(Key.of("q"), heard::incrementAndGet);
    TestDatabase.await("listening", WAIT, hearing::isListening);
    int before = heard.get();
    from.commit(AtomicOperation.builder().set(Key.of("q", n), new byte[] {(byte) n}).build());
    TestDatabase.await("the commit heard on the other node", WAIT, () -> heard.get() > before);
  }

  @Test
  void aDataSourceThatHidesTheDriverMakesTheStoreUnhealthyWithTheReason() {
    try (PostgresKvStore store =
        PostgresKvStore.builder(db.pool())
            .schema(schema)
            .listenerDataSource(hidingTheDriver(db.unpooled()))
            .build()) {
      AtomicInteger woken = new AtomicInteger();
      store.subscribe(Key.of("q"), woken::incrementAndGet);
      TestDatabase.await("unhealthy", WAIT, () -> !store.isHealthy());
      assertThat(store.failure().orElseThrow())
          .contains("org.postgresql.PGConnection")
          .contains("listenerDataSource");
      // Commits still work, and this node's own subscribers still hear of them.
      assertThat(
              store
                  .commit(AtomicOperation.builder().set(Key.of("q", 1L), new byte[] {1}).build())
                  .ok())
          .isTrue();
      assertThat(woken.get()).isPositive();
    }
  }

  @Test
  void aCommitSucceedsWhenTheThreadFactoryMakesNoNotifierThread() {
    // A container's factory may refuse threads (while it shuts down, say): the commit has
    // happened by then, and must not be reported as failed; the notification is dropped.
    AtomicInteger asked = new AtomicInteger();
    try (PostgresKvStore refused =
        PostgresKvStore.builder(db.pool())
            .schema(schema)
            .threadFactory(
                r -> {
                  asked.incrementAndGet();
                  return null;
                })
            .build()) {
      assertThat(
              refused
                  .commit(AtomicOperation.builder().set(Key.of("q", 1L), new byte[] {1}).build())
                  .ok())
          .isTrue();
      assertThat(
              refused
                  .commit(AtomicOperation.builder().set(Key.of("q", 2L), new byte[] {2}).build())
                  .ok())
          .isTrue();
      assertThat(refused.get(Key.of("q", 2L))).isPresent();
      assertThat(asked.get()).as("asked again at the next commit").isEqualTo(2);
    }
  }

  /** Connections that are not wrappers of anything, as some pools give out. */
  private static DataSource hidingTheDriver(DataSource target) {
    return (DataSource)
        Proxy.newProxyInstance(
            PostgresListenerTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = method.invoke(target, args);
              if (!(result instanceof Connection c)) {
                return result;
              }
              return Proxy.newProxyInstance(
                  PostgresListenerTest.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p, m, a) ->
                      switch (m.getName()) {
                        case "isWrapperFor" -> false;
                        case "unwrap" -> throw new java.sql.SQLException("not a wrapper");
                        default -> m.invoke(c, a);
                      });
            });
  }
}
