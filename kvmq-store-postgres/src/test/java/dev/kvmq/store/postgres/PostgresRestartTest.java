package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The database stops under a running store and starts again on the same data directory and port:
 * calls fail with {@link KvStoreException} meanwhile, the outage is logged once, and the store
 * (commits, reads, LISTEN) works again afterwards without being rebuilt.
 */
class PostgresRestartTest {

  private static final Duration RECOVERY = Duration.ofSeconds(60);

  private Path dataDirectory;
  private int port;
  private EmbeddedPostgres postgres;
  private TestPool pool;

  /** Held strongly: java.util.logging keeps loggers weakly. */
  private Logger storeLogger;

  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          logged.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  @BeforeEach
  void startDatabase() throws IOException {
    dataDirectory = Files.createTempDirectory("kvmq-pg-restart");
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    postgres = TestDatabase.startOn(dataDirectory, port);
    // The pool keeps the first instance's DataSource: same host and port after a restart.
    pool = new TestPool(postgres.getPostgresDatabase());
    storeLogger = Logger.getLogger(PostgresKvStore.class.getName());
    storeLogger.addHandler(capture);
  }

  @AfterEach
  void stopDatabase() throws IOException {
    storeLogger.removeHandler(capture);
    pool.close();
    if (postgres != null) {
      postgres.close();
    }
    try (Stream<Path> files = Files.walk(dataDirectory)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void callsFailWhileTheDatabaseIsDownAndWorkAgainAfterItRestarts() throws IOException {
    PostgresKvStore store = PostgresKvStore.builder(pool).build();
    PostgresKvStore otherNode = PostgresKvStore.builder(pool).build();
    AtomicInteger wakeUps = new AtomicInteger();
    store.subscribe(Key.of("q"), wakeUps::incrementAndGet);
    try (store;
        otherNode) {
      TestDatabase.await("listener connected", RECOVERY, () -> wakeUps.get() > 0);
      long before = set(store, Key.of("q", "before"), "kept");
      assertThat(store.isHealthy()).isTrue();

      postgres.close();
      postgres = null;

      for (int i = 0; i < 5; i++) {
        assertThatThrownBy(() -> set(store, Key.of("q", "during"), "lost"))
            .isInstanceOf(KvStoreException.class)
            .hasMessageContaining("kvmq_kv");
      }
      assertThatThrownBy(() -> store.get(Key.of("q", "before")))
          .isInstanceOf(KvStoreException.class);
      assertThat(store.isHealthy()).isFalse();
      assertThat(store.failure()).isPresent();
      // A store built during the outage fails too, and is not broken for later.
      PostgresKvStore lateNode = PostgresKvStore.builder(pool).schema(null).build();
      assertThatThrownBy(() -> lateNode.get(Key.of("q", "before")))
          .isInstanceOf(KvStoreException.class);

      postgres = TestDatabase.startOn(dataDirectory, port);

      TestDatabase.await(
          "a commit succeeds again", RECOVERY, () -> commits(store, Key.of("q", "after")));
      TestDatabase.await("the listener reconnects", RECOVERY, store::isHealthy);
      assertThat(
              new String(
                  store.get(Key.of("q", "before")).orElseThrow().value(), StandardCharsets.UTF_8))
          .isEqualTo("kept");
      assertThat(store.get(Key.of("q", "before")).orElseThrow().versionstamp()).isEqualTo(before);
      assertThat(store.get(Key.of("q", "after")).orElseThrow().versionstamp())
          .isGreaterThan(before);
      assertThat(lateNode.get(Key.of("q", "before"))).isPresent();
      lateNode.close();

      // Notifications cross nodes again.
      int heard = wakeUps.get();
      set(otherNode, Key.of("q", "remote"), "x");
      TestDatabase.await("the other node's commit is heard", RECOVERY, () -> wakeUps.get() > heard);
    }

    assertThat(warnings(store.nodeId() + ")"))
        .as("one warning per outage for calls, not one per failed call")
        .isEqualTo(1);
    assertThat(warnings(store.nodeId() + ", change listener)"))
        .as("one warning per outage for the listener")
        .isEqualTo(1);
    assertThat(
            logged.stream()
                .filter(r -> r.getLevel() == Level.INFO && r.getMessage().contains("works again")))
        .hasSizeGreaterThanOrEqualTo(2);
  }

  /**
   * The notifier logs one WARNING per outage and one INFO when it works again, not one WARNING with
   * a stack trace per batch it gave up (a new user's WildFly log had 157 in one outage: every
   * commit that fails with an unknown outcome hands its notifications over).
   */
  @Test
  void theNotifierLogsOneWarningPerOutageNotOnePerBatch() {
    java.util.concurrent.atomic.AtomicBoolean down =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    AtomicInteger connections = new AtomicInteger();
    javax.sql.DataSource flaky =
        (javax.sql.DataSource)
            java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("getConnection")) {
                    connections.incrementAndGet();
                    if (down.get()) {
                      throw new java.sql.SQLException("the database is down (a test)", "08001");
                    }
                  }
                  try {
                    return method.invoke(pool, args);
                  } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    Notifier notifier =
        new Notifier(
            flaky,
            new Tables(null, "kvmq"),
            java.util.concurrent.Executors.defaultThreadFactory(),
            "n1",
            PostgresKvStore.EVERYONE,
            100);
    try {
      for (int batch = 1; batch <= 4; batch++) {
        notifier.send(List.of("p" + batch));
        int tried = 3 * batch;
        TestDatabase.await(
            "batch " + batch + " given up", RECOVERY, () -> connections.get() >= tried);
      }
      down.set(false);
      notifier.send(List.of("p5"));
      TestDatabase.await(
          "the notifier works again",
          RECOVERY,
          () ->
              logged.stream()
                  .anyMatch(
                      r ->
                          r.getLevel() == Level.INFO
                              && r.getMessage().contains("(node n1, notifier) works again")));
    } finally {
      notifier.close();
    }
    assertThat(warnings("n1, notifier)")).as("one warning for four batches given up").isEqualTo(1);
  }

  private long warnings(String subjectEnd) {
    return logged.stream()
        .filter(r -> r.getLevel() == Level.WARNING)
        .filter(r -> r.getMessage().startsWith("PostgreSQL store kvmq_kv (node " + subjectEnd))
        .count();
  }

  private static boolean commits(KvStore store, Key key) {
    try {
      set(store, key, "after");
      return true;
    } catch (KvStoreException e) {
      return false;
    }
  }

  private static long set(KvStore store, Key key, String value) {
    CommitResult r =
        store.commit(
            AtomicOperation.builder().set(key, value.getBytes(StandardCharsets.UTF_8)).build());
    assertThat(r.ok()).isTrue();
    return r.versionstamp();
  }
}
