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
 * pooled connection per call, {@code pooled} true) and {@link ConnectionStore}'s (the
 * application's, in its transaction) run the same query; on a pooled connection it comes after a
 * statement that plans it with {@code enable_seqscan} off (see {@link Tables}), in the same
 * message.
 */
final class Reads {

  private Reads() {}

  static Optional<KvEntry> get(Connection c, Tables tables, Key key, boolean pooled)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(pooled ? tables.getPooled : tables.get)) {
      ps.setBytes(1, key.encoded());
      try (ResultSet rs = rows(ps, pooled)) {
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
      Connection c, Tables tables, KeyRange range, int limit, boolean reverse, boolean pooled)
      throws SQLException {
    List<KvEntry> result = new ArrayList<>(Math.min(limit, 64));
    String sql =
        reverse
            ? (pooled ? tables.listDescPooled : tables.listDesc)
            : (pooled ? tables.listAscPooled : tables.listAsc);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setBytes(1, range.lowerBound());
      ps.setBytes(2, range.upperBound());
      ps.setLong(3, limit);
      try (ResultSet rs = rows(ps, pooled)) {
        while (rs.next()) {
          result.add(Jdbc.entry(rs));
        }
      }
    }
    return Collections.unmodifiableList(result);
  }

  /** The first entry of each range, in the order of {@code ranges}, empty where it has none. */
  static List<Optional<KvEntry>> firstEntries(
      Connection c, Tables tables, List<KeyRange> ranges, boolean pooled) throws SQLException {
    byte[][] lower = new byte[ranges.size()][];
    byte[][] upper = new byte[ranges.size()][];
    for (int i = 0; i < ranges.size(); i++) {
      lower[i] = ranges.get(i).lowerBound();
      upper[i] = ranges.get(i).upperBound();
    }
    List<Optional<KvEntry>> result = new ArrayList<>(ranges.size());
    try (PreparedStatement ps =
        c.prepareStatement(pooled ? tables.firstEntriesPooled : tables.firstEntries)) {
      ps.setObject(1, lower);
      ps.setObject(2, upper);
      try (ResultSet rs = rows(ps, pooled)) {
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

  static long count(Connection c, Tables tables, KeyRange range, boolean pooled)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(pooled ? tables.countPooled : tables.count)) {
      ps.setBytes(1, range.lowerBound());
      ps.setBytes(2, range.upperBound());
      try (ResultSet rs = rows(ps, pooled)) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Runs {@code ps} and returns its query's rows: the second result where a statement that plans it
   * comes first ({@code prefixed}), the only one otherwise.
   */
  static ResultSet rows(PreparedStatement ps, boolean prefixed) throws SQLException {
    if (!prefixed) {
      return ps.executeQuery();
    }
    ps.execute();
    if (!ps.getMoreResults()) {
      throw new SQLException("a read returned no rows after its planner setting", "XX000");
    }
    return ps.getResultSet();
  }
}
