package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.store.SubscriberRegistry;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;

/**
 * A {@link KvStore} on PostgreSQL (14 or newer) over JDBC, so that several nodes share one
 * queue: every node builds a store on the same database and tables.
 *
 * <pre>{@code
 * KvStore store = PostgresKvStore.builder(dataSource).build();
 * }</pre>
 *
 * <p><b>Connections.</b> Each call borrows a connection from the {@link DataSource} and
 * returns it before the call returns; pass a pooled DataSource. Once something
 * {@linkplain #subscribe subscribes}, the store also keeps one connection of its own open
 * for {@code LISTEN}, on one thread of its own.
 *
 * <p><b>Schema.</b> Two tables ({@code kvmq_kv}, {@code kvmq_schema_version} with the
 * default prefix), a sequence ({@code kvmq_versionstamp}) and a function
 * ({@code kvmq_commit}), created on first use if missing (or upgraded from schema version 1)
 * unless the builder says otherwise; the same SQL ships as
 * {@code /dev/kvmq/store/postgres/schema-v2.sql} in this jar for teams that manage
 * migrations.
 *
 * <p><b>Versionstamps and isolation.</b> Every writing transaction first takes an advisory
 * lock on every key it checks or writes (in one order for all), then evaluates its checks,
 * takes its versionstamp from the sequence and writes, all in one call of the commit
 * function; commits need {@code READ COMMITTED}, PostgreSQL's default. Commits that share a
 * key are thus serialized across all nodes and their checks are exact; commits on disjoint
 * keys run side by side. A key's versionstamps increase in the order its writes commit, and
 * every commit's versionstamp is greater than that of every commit that finished before it
 * started. Reads are single statements (one snapshot each) and take no lock.
 * {@link #commitAll} runs its batch in one transaction and one flush, or, when the batch
 * touches more than {@value #MAX_KEY_LOCKS} keys, in consecutive transactions of up to that
 * many keys each (an operation is never split), so that a big group commit does not lock the
 * whole store.
 *
 * <p><b>Claims.</b> {@link #claim} is one transaction that locks the first index rows no
 * other transaction holds ({@code FOR UPDATE SKIP LOCKED}), reads their records, plans, and
 * commits through the same commit function: claims from many nodes take different jobs
 * instead of colliding on the head of the queue, and their checks still guard correctness.
 * A call that PostgreSQL rolls back as a deadlock's victim (a claim racing with a delete of
 * the same waiting job) is run again.
 *
 * <p><b>Notifications.</b> Subscribers on the committing node are called directly after the
 * commit. Other nodes hear of it through {@code NOTIFY}, which a thread of the store sends
 * after the commit, in a transaction of its own that gathers the notifications of the
 * commits made meanwhile and does not wait for a flush: PostgreSQL serializes the commits of
 * all transactions that notify until each is flushed, which in the commit itself would stop
 * commits from sharing flushes. A notification can be lost if the process dies right after
 * a commit (or the database fails three times in a row); other nodes then see the change at
 * their next poll. Payloads name the first three parts of each written key, so a
 * subscription to a prefix of up to three parts (a queue's root {@code [kvmq, queue]}, or one
 * of its indexes) is woken only by its own keys; longer prefixes may be woken spuriously.
 *
 * <p><b>Failures.</b> A lost connection or a stopped database makes the call fail with
 * {@link KvStoreException}; the store works again as soon as the database does. A call that
 * fails on a stale connection before anything could have been committed is retried once on a
 * fresh connection. An outage is logged once when it starts and once when it ends (to the
 * {@code System.Logger} named after this class); {@link #isHealthy()} reports it.
 *
 * <p>Thread-safe.
 */
