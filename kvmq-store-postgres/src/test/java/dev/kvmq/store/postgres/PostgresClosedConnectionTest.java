package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.Codecs;
import dev.kvmq.PushFailedException;
import dev.kvmq.Queue;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStoreException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A pool that hands out connections the driver has already closed, and applies {@code
 * setAutoCommit} only when the next statement runs, as WildFly's pool for a {@code web.xml} {@code
 * <data-source>} does after a database restart: the commit's first call to the driver fails with
 * SQLState 08003 before anything is sent. The store knows the commit was not applied: it retries it
 * once on another connection, and if that one is closed too, says it was not applied rather than
 * that its outcome is unknown.
 */
@PostgresTest
class PostgresClosedConnectionTest {

  @Test
  void aCommitOnAConnectionTheDriverHadClosedIsRetriedOnAnother(TestSchema fresh) {
    ClosedFirst pool = new ClosedFirst(fresh.db().unpooled());
    try (PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      store.commit(AtomicOperation.builder().set(Key.of("ready"), new byte[0]).build());

      pool.closedNext.set(1);
      assertThat(
              store
                  .commit(AtomicOperation.builder().set(Key.of("job", 1L), new byte[] {1}).build())
                  .ok())
          .isTrue();

      assertThat(pool.closedNext).hasValue(0);
      assertThat(store.get(Key.of("job", 1L))).isPresent();
    }
  }

  @Test
  void aCommitThatFoundOnlyClosedConnectionsIsKnownNotApplied(TestSchema fresh) {
    ClosedFirst pool = new ClosedFirst(fresh.db().unpooled());
    try (PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      store.commit(AtomicOperation.builder().set(Key.of("ready"), new byte[0]).build());

      pool.closedNext.set(2);
      assertThatThrownBy(
              () ->
                  store.commit(
                      AtomicOperation.builder().set(Key.of("job", 2L), new byte[] {2}).build()))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("08003")
          .hasMessageNotContaining("outcome is unknown");

      assertThat(store.get(Key.of("job", 2L))).isEmpty();
      assertThat(
              store
                  .commit(AtomicOperation.builder().set(Key.of("job", 2L), new byte[] {2}).build())
                  .ok())
          .as("the next commit gets a live connection")
          .isTrue();
    }
  }

  /**
   * A push through a queue on such a store throws {@link PushFailedException}: it names the job the
   * commit would have stored, and its message carries the store's word that the commit was not
   * applied.
   */
  @Test
  void aPushThatFoundOnlyClosedConnectionsNamesItsJobAndSaysItWasNotApplied(TestSchema fresh) {
    ClosedFirst pool = new ClosedFirst(fresh.db().unpooled());
    try (PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      Queue<String> queue = Queue.builder(store, "closed", Codecs.utf8()).build();
      queue.push("warm"); // the schema exists and the pool has a live connection

      pool.closedNext.set(2);
      PushFailedException e =
          catchThrowableOfType(PushFailedException.class, () -> queue.push("a"));

      assertThat(e.jobIds()).hasSize(1);
      assertThat(e)
          .hasMessageContaining("job " + e.jobIds().get(0) + " of queue closed")
          .hasMessageContaining("08003")
          .hasMessageNotContaining("outcome is unknown");
      assertThat(queue.job(e.jobIds().get(0))).as("not applied, as the message says").isEmpty();
    }
  }

  /**
   * Hands the test's thread {@code closedNext} connections that the driver has closed, then live
   * ones; other threads (the store's notifier) always get live ones.
   */
  private static final class ClosedFirst extends SimpleDataSource {
    final AtomicInteger closedNext = new AtomicInteger();
    private final DataSource target;
    private final Thread owner = Thread.currentThread();

    ClosedFirst(DataSource target) {
      this.target = target;
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection physical = target.getConnection();
      if (Thread.currentThread() != owner
          || closedNext.getAndUpdate(n -> Math.max(0, n - 1)) == 0) {
        return physical;
      }
      physical.close();
      return (Connection)
          Proxy.newProxyInstance(
              ClosedFirst.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "setAutoCommit", "close" -> {
                    return null; // applied lazily, at the next statement, as WildFly's pool does
                  }
                  case "getAutoCommit" -> {
                    return true;
                  }
                  default -> {
                    try {
                      return method.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  }
                }
              });
    }
  }
}
