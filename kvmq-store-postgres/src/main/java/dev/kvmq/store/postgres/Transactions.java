package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.SubscriberRegistry;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The commit path on a borrowed connection: a read-only batch as one statement, a writing batch as
 * one transaction and one round trip ({@code BEGIN}, the commit function, {@code COMMIT} in one
 * message), what happens after a failure inside it, and what a commit announces to other nodes
 * through the {@link Notifier}.
 *
 * <p><b>Locking.</b> No Java locks: each call runs on the caller's thread and connection.
 * Consistency comes from PostgreSQL: the commit function takes an advisory lock per key (see {@link
 * KeyLocks}) before it checks and writes, and the locks last until the commit is flushed. Local
 * subscribers are called on the committing thread, after the commit.
 */
final class Transactions {

  /** Written keys are announced by their first this-many parts. */
  private static final int NOTIFY_PARTS = 3;

  private static final HexFormat HEX = HexFormat.of();

  /**
   * A batch of at most this many checks and writes runs a statement per check and per write: a push
   * (3), a handoff (5: the push's check, the two pauses', and the record and lease entry it
   * writes), a claim of one job (5).
   */
  private static final int FEW_KEYS = 5;

  private final Tables tables;
  private final Notifier notifier;
  private final SubscriberRegistry local;
  private final Vacuum vacuum;

  Transactions(Tables tables, Notifier notifier, SubscriberRegistry local, Vacuum vacuum) {
    this.tables = tables;
    this.notifier = notifier;
    this.local = local;
    this.vacuum = vacuum;
  }

