package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore.ClaimPlanner;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The claim path: one transaction that locks the first index rows no other transaction holds
 * ({@code FOR UPDATE SKIP LOCKED}), reads their records (in the same statement when the planner
 * gives a record key rule), plans, and commits through {@link Transactions}.
 *
 * <p><b>Locking.</b> No Java locks: each call runs on the caller's thread and connection. The index
 * rows' row locks, taken by the first statement, keep other claims off those entries until this
 * transaction ends; the planner runs while they are held.
 */
final class ClaimTransaction {

  private final Tables tables;
  private final Transactions transactions;

  ClaimTransaction(Tables tables, Transactions transactions) {
    this.tables = tables;
    this.transactions = transactions;
  }

  /**
   * One claim on a borrowed connection, as {@link dev.kvmq.store.postgres.PostgresKvStore#claim}
   * describes.
   */
  Transactions.Batch claim(
      Connection c, Jdbc.Attempt attempt, KeyRange range, int limit, ClaimPlanner planner)
      throws SQLException {
    c.setAutoCommit(false);
    List<AtomicOperation> ops = null;
    try {
      List<KvEntry> index = new ArrayList<>(Math.min(limit, 64));
      // the records read with the index rows, by the planner's rule; null where not
      List<Joined> joined = new ArrayList<>(Math.min(limit, 64));
      Optional<ClaimPlanner.RecordKeyRule> rule = planner.recordKeyRule();
      try (PreparedStatement ps =
          c.prepareStatement(rule.isPresent() ? tables.claimFirstWithRecords : tables.claimFirst)) {
        ps.setBytes(1, range.lowerBound());
        ps.setBytes(2, range.upperBound());
        ps.setLong(3, limit);
        if (rule.isPresent()) {
          ps.setBytes(4, rule.get().prefix().encoded());
          ps.setInt(5, rule.get().dropped() + 1); // SQL counts bytes from 1
        }
        try (ResultSet rs = Reads.rows(ps, 1)) { // after the SET LOCAL's result
          while (rs.next()) {
            index.add(Jdbc.entry(rs));
            byte[] recordKey = rule.isPresent() ? rs.getBytes(4) : null;
            joined.add(
                recordKey == null ? null : new Joined(recordKey, rs.getBytes(5), rs.getLong(6)));
          }
        }
      }
      List<Optional<KvEntry>> records =
          index.isEmpty() ? List.of() : records(c, planner, index, joined);
      ops =
          List.copyOf(
              Objects.requireNonNull(
                  planner.plan(Collections.unmodifiableList(index), records),
                  "planned operations"));
      if (ops.isEmpty()) {
        c.rollback();
        return new Transactions.Batch(List.of(), List.of());
      }
      return transactions.applyAndCommit(c, attempt, ops);
    } catch (SQLException | RuntimeException e) {
      transactions.failedInTransaction(c, attempt, ops, e);
      throw e;
    } finally {
      Jdbc.resetAutoCommit(c);
    }
  }

  /** A record read with an index row: its key's bytes, value and versionstamp. */
  private record Joined(byte[] key, byte[] value, long versionstamp) {}

  /**
   * The record of each index entry: the one read with it where its key is the planner's record key,
   * the others read in one more statement (none if the planner's rule holds).
   */
  private List<Optional<KvEntry>> records(
      Connection c, ClaimPlanner planner, List<KvEntry> index, List<Joined> joined)
      throws SQLException {
    List<Key> recordKeys = ClaimPlanner.recordKeys(planner, index);
    List<Optional<KvEntry>> records = new ArrayList<>(recordKeys.size());
    List<Key> missing = new ArrayList<>();
    for (int i = 0; i < recordKeys.size(); i++) {
      Joined j = joined.get(i);
      if (j != null && Arrays.equals(j.key, recordKeys.get(i).encoded())) {
        records.add(Optional.of(new KvEntry(recordKeys.get(i), j.value, j.versionstamp)));
      } else {
        records.add(null);
        missing.add(recordKeys.get(i));
      }
    }
    if (!missing.isEmpty()) {
      // in the claim's transaction: planned with the SET LOCAL of its first statement
      Map<ByteBuffer, KvEntry> found = transactions.readKeys(c, missing, Reads.Where.CLAIM);
      for (int i = 0; i < records.size(); i++) {
        if (records.get(i) == null) {
          records.set(
              i, Optional.ofNullable(found.get(ByteBuffer.wrap(recordKeys.get(i).encoded()))));
        }
      }
    }
    return Collections.unmodifiableList(records);
  }
}
