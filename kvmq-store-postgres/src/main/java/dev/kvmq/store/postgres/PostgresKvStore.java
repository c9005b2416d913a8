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
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;

/**
 * A {@link KvStore} on PostgreSQL (14 or newer) over JDBC, so that several nodes share one queue:
 * every node builds a store on the same database and tables.
 *
 * <pre>{@code
 * KvStore store = PostgresKvStore.builder(dataSource).build();
 * }</pre>
 *
 * <p><b>Connections.</b> Each call borrows a connection from the {@link DataSource} and returns it
 * before the call returns; pass a pooled DataSource. Once something {@linkplain #subscribe
 * subscribes}, the store also keeps one connection of its own open for {@code LISTEN}, on one
 * thread of its own.
 *
 * <p><b>Schema.</b> Two tables ({@code kvmq_kv}, {@code kvmq_schema_version} with the default
 * prefix), a sequence ({@code kvmq_versionstamp}), the commit function ({@code kvmq_commit}) and a
 * view of the jobs for operators ({@code kvmq_jobs}, with the two functions it decodes with),
 * created on first use if missing (or upgraded in place from schema version 1, 2, 3 or 4) unless
 * the builder says otherwise; the same SQL ships as {@code /dev/kvmq/store/postgres/schema-v5.sql}
 * in this jar for teams that manage migrations.
 *
 * <p><b>Versionstamps and isolation.</b> Every writing transaction first takes an advisory lock on
 * every key it checks or writes (in one order for all; shared for a key it only checks; the keys of
 * one job share one lock, see {@code KeyLocks}), then evaluates its checks, takes its versionstamp
 * from the sequence and writes, all in one call of the commit function; commits need {@code READ
 * COMMITTED}, PostgreSQL's default. Commits that share a key are thus serialized across all nodes
 * and their checks are exact; commits on disjoint keys run side by side. A key's versionstamps
 * increase in the order its writes commit, and every commit's versionstamp is greater than that of
 * every commit that finished before it started. Reads are single statements (one snapshot each) and
 * take no lock. {@link #commitAll} runs its batch in one transaction and one flush, or, when the
 * batch takes more than {@value KeyLocks#MAX_KEY_LOCKS} key locks, in consecutive transactions of
 * up to that many locks each (an operation is never split), so that a big group commit does not
 * lock the whole store.
 *
 * <p><b>Claims.</b> {@link #claim} is one transaction that locks the first index rows no other
 * transaction holds ({@code FOR UPDATE SKIP LOCKED}), reads their records, plans, and commits
 * through the same commit function: claims from many nodes take different jobs instead of colliding
 * on the head of the queue, and their checks still guard correctness. A call that PostgreSQL rolls
 * back as a deadlock's victim (a claim racing with a delete of the same waiting job) is run again.
 *
 * <p><b>Notifications.</b> Subscribers on the committing node are called directly after the commit.
 * Other nodes hear of it through {@code NOTIFY}, which a thread of the store sends after the
 * commit, in a transaction of its own that gathers the notifications of the commits made meanwhile
 * and does not wait for a flush: PostgreSQL serializes the commits of all transactions that notify
 * until each is flushed, which in the commit itself would stop commits from sharing flushes. A
 * notification can be lost if the process dies right after a commit (or the database fails three
 * times in a row); other nodes then see the change at their next poll. Payloads name the first
 * three parts of each written key, so a subscription to a prefix of up to three parts (a queue's
 * root {@code [kvmq, queue]}, or one of its indexes) is woken only by its own keys; longer prefixes
 * may be woken spuriously.
 *
 * <p><b>Failures.</b> A lost connection or a stopped database makes the call fail with {@link
 * KvStoreException}; the store works again as soon as the database does. A call that fails on a
 * stale connection before anything could have been committed is retried once on a fresh connection.
 * An outage is logged once when it starts and once when it ends (to the {@code System.Logger} named
 * after this class); {@link #isHealthy()} reports it.
 *
 * <p>Thread-safe. Inside, one package-private class per concern: {@code Transactions} (the commit
 * path), {@code ClaimTransaction} (the claim path), {@code KeyLocks} (which advisory locks a batch
 * takes), {@code SchemaSetup} (schema and migration), {@code Tables} (names and SQL), {@code Jdbc}
 * (plumbing), {@code Notifier} and {@code ChangeListener} (NOTIFY and LISTEN); change subscribers
 * are kept by a {@link dev.kvmq.store.SubscriberRegistry}. This class holds no lock while it calls
 * the database; its monitor guards only the listener's start and stop, and a schema monitor makes
 * one thread prepare the schema.
 */
