package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.Key;
import dev.kvmq.store.KvStoreException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A pool of one connection and a store that listens for changes: the listener holds the only
 * connection for as long as it runs, so every call fails to borrow one. A new user's test saw only
 * the pool's own message ("Connection is not available ... total=1, active=1"); the store's error
 * now says that its listener holds one and how to size the pool. Without a listener the same pool
 * serves the calls and the error says nothing of it.
 */
@PostgresTest
class PostgresPoolOfOneTest {

  @Test
  void aCallThatFindsThePoolHeldByTheListenerSaysSo(TestSchema fresh) {
    PoolOfOne pool = new PoolOfOne(fresh.db().unpooled());
    try (PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      assertThat(store.get(Key.of("k"))).as("served while nothing listens").isEmpty();

      store.subscribe(Key.of("q"), () -> {});
      TestDatabase.await(
          "the listener to hold the pool's connection", Duration.ofSeconds(30), pool::exhausted);

      assertThatThrownBy(() -> store.get(Key.of("k")))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining("can't get a connection")
          .hasMessageContaining("change listener holds one connection of this DataSource")
          .hasMessageContaining("size the pool for it");
    }
  }

  @Test
  void withoutAListenerTheErrorSaysNothingOfIt(TestSchema fresh) throws Exception {
    PoolOfOne pool = new PoolOfOne(fresh.db().unpooled());
    try (PostgresKvStore store = PostgresKvStore.builder(pool).schema(fresh.name()).build()) {
      assertThat(store.get(Key.of("k"))).isEmpty();
      try (Connection held = pool.getConnection()) {
        assertThatThrownBy(() -> store.get(Key.of("k")))
            .isInstanceOf(KvStoreException.class)
            .hasMessageContaining("can't get a connection")
            .hasMessageNotContaining("listener");
      }
    }
  }

  /**
   * Lends at most one connection at a time; a second borrower is refused at once, as a real pool
   * refuses after its timeout.
   */
  static final class PoolOfOne extends SimpleDataSource {
    private final DataSource target;
    private final AtomicInteger out = new AtomicInteger();

    PoolOfOne(DataSource target) {
      this.target = target;
    }

    boolean exhausted() {
      return out.get() >= 1;
    }

    @Override
    public Connection getConnection() throws SQLException {
      if (out.incrementAndGet() > 1) {
        out.decrementAndGet();
        throw new SQLTransientConnectionException(
            "Connection is not available (total=1, active=1, idle=0)", "08001");
      }
      Connection real;
      try {
        real = target.getConnection();
      } catch (SQLException | RuntimeException e) {
        out.decrementAndGet();
        throw e;
      }
      AtomicInteger closes = new AtomicInteger();
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("close") && closes.getAndIncrement() == 0) {
                  out.decrementAndGet();
                }
                try {
                  return method.invoke(real, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }
  }
}
