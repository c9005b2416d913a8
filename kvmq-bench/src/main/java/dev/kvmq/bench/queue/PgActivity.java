package dev.kvmq.bench.queue;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What one database's connections were doing while a system ran ({@code --pg-activity on}): {@code
 * pg_stat_activity} read about every {@value #PERIOD_MILLIS} ms on a connection of its own, one
 * statement per read (so no transaction of the sampler's holds back vacuum), the connections that
 * were not idle noted by state, wait event and the start of their statement. {@link #print} then
 * gives, for a time window (a drain's), the average number of connections in each of those
 * conditions: a profile of where the database's side of a drain waits, the same for every system.
 *
 * <p>The reads cost the machine some CPU (one query every few milliseconds), so a drain sampled is
 * slower than one that is not: read the shares, not the drain's figure.
 *
 * <p>Threads: one sampling thread of its own, started by {@link #start} and ended by {@link #stop};
 * the samples are read only after it ended.
 */
final class PgActivity {

  /** The pause between two reads. */
  static final long PERIOD_MILLIS = 4;

  private static final String SQL =
      "SELECT pid, state, coalesce(wait_event_type || ':' || wait_event, 'no wait event'),"
          + " left(regexp_replace(query, '\\s+', ' ', 'g'), 44) FROM pg_stat_activity"
          + " WHERE datname = ? AND pid <> pg_backend_pid() AND state <> 'idle'";

  /** One connection that was not idle at one read. */
  private record Busy(long at, String condition) {}

  private final String database;
  private final Thread thread;
  private final List<Busy> busy = new ArrayList<>();
  private final List<Long> reads = new ArrayList<>();
  private volatile boolean stopped;
  private volatile Exception failure;

  private PgActivity(DataSource server, String database) {
    this.database = database;
    this.thread = new Thread(() -> sample(server), "pg-activity-" + database);
    this.thread.setDaemon(true);
  }

  /**
   * Starts sampling {@code database}'s connections.
   *
   * @param server a data source of the server (any database of it)
   * @param database the database whose connections are read
   * @return the sampler, running
   */
  static PgActivity start(DataSource server, String database) {
    PgActivity a = new PgActivity(server, database);
    a.thread.start();
    return a;
  }

  private void sample(DataSource server) {
    try (Connection c = server.getConnection();
        PreparedStatement ps = c.prepareStatement(SQL)) {
      ps.setString(1, database);
      while (!stopped) {
        long now = System.currentTimeMillis();
        try (ResultSet rs = ps.executeQuery()) {
          reads.add(now);
          while (rs.next()) {
            busy.add(
                new Busy(now, rs.getString(2) + ", " + rs.getString(3) + ": " + rs.getString(4)));
          }
        }
        Thread.sleep(PERIOD_MILLIS);
      }
    } catch (SQLException e) {
      failure = e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Stops sampling and waits for the sampling thread.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  void stop() throws InterruptedException {
    stopped = true;
    thread.join();
  }

  /**
   * Prints, for the reads between {@code from} and {@code to} (wall-clock milliseconds), the
   * average number of connections in each condition seen, most first, down to 0.01.
   *
   * @param out where to print
   * @param what the window's name, for the lines
   * @param from the window's start
   * @param to the window's end
   */
  void print(PrintStream out, String what, long from, long to) {
    if (failure != null) {
      out.println("#   pg_activity " + what + ": sampling failed: " + failure.getMessage());
      return;
    }
    long n = reads.stream().filter(t -> t >= from && t <= to).count();
    if (n == 0) {
      out.println("#   pg_activity " + what + ": no read in the window");
      return;
    }
    Map<String, Integer> counts = new HashMap<>();
    for (Busy b : busy) {
      if (b.at >= from && b.at <= to) {
        counts.merge(b.condition, 1, Integer::sum);
      }
    }
    out.printf(
        Locale.ROOT,
        "#   pg_activity %s: %d reads in %.1f s, average connections (state, wait event:"
            + " statement)%n",
        what,
        n,
        (to - from) / 1000.0);
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder()))
        .filter(e -> e.getValue() / (double) n >= 0.005)
        .forEach(
            e -> out.printf(Locale.ROOT, "#     %.2f %s%n", e.getValue() / (double) n, e.getKey()));
  }
}
