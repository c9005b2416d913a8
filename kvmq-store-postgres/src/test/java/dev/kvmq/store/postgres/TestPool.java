package dev.kvmq.store.postgres;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import javax.sql.DataSource;

/**
 * The smallest connection pool that behaves like a real one where the store can tell: it reuses
 * connections (so a restarted database leaves stale ones in it) and drops those the driver has
 * closed after a failure. Tests only: users bring their own pool.
 */
final class TestPool extends SimpleDataSource implements AutoCloseable {

  private final DataSource target;
  private final Deque<Connection> idle = new ArrayDeque<>();
  private boolean closed;

  TestPool(DataSource target) {
    this.target = target;
  }

  @Override
  public Connection getConnection() throws SQLException {
    Connection physical;
    synchronized (this) {
      if (closed) {
        throw new SQLException("the test pool is closed");
      }
      physical = idle.pollFirst();
    }
    if (physical == null) {
      physical = target.getConnection();
    }
    return (Connection)
        Proxy.newProxyInstance(
            TestPool.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new Handler(physical));
  }

  /** How many connections wait in the pool to be reused. */
  synchronized int idle() {
    return idle.size();
  }

  /** Closes every idle connection; borrowed ones are closed when returned. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      for (Connection c : idle) {
        closeQuietly(c);
      }
      idle.clear();
    }
  }

  private void giveBack(Connection physical) {
    boolean keep;
    try {
      keep = !physical.isClosed() && physical.getAutoCommit();
    } catch (SQLException e) {
      keep = false;
    }
    synchronized (this) {
      if (keep && !closed) {
        idle.addFirst(physical);
        return;
      }
    }
    closeQuietly(physical);
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // a broken connection: nothing to release
    }
  }

  private final class Handler implements InvocationHandler {
    private final Connection physical;
    private boolean returned;

    Handler(Connection physical) {
      this.physical = physical;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      switch (method.getName()) {
        case "close" -> {
          if (!returned) {
            returned = true;
            giveBack(physical);
          }
          return null;
        }
        case "isClosed" -> {
          return returned || physical.isClosed();
        }
        case "abort" -> {
          returned = true;
          return method.invoke(physical, args);
        }
        default -> {
          if (returned) {
            throw new SQLException("connection already returned to the pool");
          }
          try {
            return method.invoke(physical, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        }
      }
    }
  }
}