  /**
   * Operations without mutations: one statement reads the checked keys and the latest versionstamp,
   * planned as {@link Reads} plans a read {@code where} it runs.
   */
  List<CommitResult> checkOnly(Connection c, List<AtomicOperation> operations, Reads.Where where)
      throws SQLException {
    Map<ByteBuffer, Long> current = new HashMap<>();
    long latest;
    try (PreparedStatement ps = c.prepareStatement(where.pick(tables.checkRead))) {
      ps.setObject(1, Jdbc.encoded(checkedKeys(operations)));
      try (ResultSet rs = Reads.rows(ps, where)) {
        if (!rs.next()) {
          throw Jdbc.missingCounterRow();
        }
        latest = rs.getLong(1);
        do {
          byte[] k = rs.getBytes(2);
          if (k != null) {
            current.put(ByteBuffer.wrap(k), rs.getLong(3));
          }
        } while (rs.next());
      }
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    for (AtomicOperation op : operations) {
      results.add(
          checksHold(op, current)
              ? CommitResult.committed(Math.max(1, latest))
              : CommitResult.checkFailed());
    }
    return Collections.unmodifiableList(results);
  }

  /** What a transaction gave: one result per operation, and the operations that wrote. */
  record Batch(List<CommitResult> results, List<AtomicOperation> applied) {}

  /**
   * One transaction, one round trip: {@code BEGIN}, the commit function (which locks the keys,
   * checks and writes, see schema-v5.sql) and {@code COMMIT} go in one message. The key locks are
   * held from the function's first statement to the end of the {@code COMMIT}.
   */
  Batch write(Connection c, Jdbc.Attempt attempt, List<AtomicOperation> operations)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      return applyAndCommit(c, attempt, operations);
    } catch (SQLException | RuntimeException e) {
      failedInTransaction(c, attempt, operations, e);
      throw e;
    } finally {
      Jdbc.resetAutoCommit(c);
    }
  }

  /**
   * After a failure inside a transaction: roll back, and wake subscribers if it may have committed.
   */
  void failedInTransaction(
      Connection c, Jdbc.Attempt attempt, List<AtomicOperation> operations, Exception e) {
    Jdbc.rollbackQuietly(c);
    if (operations != null && Jdbc.mayHaveCommitted(attempt, e)) {
      // It may have committed: a spurious wake-up is allowed, a missed one is not.
      local.notifyCommitted(operations);
      notifier.send(announced(operations));
    }
  }

  /**
   * Inside an open transaction: calls the commit function for {@code operations} and commits, in
   * one round trip: the {@code COMMIT} goes in the same message as the call ({@link
   * Tables#commitAndEnd}). If the call fails, PostgreSQL skips the {@code COMMIT} and the
   * transaction is rolled back; only a connection failure leaves the outcome unknown.
   */
  Batch applyAndCommit(Connection c, Jdbc.Attempt attempt, List<AtomicOperation> operations)
      throws SQLException {
    attempt.commitSent = true;
    Long[] outcomes = callCommit(c, tables.commitAndEnd, operations, new String[0]);
    if (outcomes.length != operations.size()) {
      throw new IllegalStateException(
          "the commit function returned "
              + outcomes.length
              + " outcomes for "
              + operations.size()
              + " operations. Indicates a bug.");
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    List<AtomicOperation> applied = new ArrayList<>();
    int written = 0;
    for (int i = 0; i < outcomes.length; i++) {
      long vs = outcomes[i];
      results.add(vs > 0 ? CommitResult.committed(vs) : CommitResult.checkFailed());
      if (vs > 0 && !operations.get(i).isReadOnly()) {
        applied.add(operations.get(i));
        written += operations.get(i).mutations().size();
      }
    }
    notifier.send(announced(applied));
    vacuum.wrote(written);
    return new Batch(Collections.unmodifiableList(results), applied);
  }

  /**
   * Runs {@code sql}, which contains the commit function's call ({@link Tables#commit}) with its
   * parameters first among the statements' parameters, for {@code operations}, and returns the
   * function's outcomes: one per operation, its versionstamp or 0 if a check failed. {@code
   * payloads} are NOTIFY'd by the function if anything was written (in the transaction, so
   * delivered at its commit).
   */
  Long[] callCommit(Connection c, String sql, List<AtomicOperation> operations, String[] payloads)
      throws SQLException {
    int checks = 0;
    int mutations = 0;
    for (AtomicOperation op : operations) {
      checks += op.checks().size();
      mutations += op.mutations().size();
    }
    int[] checkOp = new int[checks];
    byte[][] checkKey = new byte[checks][];
    long[] checkVs = new long[checks];
    int[] mutOp = new int[mutations];
    byte[][] mutKey = new byte[mutations][];
    byte[][] mutValue = new byte[mutations][];
    int ci = 0;
    int mi = 0;
    for (int i = 0; i < operations.size(); i++) {
      AtomicOperation op = operations.get(i);
      for (AtomicOperation.Check check : op.checks()) {
        checkOp[ci] = i + 1;
        checkKey[ci] = check.key().encoded();
        checkVs[ci++] = check.versionstamp();
      }
      for (AtomicOperation.Mutation m : op.mutations()) {
        mutOp[mi] = i + 1;
        mutKey[mi] = m.key().encoded();
        mutValue[mi++] = m.isDelete() ? null : m.value();
      }
    }
    KeyLocks.Locks locks = KeyLocks.lockKeys(Arrays.asList(checkKey), Arrays.asList(mutKey));
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      // Java arrays through setObject: bound in PostgreSQL's binary array format, with the
      // array type the element type implies (no look-up by name, as createArrayOf does)
      ps.setInt(1, operations.size());
      ps.setInt(2, tables.lockSpace);
      if (locks == null) {
        // Typed nulls: a null of no type would make pgjdbc describe the prepared statement, after
        // which it sends a Sync after every call of it on that connection, before the COMMIT (it
        // cannot bound the size of the call's array result): a round trip more for every commit
        // (PostgresCommitRoundTripsTest)
        ps.setNull(3, Types.ARRAY, "_int4");
        ps.setNull(4, Types.ARRAY, "_bool");
      } else {
        ps.setObject(3, locks.hashes());
        ps.setObject(4, locks.shared());
      }
      ps.setObject(5, checkOp);
      ps.setObject(6, checkKey);
      ps.setObject(7, checkVs);
      ps.setObject(8, mutOp);
      ps.setObject(9, mutKey);
      ps.setObject(10, mutValue);
      ps.setString(11, tables.channel);
      ps.setArray(12, c.createArrayOf("text", payloads));
      ps.setBoolean(13, batchStatements(checkOp, checkKey, mutOp, mutKey));
      // the function's result is the first result set of the message's statements
      boolean isResultSet = ps.execute();
      while (!isResultSet) {
        if (ps.getUpdateCount() == -1) {
          throw new IllegalStateException(
              "the commit function returned no result. Indicates a bug.");
        }
        isResultSet = ps.getMoreResults();
      }
      try (ResultSet rs = ps.getResultSet()) {
        rs.next();
        return (Long[]) rs.getArray(1).getArray();
      }
    }
  }

  /**
   * Whether the commit function applies the batch with one statement per kind (its {@code disjoint}
   * argument): when the batch is {@link #disjoint} and has more than {@value #FEW_KEYS} checks and
   * writes. For a few keys a statement per check and per write costs no more: kvmq-bench's push
   * 1-by-1 (3 keys) measured 3,100 jobs/s with the batch statements, 3,800 without; its pickup with
   * handoff (5) a push call of 1.40 ms p50 with them, 1.14 without (docs/performance.md).
   */
  static boolean batchStatements(int[] checkOp, byte[][] checkKey, int[] mutOp, byte[][] mutKey) {
    return checkKey.length + mutKey.length > FEW_KEYS && disjoint(checkOp, checkKey, mutOp, mutKey);
  }

  /**
   * Whether no operation writes a key that another operation of the batch checks or writes: then
   * the commit function evaluates every check against the state before the batch and applies the
   * mutations in one statement per kind (schema-v5.sql), which gives what one operation after the
   * other would. Keys that several operations only check (every claimed job's operation checks the
   * pause of starts) keep a batch disjoint. {@code checkOp[i]} is the operation of check {@code i},
   * {@code mutOp[i]} that of mutation {@code i}.
   */
  static boolean disjoint(int[] checkOp, byte[][] checkKey, int[] mutOp, byte[][] mutKey) {
    Map<ByteBuffer, Integer> writer = new HashMap<>();
    for (int i = 0; i < mutKey.length; i++) {
      if (writer.putIfAbsent(ByteBuffer.wrap(mutKey[i]), mutOp[i]) != null) {
        return false; // two operations write it (one operation writes a key at most once)
      }
    }
    for (int i = 0; i < checkKey.length; i++) {
      Integer w = writer.get(ByteBuffer.wrap(checkKey[i]));
      if (w != null && w != checkOp[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The rows of {@code keys} that exist, by their keys' bytes: one statement, planned as {@link
   * Reads} plans a read {@code where} it runs.
   */
  Map<ByteBuffer, KvEntry> readKeys(Connection c, List<Key> keys, Reads.Where where)
      throws SQLException {
    Map<ByteBuffer, KvEntry> rows = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(where.pick(tables.getMany))) {
      ps.setObject(1, Jdbc.encoded(keys));
      try (ResultSet rs = Reads.rows(ps, where)) {
        while (rs.next()) {
          KvEntry e = Jdbc.entry(rs);
          rows.put(ByteBuffer.wrap(e.key().encoded()), e);
        }
      }
    }
    return rows;
  }

  /**
   * What a batch announces to other nodes: the first parts of every key written (by operations
   * whose checks fail too: a spurious wake-up is allowed), in hex.
   */
  static Set<String> announced(List<AtomicOperation> operations) {
    Set<ByteBuffer> distinct = new LinkedHashSet<>();
    for (AtomicOperation op : operations) {
      for (AtomicOperation.Mutation m : op.mutations()) {
        byte[] k = m.key().encoded();
        distinct.add(ByteBuffer.wrap(k, 0, KeyLocks.endOfPart(k, NOTIFY_PARTS)).slice());
      }
    }
    Set<String> prefixes = new LinkedHashSet<>();
    for (ByteBuffer b : distinct) {
      byte[] prefix = new byte[b.remaining()];
      b.get(prefix);
      prefixes.add(HEX.formatHex(prefix));
    }
    return prefixes;
  }

  private static boolean checksHold(AtomicOperation op, Map<ByteBuffer, Long> current) {
    for (AtomicOperation.Check check : op.checks()) {
      long actual =
          current.getOrDefault(ByteBuffer.wrap(check.key().encoded()), AtomicOperation.ABSENT);
      if (actual != check.versionstamp()) {
        return false;
      }
    }
    return true;
  }

  private static List<Key> checkedKeys(List<AtomicOperation> operations) {
    Set<Key> keys = new LinkedHashSet<>();
    for (AtomicOperation op : operations) {
      for (AtomicOperation.Check check : op.checks()) {
        keys.add(check.key());
      }
    }
    return new ArrayList<>(keys);
  }
}
