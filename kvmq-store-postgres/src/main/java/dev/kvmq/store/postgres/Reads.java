package dev.kvmq.store.postgres;

import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The read statements of the store, on whatever connection the caller gives: the store's own (a
 * pooled connection per call), a claim's transaction and {@link ConnectionStore}'s (the
 * application's, in its transaction) run the same query, planned with {@code enable_seqscan} off in
 * the way that fits the connection ({@link Where}, and {@link Tables} for why).
 */
final class Reads {

  private Reads() {}

  /** Where a read runs: which form of its statement it takes, and the results before its rows. */
  enum Where {
    /** In a claim's transaction, which set {@code enable_seqscan} off: the plain statement. */
    CLAIM(0),
    /** On a pooled connection in auto-commit mode: after {@code set_config(..., true)}. */
    POOLED(1),
    /** In the application's transaction: in a savepoint, after {@code SET LOCAL}. */
    CALLERS(2);

    private final int skipped;

    Where(int skipped) {
      this.skipped = skipped;
    }

    /** The form of {@code read} for this place. */
    String pick(Tables.Read read) {
      return switch (this) {
        case CLAIM -> read.plain();
        case POOLED -> read.pooled();
        case CALLERS -> read.inCallers();
      };
    }
  }

  static Optional<KvEntry> get(Connection c, Tables tables, Key key, Where where)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(where.pick(tables.get))) {
      ps.setBytes(1, key.encoded());
      try (ResultSet rs = rows(ps, where)) {
        return rs.next() ? Optional.of(Jdbc.entry(rs)) : Optional.empty();
      }
    }
  }

  /** The entries {@code readKeys} found, in the order of {@code keys}, empty where absent. */
  static List<Optional<KvEntry>> inKeyOrder(List<Key> keys, Map<ByteBuffer, KvEntry> found) {
    List<Optional<KvEntry>> result = new ArrayList<>(keys.size());
    for (Key k : keys) {
      result.add(Optional.ofNullable(found.get(ByteBuffer.wrap(k.encoded()))));
    }
    return Collections.unmodifiableList(result);
  }

  static List<KvEntry> list(
      Connection c, Tables tables, KeyRange range, int limit, boolean reverse, Where where)
      throws SQLException {
    List<KvEntry> result = new ArrayList<>(Math.min(limit, 64));
    String sql = reverse ? where.pick(tables.listDesc) : where.pick(tables.listAsc);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setBytes(1, range.lowerBound());
      ps.setBytes(2, range.upperBound());
      ps.setLong(3, limit);
      try (ResultSet rs = rows(ps, where)) {
        while (rs.next()) {
          result.add(Jdbc.entry(rs));
        }
      }
    }
    return Collections.unmodifiableList(result);
  }

  /** The first entry of each range, in the order of {@code ranges}, empty where it has none. */
  static List<Optional<KvEntry>> firstEntries(
      Connection c, Tables tables, List<KeyRange> ranges, Where where) throws SQLException {
    byte[][] lower = new byte[ranges.size()][];
    byte[][] upper = new byte[ranges.size()][];
    for (int i = 0; i < ranges.size(); i++) {
      lower[i] = ranges.get(i).lowerBound();
      upper[i] = ranges.get(i).upperBound();
    }
    List<Optional<KvEntry>> result = new ArrayList<>(ranges.size());
    try (PreparedStatement ps = c.prepareStatement(where.pick(tables.firstEntries))) {
      ps.setObject(1, lower);
      ps.setObject(2, upper);
      try (ResultSet rs = rows(ps, where)) {
        while (rs.next()) {
          result.add(rs.getBytes(1) == null ? Optional.empty() : Optional.of(Jdbc.entry(rs)));
        }
      }
    }
    if (result.size() != ranges.size()) {
      throw new SQLException(
          "firstEntries read " + result.size() + " rows for " + ranges.size() + " ranges");
    }
    return Collections.unmodifiableList(result);
  }

  static long count(Connection c, Tables tables, KeyRange range, Where where) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(where.pick(tables.count))) {
      ps.setBytes(1, range.lowerBound());
      ps.setBytes(2, range.upperBound());
      try (ResultSet rs = rows(ps, where)) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Runs {@code ps}, a read in the form {@code where} picked, and returns the read's rows: the
   * results of the statements before it (the setting, the savepoint) are skipped, and those after
   * it (the savepoint's rollback and release) are left unread.
   */
  static ResultSet rows(PreparedStatement ps, Where where) throws SQLException {
    return rows(ps, where.skipped);
  }

  /** Runs {@code ps} and returns the rows of its statement after the first {@code skipped}. */
  static ResultSet rows(PreparedStatement ps, int skipped) throws SQLException {
    if (skipped == 0) {
      return ps.executeQuery();
    }
    ps.execute();
    boolean rows = false;
    for (int i = 0; i < skipped; i++) {
      rows = ps.getMoreResults();
    }
    if (!rows) {
      throw new SQLException("a read returned no rows after its planner setting", "XX000");
    }
    return ps.getResultSet();
  }
}