public final class PostgresKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** Written keys are announced by their first this-many parts. */
  private static final int NOTIFY_PARTS = 3;
  /** Above this many distinct announced prefixes, one commit notifies everyone instead. */
  private static final int MAX_NOTIFY_PAYLOADS = 16;
  private static final String EVERYONE = "*";
  private static final HexFormat HEX = HexFormat.of();
  /** SQLState deadlock_detected: PostgreSQL rolled the transaction back. */
  private static final String DEADLOCK = "40P01";
  /**
   * A batch that checks or writes more keys than this locks the whole store instead. Below
   * PostgreSQL's default {@code max_locks_per_transaction} (64), so that commits from every
   * connection at once still fit in its shared lock table.
   */
  static final int MAX_KEY_LOCKS = 48;
  /** How often a call that was a deadlock's victim is run again. */
  private static final int DEADLOCK_RETRIES = 3;
  /** The first key of the advisory lock that guards schema creation: "kvmq". */
  private static final int SCHEMA_LOCK = 0x6b766d71;

  private final DataSource dataSource;
  private final DataSource listenerDataSource;
  private final Tables tables;
  private final boolean createSchema;
  private final ThreadFactory threadFactory;
  /** Marks this store's own notifications, which it has already delivered locally. */
  private final String nodeId = UUID.randomUUID().toString().substring(0, 8);
  private final Outage calls;
  private final Outage listening;
  private final SubscriberRegistry subscribers = new SubscriberRegistry(LOG);
  private final Object schemaLock = new Object();
  private volatile boolean schemaReady;
  private volatile boolean closed;
  private ChangeListener listener; // guarded by this
  private final Notifier notifier;

  private PostgresKvStore(Builder b) {
    this.dataSource = b.dataSource;
    this.listenerDataSource = b.listenerDataSource != null ? b.listenerDataSource : b.dataSource;
    this.tables = new Tables(b.schema, b.tablePrefix);
    this.createSchema = b.createSchema;
    this.threadFactory = b.threadFactory != null ? b.threadFactory : r -> daemonThread(r, "kvmq-postgres-listener");
    this.calls = new Outage("PostgreSQL store " + tables.describe() + " (node " + nodeId + ")");
    this.listening = new Outage("PostgreSQL store " + tables.describe() + " (node " + nodeId
        + ", change listener)");
    ThreadFactory notifierThreads = b.threadFactory != null ? b.threadFactory
        : r -> daemonThread(r, "kvmq-postgres-notifier");
    this.notifier = new Notifier(b.dataSource, tables, notifierThreads, nodeId, EVERYONE, MAX_NOTIFY_PAYLOADS);
  }

  /**
   * Starts a builder. Building touches no database: the schema is checked (and created) on
   * first use.
   *
   * @param dataSource where connections come from; a pooled one, normally
   * @return a builder with the defaults: table prefix {@code kvmq}, no schema (the
   *     connection's {@code search_path}), tables created on first use
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** A unit of JDBC work on a borrowed connection. */
  @FunctionalInterface
  private interface Work<T> {
    T run(Connection c, Attempt attempt) throws SQLException;
  }

  /**
   * What one attempt reached: a connection failure after {@code commitSent} may have
   * committed (an error PostgreSQL reports means it did not).
   */
  private static final class Attempt {
    boolean commitSent;
  }

  // ---- reads

  /**
   * {@inheritDoc}
   *
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails or the schema is missing or too new
   */
  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    return call("get " + key, (c, a) -> {
      try (PreparedStatement ps = c.prepareStatement(tables.get)) {
        ps.setBytes(1, key.encoded());
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? Optional.of(entry(rs)) : Optional.empty();
        }
      }
    });
  }

  /**
   * {@inheritDoc} One statement, so one snapshot.
   *
   * @throws NullPointerException if {@code keys} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails or the schema is missing or too new
   */
  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    Objects.requireNonNull(keys, "keys");
    keys.forEach(k -> Objects.requireNonNull(k, "key"));
    if (keys.isEmpty()) {
      ensureOpen();
      return List.of();
    }
    Map<ByteBuffer, KvEntry> found = call("getMany of " + keys.size() + " keys", (c, a) -> readKeys(c, keys));
    List<Optional<KvEntry>> result = new ArrayList<>(keys.size());
    for (Key k : keys) {
      result.add(Optional.ofNullable(found.get(ByteBuffer.wrap(k.encoded()))));
    }
    return Collections.unmodifiableList(result);
  }

  /**
   * {@inheritDoc} One statement, so one snapshot.
   *
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails or the schema is missing or too new
   */
  @Override
  public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
    Objects.requireNonNull(range, "range");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    if (range.isEmpty()) {
      ensureOpen();
      return List.of();
    }
    return call("list " + range, (c, a) -> {
      List<KvEntry> result = new ArrayList<>(Math.min(limit, 64));
      try (PreparedStatement ps = c.prepareStatement(reverse ? tables.listDesc : tables.listAsc)) {
        ps.setBytes(1, range.lowerBound());
        ps.setBytes(2, range.upperBound());
        ps.setLong(3, limit);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            result.add(entry(rs));
          }
        }
      }
      return Collections.unmodifiableList(result);
    });
  }

  /**
   * {@inheritDoc} One {@code SELECT count(*)}.
   *
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails or the schema is missing or too new
   */
  @Override
  public long count(KeyRange range) {
    Objects.requireNonNull(range, "range");
    if (range.isEmpty()) {
      ensureOpen();
      return 0;
    }
    return call("count " + range, (c, a) -> {
      try (PreparedStatement ps = c.prepareStatement(tables.count)) {
        ps.setBytes(1, range.lowerBound());
        ps.setBytes(2, range.upperBound());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  // ---- commits

  /**
   * {@inheritDoc}
   *
   * @throws NullPointerException if {@code operation} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (the operation may or may not be applied
   *     if the connection failed during the commit itself) or the schema is missing
   */
  @Override
  public CommitResult commit(AtomicOperation operation) {
    return commitAll(List.of(Objects.requireNonNull(operation, "operation"))).get(0);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here a batch is one transaction (the locks of its keys, one call of the commit
   * function, one flush at commit) as long as it touches at most {@value #MAX_KEY_LOCKS}
   * keys. A bigger batch is cut, in order and between operations, into consecutive
   * transactions of at most that many keys each: one big transaction would have to lock the
   * whole store, and make every other commit wait for it (a worker's group commit of 25 or
   * more completions is such a batch). An operation that alone touches more keys is a
   * transaction of its own and locks the whole store. Each operation's checks are evaluated
   * against the database as left by the operations before it; one that fails is refused
   * alone. If the database fails midway, the transactions before the failure are committed.
   *
   * @throws NullPointerException if {@code operations} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (any of the operations may or may not be
   *     applied if the connection failed during the commit itself) or the schema is missing
   */
  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    Objects.requireNonNull(operations, "operations");
    operations.forEach(op -> Objects.requireNonNull(op, "operation"));
    if (operations.isEmpty()) {
      ensureOpen();
      return List.of();
    }
    boolean writes = operations.stream().anyMatch(op -> !op.isReadOnly());
    String what = operations.size() == 1 ? "commit " + operations.get(0)
        : "commitAll of " + operations.size() + " operations";
    if (!writes) {
      return call(what, (c, a) -> checkOnly(c, operations));
    }
    List<List<AtomicOperation>> parts = lockGroups(operations);
    if (parts.size() == 1) {
      Batch batch = call(what, (c, a) -> write(c, a, operations));
      notifyLocal(batch.applied);
      return batch.results;
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    for (List<AtomicOperation> part : parts) {
      Batch batch = call(what + " (part of " + part.size() + ")", (c, a) -> write(c, a, part));
      notifyLocal(batch.applied);
      results.addAll(batch.results);
    }
    return Collections.unmodifiableList(results);
  }

  /**
   * Cuts a batch, in order and between operations, into groups that each lock at most
   * {@link #MAX_KEY_LOCKS} distinct keys (by lock hash); an operation that alone locks more
   * is a group of its own.
   */
  static List<List<AtomicOperation>> lockGroups(List<AtomicOperation> operations) {
    List<List<AtomicOperation>> groups = new ArrayList<>();
    List<AtomicOperation> group = new ArrayList<>();
    Set<Integer> locked = new HashSet<>();
    for (AtomicOperation op : operations) {
      Set<Integer> own = new HashSet<>();
      for (AtomicOperation.Check check : op.checks()) {
        own.add(lockHash(check.key().encoded()));
      }
      for (AtomicOperation.Mutation m : op.mutations()) {
        own.add(lockHash(m.key().encoded()));
      }
      Set<Integer> union = new HashSet<>(locked);
      union.addAll(own);
      if (!group.isEmpty() && union.size() > MAX_KEY_LOCKS) {
        groups.add(group);
        group = new ArrayList<>();
        union = own;
      }
      group.add(op);
      locked = union;
    }
    groups.add(group);
    return groups;
  }

  /** Operations without mutations: one statement reads the checked keys and the latest versionstamp. */
  private List<CommitResult> checkOnly(Connection c, List<AtomicOperation> operations)
      throws SQLException {
    Map<ByteBuffer, Long> current = new HashMap<>();
    long latest;
    try (PreparedStatement ps = c.prepareStatement(tables.checkRead)) {
      ps.setArray(1, byteaArray(c, checkedKeys(operations)));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw missingCounterRow();
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
      results.add(checksHold(op, current)
          ? CommitResult.committed(Math.max(1, latest)) : CommitResult.checkFailed());
    }
    return Collections.unmodifiableList(results);
  }

  private record Batch(List<CommitResult> results, List<AtomicOperation> applied) {}

  /**
   * One transaction, one round trip: {@code BEGIN}, the commit function (which locks the
   * keys, checks and writes, see schema-v2.sql) and {@code COMMIT} go in one message. The key
   * locks are held from the function's first statement to the end of the {@code COMMIT}.
   */
  private Batch write(Connection c, Attempt attempt, List<AtomicOperation> operations)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      return applyAndCommit(c, attempt, operations);
    } catch (SQLException | RuntimeException e) {
      failedInTransaction(c, attempt, operations, e);
      throw e;
    } finally {
      resetAutoCommit(c);
    }
  }

  /** After a failure inside a transaction: roll back, and wake subscribers if it may have committed. */
  private void failedInTransaction(Connection c, Attempt attempt, List<AtomicOperation> operations, Exception e) {
    rollbackQuietly(c);
    if (operations != null && mayHaveCommitted(attempt, e)) {
      // It may have committed: a spurious wake-up is allowed, a missed one is not.
      notifyLocal(operations);
      notifier.send(announced(operations));
    }
  }

  /**
   * Inside an open transaction: calls the commit function for {@code operations} and
   * commits, in one round trip: the {@code COMMIT} goes in the same message as the call
   * ({@link Tables#commitAndEnd}). If the call fails, PostgreSQL skips the {@code COMMIT} and
   * the transaction is rolled back; only a connection failure leaves the outcome unknown.
   */
  private Batch applyAndCommit(Connection c, Attempt attempt, List<AtomicOperation> operations)
      throws SQLException {
    List<Integer> checkOp = new ArrayList<>();
    List<byte[]> checkKey = new ArrayList<>();
    List<Long> checkVs = new ArrayList<>();
    List<Integer> mutOp = new ArrayList<>();
    List<byte[]> mutKey = new ArrayList<>();
    List<byte[]> mutValue = new ArrayList<>();
    for (int i = 0; i < operations.size(); i++) {
      AtomicOperation op = operations.get(i);
      for (AtomicOperation.Check check : op.checks()) {
        checkOp.add(i + 1);
        checkKey.add(check.key().encoded());
        checkVs.add(check.versionstamp());
      }
      for (AtomicOperation.Mutation m : op.mutations()) {
        mutOp.add(i + 1);
        mutKey.add(m.key().encoded());
        mutValue.add(m.isDelete() ? null : m.value());
      }
    }
    Integer[] locks = lockKeys(checkKey, mutKey);
    Long[] outcomes;
    attempt.commitSent = true;
    try (PreparedStatement ps = c.prepareStatement(tables.commitAndEnd)) {
      ps.setInt(1, operations.size());
      ps.setInt(2, tables.lockSpace);
      if (locks == null) {
        ps.setNull(3, Types.ARRAY);
      } else {
        ps.setArray(3, c.createArrayOf("int4", locks));
      }
      ps.setArray(4, c.createArrayOf("int4", checkOp.toArray(new Integer[0])));
      ps.setArray(5, c.createArrayOf("bytea", checkKey.toArray(new byte[0][])));
      ps.setArray(6, c.createArrayOf("int8", checkVs.toArray(new Long[0])));
      ps.setArray(7, c.createArrayOf("int4", mutOp.toArray(new Integer[0])));
      ps.setArray(8, c.createArrayOf("bytea", mutKey.toArray(new byte[0][])));
      ps.setArray(9, c.createArrayOf("bytea", mutValue.toArray(new byte[0][])));
      ps.setString(10, tables.channel);
      ps.setArray(11, c.createArrayOf("text", new String[0])); // the notifier sends them, after the commit
      ps.execute();
      try (ResultSet rs = ps.getResultSet()) {
        rs.next();
        outcomes = (Long[]) rs.getArray(1).getArray();
      }
    }
    if (outcomes.length != operations.size()) {
      throw new IllegalStateException("the commit function returned " + outcomes.length
          + " outcomes for " + operations.size() + " operations. Indicates a bug.");
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    List<AtomicOperation> applied = new ArrayList<>();
    for (int i = 0; i < outcomes.length; i++) {
      long vs = outcomes[i];
      results.add(vs > 0 ? CommitResult.committed(vs) : CommitResult.checkFailed());
      if (vs > 0 && !operations.get(i).isReadOnly()) {
        applied.add(operations.get(i));
      }
    }
    notifier.send(announced(applied));
    return new Batch(Collections.unmodifiableList(results), applied);
  }

  /**
   * The advisory locks a batch takes, one per key it checks or writes: a 32-bit hash of the
   * key (never 0, which stands for the whole store), sorted and distinct, so that every
   * commit takes its locks in one order and commits can't deadlock on them. Two keys with
   * one hash share a lock: they wait for each other, nothing worse. A batch with more than
   * {@link #MAX_KEY_LOCKS} keys gets null: it locks the whole store instead, so that big
   * batches don't exhaust PostgreSQL's shared lock table. Every node must hash alike: this is part
   * of schema version 2.
   */
  static Integer[] lockKeys(List<byte[]> checked, List<byte[]> written) {
    int[] hashes = new int[checked.size() + written.size()];
    int n = 0;
    for (byte[] k : checked) {
      hashes[n++] = lockHash(k);
    }
    for (byte[] k : written) {
      hashes[n++] = lockHash(k);
    }
    int[] distinct = Arrays.stream(hashes).sorted().distinct().toArray();
    if (distinct.length > MAX_KEY_LOCKS) {
      return null;
    }
    Integer[] boxed = new Integer[distinct.length];
    for (int i = 0; i < distinct.length; i++) {
      boxed[i] = distinct[i];
    }
    return boxed;
  }

  /** FNV-1a over the key's bytes, folded to 32 bits; 0 is kept for the store-wide lock. */
  static int lockHash(byte[] key) {
    long h = 0xcbf29ce484222325L;
    for (byte b : key) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    int folded = (int) (h ^ (h >>> 32));
    return folded == 0 ? 1 : folded;
  }

  // ---- claims

  /**
   * {@inheritDoc}
   *
   * <p>Here the claim is one transaction, so that claims from many nodes (and threads) take
   * different entries instead of colliding on the first ones: it locks the first
   * {@code limit} index rows that no other transaction has locked
   * ({@code SELECT ... ORDER BY key LIMIT n FOR UPDATE SKIP LOCKED}), reads their records,
   * calls the planner, and applies the operations with the commit function (key locks,
   * checks and all, exactly as {@link #commitAll}) before {@code COMMIT}. If the planner
   * gives a {@linkplain ClaimPlanner#recordKeyRule() record key rule}, the records come in
   * the same statement as the index rows (a join on the rule's key), so a claim is two
   * round trips (that statement, then the function and {@code COMMIT}); a record whose key is not the planner's {@code recordKey} is read in a
   * statement of its own. An index row locked
   * by another claim is being claimed by it: skipping it keeps the queue order for everything
   * this claim can take. The row locks end with the transaction.
   *
   * @throws NullPointerException if an argument is null, or the planner returns null or a
   *     null key or operation
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (the operations may or may not be applied
   *     if the connection failed during the commit itself) or the schema is missing
   */
  @Override
  public List<CommitResult> claim(KeyRange range, int limit, ClaimPlanner planner) {
    Objects.requireNonNull(range, "range");
    Objects.requireNonNull(planner, "planner");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    if (range.isEmpty()) {
      ensureOpen();
      List<AtomicOperation> ops = Objects.requireNonNull(planner.plan(List.of(), List.of()), "planned operations");
      return ops.isEmpty() ? List.of() : commitAll(ops);
    }
    Batch batch = call("claim from " + range, (c, a) -> claimIn(c, a, range, limit, planner));
    notifyLocal(batch.applied);
    return batch.results;
  }

  private Batch claimIn(Connection c, Attempt attempt, KeyRange range, int limit, ClaimPlanner planner)
      throws SQLException {
    c.setAutoCommit(false);
    List<AtomicOperation> ops = null;
    try {
      List<KvEntry> index = new ArrayList<>(Math.min(limit, 64));
      // the records read with the index rows, by the planner's rule; null where not
      List<Joined> joined = new ArrayList<>(Math.min(limit, 64));
      Optional<ClaimPlanner.RecordKeyRule> rule = planner.recordKeyRule();
      try (PreparedStatement ps = c.prepareStatement(rule.isPresent() ? tables.lockFirstWithRecords : tables.lockFirst)) {
        ps.setBytes(1, range.lowerBound());
        ps.setBytes(2, range.upperBound());
        ps.setLong(3, limit);
        if (rule.isPresent()) {
          ps.setBytes(4, rule.get().prefix().encoded());
          ps.setInt(5, rule.get().dropped() + 1); // SQL counts bytes from 1
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            index.add(entry(rs));
            byte[] recordKey = rule.isPresent() ? rs.getBytes(4) : null;
            joined.add(recordKey == null ? null : new Joined(recordKey, rs.getBytes(5), rs.getLong(6)));
          }
        }
      }
      List<Optional<KvEntry>> records = index.isEmpty() ? List.of() : records(c, planner, index, joined);
      ops = List.copyOf(Objects.requireNonNull(
          planner.plan(Collections.unmodifiableList(index), records), "planned operations"));
      if (ops.isEmpty()) {
        c.rollback();
        return new Batch(List.of(), List.of());
      }
      return applyAndCommit(c, attempt, ops);
    } catch (SQLException | RuntimeException e) {
      failedInTransaction(c, attempt, ops, e);
      throw e;
    } finally {
      resetAutoCommit(c);
    }
  }

  /** The rows of {@code keys} that exist, by their keys' bytes: one statement. */
  private Map<ByteBuffer, KvEntry> readKeys(Connection c, List<Key> keys) throws SQLException {
    Map<ByteBuffer, KvEntry> rows = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(tables.getMany)) {
      ps.setArray(1, byteaArray(c, keys));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          KvEntry e = entry(rs);
          rows.put(ByteBuffer.wrap(e.key().encoded()), e);
        }
      }
    }
    return rows;
  }

  /** A record read with an index row: its key's bytes, value and versionstamp. */
  private record Joined(byte[] key, byte[] value, long versionstamp) {}

  /**
   * The record of each index entry: the one read with it where its key is the planner's
   * record key, the others read in one more statement (none if the planner's rule holds).
   */
  private List<Optional<KvEntry>> records(Connection c, ClaimPlanner planner, List<KvEntry> index,
      List<Joined> joined) throws SQLException {
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
      Map<ByteBuffer, KvEntry> found = readKeys(c, missing);
      for (int i = 0; i < records.size(); i++) {
        if (records.get(i) == null) {
          records.set(i, Optional.ofNullable(found.get(ByteBuffer.wrap(recordKeys.get(i).encoded()))));
        }
      }
    }
    return Collections.unmodifiableList(records);
  }

  /**
   * What a batch announces to other nodes: the first parts of every key written (by
   * operations whose checks fail too: a spurious wake-up is allowed), in hex.
   */
  private static Set<String> announced(List<AtomicOperation> operations) {
    Set<String> prefixes = new LinkedHashSet<>();
    for (AtomicOperation op : operations) {
      for (AtomicOperation.Mutation m : op.mutations()) {
        prefixes.add(HEX.formatHex(announcedPrefix(m.key())));
      }
    }
    return prefixes;
  }

  private static byte[] announcedPrefix(Key key) {
    if (key.size() <= NOTIFY_PARTS) {
      return key.encoded();
    }
    Object[] parts = new Object[NOTIFY_PARTS];
    for (int i = 0; i < NOTIFY_PARTS; i++) {
      parts[i] = key.get(i);
    }
    return Key.of(parts).encoded();
  }

  private static boolean checksHold(AtomicOperation op, Map<ByteBuffer, Long> current) {
    for (AtomicOperation.Check check : op.checks()) {
      long actual = current.getOrDefault(ByteBuffer.wrap(check.key().encoded()), AtomicOperation.ABSENT);
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

  // ---- notification

  /**
   * {@inheritDoc} Always true: commits on any node reach subscribers through
   * {@code LISTEN/NOTIFY}, commits through this store directly.
   */
  @Override
  public boolean notifiesChanges() {
    return true;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The first subscription starts the store's listener thread and its {@code LISTEN}
   * connection. Listeners are called on that thread for commits of other nodes (other store
   * instances), and on the committing thread for commits through this store. After the
   * listener (re)connects, every subscriber is called once, because notifications sent while
   * it was not listening are lost.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public Subscription subscribe(Key prefix, Runnable listener) {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(listener, "listener");
    ensureOpen();
    Subscription sub = subscribers.subscribe(prefix, listener);
    startListener();
    return sub;
  }

  private synchronized void startListener() {
    if (listener != null || closed) {
      return;
    }
    listener = new ChangeListener(listenerDataSource, tables, this::onPayload, listening, threadFactory);
    listener.start();
  }

  /** A payload from the LISTEN connection, or null for "wake everyone". */
  private void onPayload(String payload) {
    if (payload == null) {
      wakeAll();
      return;
    }
    int colon = payload.indexOf(':');
    if (colon < 0) {
      wakeAll();
      return;
    }
    if (payload.substring(0, colon).equals(nodeId)) {
      return; // committed through this store: its subscribers were called after the commit
    }
    String prefix = payload.substring(colon + 1);
    if (prefix.equals(EVERYONE)) {
      wakeAll();
      return;
    }
    byte[] announced;
    try {
      announced = HEX.parseHex(prefix);
    } catch (IllegalArgumentException e) {
      wakeAll();
      return;
    }
    subscribers.notifyKeysStartingWith(announced);
  }

  private void wakeAll() {
    subscribers.notifyEveryone();
  }

  private void notifyLocal(List<AtomicOperation> applied) {
    subscribers.notifyCommitted(applied);
  }

  // ---- health and lifecycle

  /**
   * Tells whether the store can reach its database, for health reporting: false while the
   * latest call failed for a reason of the database's (unreachable, restarting, schema
   * missing) and no call has succeeded since, or while the change listener, once started, is
   * not connected. Cheap: it reports what calls saw and runs no query itself.
   *
   * @return true when nothing is known to be failing
   */
  public boolean isHealthy() {
    return !calls.isDown() && !listening.isDown();
  }

  /**
   * Describes the failure that made the store unhealthy, for health reports.
   *
   * @return the first failure of the current outage, or empty while healthy
   */
  public Optional<String> failure() {
    String f = calls.failure();
    return Optional.ofNullable(f != null ? f : listening.failure());
  }

  /**
   * Stops the listener thread and its connection. Borrowed connections were already
   * returned; the DataSource is the caller's and stays open. A second close does nothing.
   */
  @Override
  public void close() {
    ChangeListener l;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      l = listener;
      listener = null;
    }
    notifier.close();
    subscribers.close(); // waits for listeners running on committing threads and the listener thread
    if (l != null) {
      l.stop();
    }
  }

  @Override
  public String toString() {
    return "PostgresKvStore[" + tables.describe() + ", node " + nodeId + "]";
  }

  /** Tells whether the listener thread is connected and has woken every subscriber once since. */
  synchronized boolean isListening() {
    return listener != null && listener.isListening();
  }

  /** The id that marks this instance's own notifications and names it in logs. */
  String nodeId() {
    return nodeId;
  }

  // ---- plumbing

  private <T> T call(String what, Work<T> work) {
    ensureOpen();
    ensureSchema();
    return attempt(what, work);
  }

  /**
   * Runs {@code work} on a borrowed connection; retries once on a fresh connection if the
   * borrowed one failed before anything could have been committed (a stale pooled connection
   * after a database restart), and up to {@link #DEADLOCK_RETRIES} times if PostgreSQL chose
   * this transaction as a deadlock's victim (it was rolled back, so nothing was applied; see
   * {@link #claim} for how a claim and a delete can deadlock).
   */
  private <T> T attempt(String what, Work<T> work) {
    boolean staleRetried = false;
    for (int deadlocks = 0; ; ) {
      Connection c;
      try {
        c = dataSource.getConnection();
      } catch (SQLException e) {
        throw failure(what, "can't get a connection", e);
      }
      Attempt attempt = new Attempt();
      try {
        T result = work.run(c, attempt);
        calls.succeeded();
        return result;
      } catch (SQLException e) {
        if (!staleRetried && !attempt.commitSent && isConnectionFailure(e)) {
          staleRetried = true;
          LOG.log(Level.DEBUG, () -> this + ": " + what + " failed on a stale connection; retrying once", e);
          continue;
        }
        // a deadlock's victim was rolled back, even if its COMMIT was sent (PostgreSQL skipped it)
        if (deadlocks < DEADLOCK_RETRIES && DEADLOCK.equals(e.getSQLState())) {
          deadlocks++;
          LOG.log(Level.DEBUG, () -> this + ": " + what + " was a deadlock's victim; retrying", e);
          continue;
        }
        throw failure(what, mayHaveCommitted(attempt, e) ? "the commit's outcome is unknown" : null, e);
      } finally {
        closeQuietly(c);
      }
    }
  }

  /**
   * Whether a failed attempt may have committed: only if its {@code COMMIT} was sent and the
   * failure is not an error PostgreSQL reported (after which it skips the {@code COMMIT}).
   */
  private static boolean mayHaveCommitted(Attempt attempt, Exception e) {
    return attempt.commitSent
        && (!(e instanceof SQLException s) || s.getSQLState() == null || isConnectionFailure(s));
  }

  private KvStoreException failure(String what, String note, SQLException e) {
    calls.failed(what, e);
    return new KvStoreException(this + ": " + what + " failed"
        + (note == null ? "" : " (" + note + ")") + ": " + e.getMessage()
        + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]"), e);
  }

  /** Connection classes (08), and the server shutting down or starting (57P01-57P03). */
  static boolean isConnectionFailure(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && s.getSQLState() != null) {
        String state = s.getSQLState();
        if (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
            || state.equals("57P03")) {
          return true;
        }
      }
    }
    return false;
  }

  private void ensureSchema() {
    if (schemaReady) {
      return;
    }
    synchronized (schemaLock) {
      if (schemaReady) {
        return;
      }
      attempt("preparing the schema", (c, a) -> {
        prepareSchema(c);
        return null;
      });
      schemaReady = true;
    }
  }

  /**
   * Checks the installed schema version; creates the schema first if it is missing (or
   * upgrades it if it is older) and the builder allows. An installed current schema is left
   * alone: no DDL, no lock, so that nodes that may not own the tables start too, and a
   * running cluster sees no DDL at every start.
   */
  private void prepareSchema(Connection c) throws SQLException {
    SQLException missing = null;
    Integer version;
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    try {
      version = installedVersion(c);
    } catch (SQLException e) {
      if (!"42P01".equals(e.getSQLState()) && !"3F000".equals(e.getSQLState())) {
        throw e;
      }
      missing = e;
      version = null;
    }
    if ((version == null || version < Tables.SCHEMA_VERSION) && createSchema) {
      version = createSchema(c);
    }
    if (version == null) {
      String why = missing != null ? missing.getMessage().replaceAll("\\s+", " ").strip()
          : tables.schemaVersion + " is empty";
      throw new SQLException("the kvmq tables do not exist or have no schema version (" + why
          + "): run " + Tables.SCHEMA_RESOURCE + " from the kvmq-store-postgres jar, or build"
          + " the store with createSchema(true)", missing != null ? missing.getSQLState() : "55000", missing);
    }
    if (version > Tables.SCHEMA_VERSION) {
      throw new SQLException("the kvmq tables have schema version " + version + ", but this"
          + " kvmq-store-postgres knows version " + Tables.SCHEMA_VERSION + ": upgrade kvmq", "55000");
    }
    if (version < Tables.SCHEMA_VERSION) {
      throw new SQLException("the kvmq tables have schema version " + version + ", older than this"
          + " kvmq-store-postgres's " + Tables.SCHEMA_VERSION + ": run " + Tables.SCHEMA_RESOURCE
          + " from the kvmq-store-postgres jar (it upgrades them in place; stop the nodes of the"
          + " older version first), or build the store with createSchema(true)", "55000");
    }
  }

  /** The installed schema version, or null if the version table is empty. */
  private Integer installedVersion(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(tables.readVersion)) {
      rs.next();
      return (Integer) rs.getObject(1);
    }
  }

  /**
   * Runs the schema file (which also upgrades version 1) under a session-level advisory lock,
   * so that nodes starting together create it once; returns the installed version. The lock is taken before the DDL's
   * transaction begins, because a transaction that starts before another node's DDL commits
   * can miss it in its catalog caches (and then fail on CREATE ... IF NOT EXISTS); and the
   * version is read again under the lock, so that the nodes that waited run no DDL.
   */
  private Integer createSchema(Connection c) throws SQLException {
    try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_lock(?, hashtext(?))")) {
      lock.setInt(1, SCHEMA_LOCK);
      lock.setString(2, tables.describe());
      lock.executeQuery().close();
    }
    try {
      Integer version;
      try {
        version = installedVersion(c);
      } catch (SQLException e) {
        if (!"42P01".equals(e.getSQLState()) && !"3F000".equals(e.getSQLState())) {
          throw e;
        }
        version = null;
      }
      if (version != null && version >= Tables.SCHEMA_VERSION) {
        return version;
      }
      c.setAutoCommit(false);
      try {
        try (Statement s = c.createStatement()) {
          if (tables.schema != null) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + tables.schema);
          }
          for (String sql : tables.schemaStatements()) {
            s.execute(sql);
          }
        }
        version = installedVersion(c);
        c.commit();
        return version;
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c);
        throw e;
      } finally {
        resetAutoCommit(c);
      }
    } finally {
      try (PreparedStatement unlock = c.prepareStatement("SELECT pg_advisory_unlock(?, hashtext(?))")) {
        unlock.setInt(1, SCHEMA_LOCK);
        unlock.setString(2, tables.describe());
        unlock.executeQuery().close();
      } catch (SQLException e) {
        // The connection is broken, and its session lock went with it.
        LOG.log(Level.DEBUG, "releasing the schema lock failed", e);
      }
    }
  }

  private static SQLException missingCounterRow() {
    return new SQLException("the kvmq versionstamp sequence returned no row:"
        + " the schema was altered by hand", "55000");
  }

  private static KvEntry entry(ResultSet rs) throws SQLException {
    byte[] key = rs.getBytes(1);
    try {
      return new KvEntry(Key.decode(key), rs.getBytes(2), rs.getLong(3));
    } catch (IllegalArgumentException e) {
      throw new SQLException("a row of the kv table is not a valid kvmq entry (written by hand?): "
          + e.getMessage(), "XX001", e);
    }
  }

  private static Array byteaArray(Connection c, List<Key> keys) throws SQLException {
    byte[][] encoded = new byte[keys.size()][];
    for (int i = 0; i < encoded.length; i++) {
      encoded[i] = keys.get(i).encoded();
    }
    return c.createArrayOf("bytea", encoded);
  }

  private static void rollbackQuietly(Connection c) {
    try {
      if (!c.isClosed() && !c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "rollback after a failure failed too", e);
    }
  }

  private static void resetAutoCommit(Connection c) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "resetting autocommit failed", e);
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      LOG.log(Level.DEBUG, "closing a connection failed", e);
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  private static Thread daemonThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Options of a {@link PostgresKvStore}. Not thread-safe.
   */
  public static final class Builder {
    private final DataSource dataSource;
    private DataSource listenerDataSource;
    private String schema;
    private String tablePrefix = "kvmq";
    private boolean createSchema = true;
    private ThreadFactory threadFactory;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Puts the tables in a PostgreSQL schema (created on first use if the tables are).
     *
     * @param schema a lower-case identifier of at most 20 characters, or null for the
     *     connection's {@code search_path} (the default)
     * @return this builder
     * @throws IllegalArgumentException if {@code schema} is not such an identifier
     */
    public Builder schema(String schema) {
      if (schema != null) {
        new Tables(schema, tablePrefix);
      }
      this.schema = schema;
      return this;
    }

    /**
     * Names the tables {@code <prefix>_kv} and {@code <prefix>_schema_version}, the sequence
     * {@code <prefix>_versionstamp}, and the notification channel
     * {@code [<schema>_]<prefix>_changes}. Two stores with different prefixes in one database
     * are independent.
     *
     * @param tablePrefix a lower-case identifier of at most 30 characters; default
     *     {@code kvmq}
     * @return this builder
     * @throws NullPointerException if {@code tablePrefix} is null
     * @throws IllegalArgumentException if it is not such an identifier
     */
    public Builder tablePrefix(String tablePrefix) {
      new Tables(null, Objects.requireNonNull(tablePrefix, "tablePrefix"));
      this.tablePrefix = tablePrefix;
      return this;
    }

    /**
     * Whether the store creates its tables (and schema) on first use, under an advisory lock
     * so that nodes starting together don't race. Off for teams that run the shipped SQL file
     * with their own migration tool: the store then only checks that the tables exist and
     * have a schema version it knows.
     *
     * @param createSchema true (the default) to create missing tables
     * @return this builder
     */
    public Builder createSchema(boolean createSchema) {
      this.createSchema = createSchema;
      return this;
    }

    /**
     * Where the one long-lived {@code LISTEN} connection comes from, when it should not be
     * taken from the main pool (whose size it would reduce by one, and which may hide the
     * PostgreSQL connection from {@code unwrap}).
     *
     * @param listenerDataSource the source, or null for the main DataSource (the default)
     * @return this builder
     */
    public Builder listenerDataSource(DataSource listenerDataSource) {
      this.listenerDataSource = listenerDataSource;
      return this;
    }

    /**
     * Makes the store's threads (the change listener, and the notifier that sends this
     * node's change notifications), for containers that want their own (managed) threads.
     *
     * @param threadFactory the factory, or null for daemon threads named
     *     {@code kvmq-postgres-listener} and {@code kvmq-postgres-notifier} (the default)
     * @return this builder
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /**
     * Makes the store. Touches no database: the schema is prepared on first use.
     *
     * @return the store
     */
    public PostgresKvStore build() {
      return new PostgresKvStore(this);
    }
  }
}