public final class PostgresKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(PostgresKvStore.class.getName());

  /** Above this many distinct announced prefixes, one commit notifies everyone instead. */
  private static final int MAX_NOTIFY_PAYLOADS = 16;

  static final String EVERYONE = "*";
  private static final HexFormat HEX = HexFormat.of();

  /** SQLState deadlock_detected: PostgreSQL rolled the transaction back. */
  private static final String DEADLOCK = "40P01";

  /** How often a call that was a deadlock's victim is run again. */
  private static final int DEADLOCK_RETRIES = 3;

  private final DataSource dataSource;
  private final DataSource listenerDataSource;
  private final Tables tables;
  private final SchemaSetup schemaSetup;
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
  private final Vacuum vacuum;
  private final Transactions transactions;
  private final ClaimTransaction claims;

  private PostgresKvStore(Builder b) {
    this.dataSource = b.dataSource;
    this.listenerDataSource = b.listenerDataSource != null ? b.listenerDataSource : b.dataSource;
    this.tables = new Tables(b.schema, b.tablePrefix);
    this.schemaSetup = new SchemaSetup(tables, b.createSchema);
    this.threadFactory =
        b.threadFactory != null ? b.threadFactory : r -> daemonThread(r, "kvmq-postgres-listener");
    this.calls = new Outage("PostgreSQL store " + tables.describe() + " (node " + nodeId + ")");
    this.listening =
        new Outage(
            "PostgreSQL store " + tables.describe() + " (node " + nodeId + ", change listener)");
    ThreadFactory notifierThreads =
        b.threadFactory != null ? b.threadFactory : r -> daemonThread(r, "kvmq-postgres-notifier");
    this.notifier =
        new Notifier(b.dataSource, tables, notifierThreads, nodeId, EVERYONE, MAX_NOTIFY_PAYLOADS);
    ThreadFactory vacuumThreads =
        b.threadFactory != null ? b.threadFactory : r -> daemonThread(r, "kvmq-postgres-vacuum");
    this.vacuum = new Vacuum(b.dataSource, tables, vacuumThreads, b.vacuumEvery);
    this.transactions = new Transactions(tables, notifier, subscribers, vacuum);
    this.claims = new ClaimTransaction(tables, transactions);
  }

  /**
   * Starts a builder. Building touches no database: the schema is checked (and created) on first
   * use.
   *
   * @param dataSource where connections come from; a pooled one, normally
   * @return a builder with the defaults: table prefix {@code kvmq}, no schema (the connection's
   *     {@code search_path}), tables created on first use
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
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
    return call("get " + key, (c, a) -> Reads.get(c, tables, key, Reads.Where.POOLED));
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
    Map<ByteBuffer, KvEntry> found =
        call(
            "getMany of " + keys.size() + " keys",
            (c, a) -> transactions.readKeys(c, keys, Reads.Where.POOLED));
    return Reads.inKeyOrder(keys, found);
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
    return call(
        "list " + range,
        (c, a) -> Reads.list(c, tables, range, limit, reverse, Reads.Where.POOLED));
  }

  /**
   * {@inheritDoc} One statement, so one snapshot and one round trip.
   *
   * @throws NullPointerException if {@code ranges} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails or the schema is missing or too new
   */
  @Override
  public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    Objects.requireNonNull(ranges, "ranges");
    ranges.forEach(r -> Objects.requireNonNull(r, "range"));
    if (ranges.isEmpty()) {
      ensureOpen();
      return List.of();
    }
    return call(
        "firstEntries of " + ranges.size() + " ranges",
        (c, a) -> Reads.firstEntries(c, tables, ranges, Reads.Where.POOLED));
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
    return call("count " + range, (c, a) -> Reads.count(c, tables, range, Reads.Where.POOLED));
  }

  // ---- commits

  /**
   * {@inheritDoc}
   *
   * @throws NullPointerException if {@code operation} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (the operation may or may not be applied if the
   *     connection failed during the commit itself) or the schema is missing
   */
  @Override
  public CommitResult commit(AtomicOperation operation) {
    return commitAll(List.of(Objects.requireNonNull(operation, "operation"))).get(0);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here a batch is one transaction (the locks of its keys, one call of the commit function, one
   * flush at commit) as long as it takes at most {@value KeyLocks#MAX_KEY_LOCKS} key locks (the
   * keys of one job share one, see {@code KeyLocks}). A bigger batch is cut, in order and between
   * operations, into consecutive transactions of at most that many locks each: one big transaction
   * would have to lock the whole store, and make every other commit wait for it (a worker's group
   * commit of more than 48 completions is such a batch). An operation that alone takes more locks
   * is a transaction of its own and locks the whole store. Each operation's checks are evaluated
   * against the database as left by the operations before it; one that fails is refused alone. If
   * the database fails midway, the transactions before the failure are committed.
   *
   * @throws NullPointerException if {@code operations} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (any of the operations may or may not be applied
   *     if the connection failed during the commit itself) or the schema is missing
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
    String what =
        operations.size() == 1
            ? "commit " + operations.get(0)
            : "commitAll of " + operations.size() + " operations";
    if (!writes) {
      return call(what, (c, a) -> transactions.checkOnly(c, operations, Reads.Where.POOLED));
    }
    List<List<AtomicOperation>> parts = KeyLocks.lockGroups(operations);
    if (parts.size() == 1) {
      Transactions.Batch batch = call(what, (c, a) -> transactions.write(c, a, operations));
      notifyLocal(batch.applied());
      return batch.results();
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    for (List<AtomicOperation> part : parts) {
      Transactions.Batch batch =
          call(what + " (part of " + part.size() + ")", (c, a) -> transactions.write(c, a, part));
      notifyLocal(batch.applied());
      results.addAll(batch.results());
    }
    return Collections.unmodifiableList(results);
  }

  // ---- claims

  /**
   * {@inheritDoc}
   *
   * <p>Here the claim is one transaction, so that claims from many nodes (and threads) take
   * different entries instead of colliding on the first ones: it locks the first {@code limit}
   * index rows that no other transaction has locked ({@code SELECT ... ORDER BY key LIMIT n FOR
   * UPDATE SKIP LOCKED}), reads their records, calls the planner, and applies the operations with
   * the commit function (key locks, checks and all, exactly as {@link #commitAll}) before {@code
   * COMMIT}. If the planner gives a {@linkplain ClaimPlanner#recordKeyRule() record key rule}, the
   * records come in the same statement as the index rows (a join on the rule's key), so a claim is
   * two round trips (that statement, then the function and {@code COMMIT}); a record whose key is
   * not the planner's {@code recordKey} is read in a statement of its own. An index row locked by
   * another claim is being claimed by it: skipping it keeps the queue order for everything this
   * claim can take. The row locks end with the transaction.
   *
   * @throws NullPointerException if an argument is null, or the planner returns null or a null key
   *     or operation
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the database fails (the operations may or may not be applied if the
   *     connection failed during the commit itself) or the schema is missing
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
      List<AtomicOperation> ops =
          Objects.requireNonNull(planner.plan(List.of(), List.of()), "planned operations");
      return ops.isEmpty() ? List.of() : commitAll(ops);
    }
    Transactions.Batch batch =
        call("claim from " + range, (c, a) -> claims.claim(c, a, range, limit, planner));
    notifyLocal(batch.applied());
    return batch.results();
  }

  // ---- in the caller's transaction

  /**
   * A view of this store whose reads and commits go through {@code connection}, in the transaction
   * the caller holds on it: a job pushed through it ({@code queue.withStore(view).push(...)})
   * exists exactly when that transaction commits. Change notifications are sent by {@code NOTIFY}
   * in the transaction, so PostgreSQL delivers them at its commit and drops them at a rollback. See
   * {@link ConnectionStore}.
   *
   * @param connection a connection to this store's database, in a transaction (not in auto-commit
   *     mode, or in an XA branch, which pgjdbc opens with {@code BEGIN} while the connection still
   *     says auto-commit), which the caller commits or rolls back (kvmq never does, nor closes it)
   * @return the view, for this transaction only
   * @throws NullPointerException if {@code connection} is null
   * @throws IllegalStateException if the store is closed
   */
  public ConnectionStore inTransaction(Connection connection) {
    return inTransaction(connection, true);
  }

  /**
   * A view of this store on the caller's connection and transaction, as {@link
   * #inTransaction(Connection)}, choosing how change notifications go out.
   *
   * @param connection a connection to this store's database, in a transaction (not in auto-commit
   *     mode, or in an XA branch, which pgjdbc opens with {@code BEGIN} while the connection still
   *     says auto-commit), which the caller commits or rolls back (kvmq never does, nor closes it)
   * @param notifyInTransaction true to {@code NOTIFY} in the transaction (delivered at its commit);
   *     false for a transaction that may be prepared for two-phase commit (XA), which PostgreSQL
   *     refuses for one that notified: then call {@link ConnectionStore#afterCommit()} after the
   *     commit
   * @return the view, for this transaction only
   * @throws NullPointerException if {@code connection} is null
   * @throws IllegalStateException if the store is closed
   */
  public ConnectionStore inTransaction(Connection connection, boolean notifyInTransaction) {
    Objects.requireNonNull(connection, "connection");
    ensureOpen();
    return new ConnectionStore(this, tables, transactions, connection, notifyInTransaction);
  }

  /** For a view: the schema is ready (prepared on a connection of the store's own if not). */
  void prepareSchema() {
    ensureSchema();
  }

  /** For a view: throws if the store is closed. */
  void ensureOpenForView() {
    ensureOpen();
  }

  /** For a view, after the caller's transaction committed: tells this node and the others. */
  void announceCommitted(List<AtomicOperation> applied) {
    try {
      notifyLocal(applied);
      notifier.send(Transactions.announced(applied));
    } catch (RuntimeException e) {
      LOG.log(
          Level.DEBUG, () -> this + ": notifying a commit in the caller's transaction failed", e);
    }
  }

  // ---- notification

  /**
   * {@inheritDoc} Always true: commits on any node reach subscribers through {@code LISTEN/NOTIFY},
   * commits through this store directly.
   */
  @Override
  public boolean notifiesChanges() {
    return true;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The first subscription starts the store's listener thread and its {@code LISTEN} connection.
   * Listeners are called on that thread for commits of other nodes (other store instances), and on
   * the committing thread for commits through this store. After the listener (re)connects, every
   * subscriber is called once, because notifications sent while it was not listening are lost.
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
    listener =
        new ChangeListener(
            listenerDataSource,
            tables,
            this::ensureSchema,
            this::onPayload,
            listening,
            threadFactory);
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
   * Tells whether the store can reach its database, for health reporting: false while the latest
   * call failed for a reason of the database's (unreachable, restarting, schema missing) and no
   * call has succeeded since, or while the change listener, once started, is not connected. Cheap:
   * it reports what calls saw and runs no query itself.
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
   * Stops the listener thread and its connection. Borrowed connections were already returned; the
   * DataSource is the caller's and stays open. A second close does nothing.
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
    vacuum.close();
    subscribers
        .close(); // waits for listeners running on committing threads and the listener thread
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

  /** The store's own vacuums of the kv table (see {@link Builder#vacuumEvery}). */
  Vacuum vacuum() {
    return vacuum;
  }

  /** The id that marks this instance's own notifications and names it in logs. */
  String nodeId() {
    return nodeId;
  }

  // ---- plumbing

  private <T> T call(String what, Jdbc.Work<T> work) {
    ensureOpen();
    ensureSchema();
    return attempt(what, work);
  }

  /**
   * Runs {@code work} on a borrowed connection; retries once on a fresh connection if the borrowed
   * one failed before anything could have been committed (a stale pooled connection after a
   * database restart, or one the driver had already closed: {@link Jdbc#neverSent}), and up to
   * {@link #DEADLOCK_RETRIES} times if PostgreSQL chose this transaction as a deadlock's victim (it
   * was rolled back, so nothing was applied; see {@link #claim} for how a claim and a delete can
   * deadlock).
   */
  private <T> T attempt(String what, Jdbc.Work<T> work) {
    boolean staleRetried = false;
    for (int deadlocks = 0; ; ) {
      Connection c;
      try {
        c = dataSource.getConnection();
      } catch (SQLException e) {
        throw failure(what, "can't get a connection" + listenerHoldsOne(), e);
      }
      Jdbc.Attempt attempt = new Jdbc.Attempt();
      try {
        T result = work.run(c, attempt);
        calls.succeeded();
        return result;
      } catch (SQLException e) {
        if (!staleRetried
            && (!attempt.commitSent || Jdbc.neverSent(e))
            && Jdbc.isConnectionFailure(e)) {
          staleRetried = true;
          LOG.log(
              Level.DEBUG,
              () -> this + ": " + what + " failed on a stale connection; retrying once",
              e);
          continue;
        }
        // a deadlock's victim was rolled back, even if its COMMIT was sent (PostgreSQL skipped it)
        if (deadlocks < DEADLOCK_RETRIES && DEADLOCK.equals(e.getSQLState())) {
          deadlocks++;
          LOG.log(Level.DEBUG, () -> this + ": " + what + " was a deadlock's victim; retrying", e);
          continue;
        }
        throw failure(
            what, Jdbc.mayHaveCommitted(attempt, e) ? "the commit's outcome is unknown" : null, e);
      } finally {
        Jdbc.closeQuietly(c);
      }
    }
  }

  /**
   * What a failure to borrow a connection should know when this store's listener holds one of the
   * same DataSource's connections for as long as it runs: a pool sized for the calls alone runs out
   * (a new user's pool of one failed every call).
   */
  private String listenerHoldsOne() {
    synchronized (this) {
      if (listener == null || listenerDataSource != dataSource) {
        return "";
      }
    }
    return "; the store's change listener holds one connection of this DataSource while it runs:"
        + " size the pool for it, or give the listener its own (listenerDataSource)";
  }

  private KvStoreException failure(String what, String note, SQLException e) {
    calls.failed(what, e);
    return new KvStoreException(
        this
            + ": "
            + what
            + " failed"
            + (note == null ? "" : " (" + note + ")")
            + ": "
            + e.getMessage()
            + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]"),
        e);
  }

  private void ensureSchema() {
    if (schemaReady) {
      return;
    }
    synchronized (schemaLock) {
      if (schemaReady) {
        return;
      }
      attempt(
          "preparing the schema",
          (c, a) -> {
            schemaSetup.prepare(c);
            return null;
          });
      schemaReady = true;
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

  /** Options of a {@link PostgresKvStore}. Not thread-safe. */
  public static final class Builder {
    /** The default of {@link #vacuumEvery}: keys written between two vacuums of the table. */
    public static final int DEFAULT_VACUUM_EVERY = 100_000;

    /** The least {@link #vacuumEvery} above 0. */
    public static final int MIN_VACUUM_EVERY = 1_000;

    private final DataSource dataSource;
    private DataSource listenerDataSource;
    private String schema;
    private String tablePrefix = "kvmq";
    private boolean createSchema = true;
    private ThreadFactory threadFactory;
    private int vacuumEvery = DEFAULT_VACUUM_EVERY;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Puts the tables in a PostgreSQL schema (created on first use if the tables are). A word the
     * server reserves ({@code user}, {@code order}, ...) can't be one: the store's first call fails
     * with a {@link dev.kvmq.store.KvStoreException} that says so.
     *
     * @param schema a lower-case identifier of at most 20 characters, or null for the connection's
     *     {@code search_path} (the default)
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
     * Names the tables {@code <prefix>_kv} and {@code <prefix>_schema_version}, the sequence {@code
     * <prefix>_versionstamp}, and the notification channel {@code [<schema>_]<prefix>_changes}. Two
     * stores with different prefixes in one database are independent.
     *
     * @param tablePrefix a lower-case identifier of at most 30 characters; default {@code kvmq}
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
     * Whether the store creates its tables (and schema) on first use, under an advisory lock so
     * that nodes starting together don't race. Off for teams that run the shipped SQL file with
     * their own migration tool: the store then only checks that the tables exist and have a schema
     * version it knows.
     *
     * @param createSchema true (the default) to create missing tables
     * @return this builder
     */
    public Builder createSchema(boolean createSchema) {
      this.createSchema = createSchema;
      return this;
    }

    /**
     * Where the one long-lived {@code LISTEN} connection comes from, when it should not be taken
     * from the main pool (whose size it would reduce by one, and which may hide the PostgreSQL
     * connection from {@code unwrap}).
     *
     * @param listenerDataSource the source, or null for the main DataSource (the default)
     * @return this builder
     */
    public Builder listenerDataSource(DataSource listenerDataSource) {
      this.listenerDataSource = listenerDataSource;
      return this;
    }

    /**
     * Makes the store's threads (the change listener, the notifier that sends this node's change
     * notifications, and the one that vacuums the table, see {@link #vacuumEvery}), for containers
     * that want their own (managed) threads.
     *
     * @param threadFactory the factory, or null for daemon threads named {@code
     *     kvmq-postgres-listener}, {@code kvmq-postgres-notifier} and {@code kvmq-postgres-vacuum}
     *     (the default)
     * @return this builder
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /**
     * How often the store vacuums its table itself: after every {@code keysWritten} keys this
     * node's commits write (set or deleted), a {@code VACUUM (SKIP_LOCKED)} of the kv table on a
     * thread of the store's (see {@link #threadFactory}) and a connection of the pool. A queue
     * leaves about four dead rows per job, and autovacuum visits a table at most once per {@code
     * autovacuum_naptime} (1 min by default): at a few thousand jobs a second, claims then step
     * over hundreds of thousands of dead rows (docs/postgres-store.md, "Table bloat"). A vacuum
     * blocks no reads or writes; one that another session's vacuum would wait for is skipped. A
     * role that may not vacuum the table (not its owner) is told once in the log, and the table is
     * left to autovacuum.
     *
     * @param keysWritten keys written between two vacuums, at least 1,000; or 0 to leave the table
     *     to autovacuum alone. Default {@value #DEFAULT_VACUUM_EVERY} (about 13,000 jobs)
     * @return this builder
     * @throws IllegalArgumentException if {@code keysWritten} is negative, or between 1 and 999
     */
    public Builder vacuumEvery(int keysWritten) {
      if (keysWritten < 0 || (keysWritten > 0 && keysWritten < MIN_VACUUM_EVERY)) {
        throw new IllegalArgumentException(
            "vacuumEvery must be 0 (no vacuums of the store's own) or at least "
                + MIN_VACUUM_EVERY
                + " keys written, not "
                + keysWritten);
      }
      this.vacuumEvery = keysWritten;
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
