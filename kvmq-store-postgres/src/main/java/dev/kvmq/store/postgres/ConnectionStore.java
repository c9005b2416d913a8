package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A view of a {@link PostgresKvStore} whose reads and commits go through a connection the caller
 * holds, in the caller's open transaction: what it commits becomes visible, and durable, exactly
 * when that transaction commits, and vanishes if it rolls back. kvmq neither commits, rolls back
 * nor closes the connection. Made by {@link PostgresKvStore#inTransaction(Connection)}; a kernel
 * {@code Queue} pushes through it with {@code queue.withStore(view)}.
 *
 * <pre>{@code
 * connection.setAutoCommit(false);
 * insertOrder(connection, order);
 * Job<Email> job = emails.withStore(store.inTransaction(connection)).push(confirmation);
 * connection.commit(); // the order and the job, together
 * }</pre>
 *
 * <p><b>Commits.</b> Each {@link #commit} is one call of the store's commit function inside a
 * savepoint, on the caller's connection: the same key locks, checks and versionstamps as the
 * store's own commits. The key locks are held until the caller's transaction ends, so another
 * writer of the same keys waits for it (a worker never does: it can't see, and so never claims or
 * changes, a job the transaction has not committed). A commit that fails (a check on a lock
 * timeout, a missing schema) is rolled back to its savepoint: nothing of it is written, and the
 * caller's transaction can go on. An operation that takes more than {@value KeyLocks#MAX_KEY_LOCKS}
 * key locks (a {@code pushAll} of more than 48 jobs, or of more than 24 with a unique key: a job's
 * keys share one lock, its unique key has its own) is refused: it would lock the whole store until
 * the transaction ends; push in smaller calls, the transaction makes them atomic together.
 *
 * <p><b>Notifications.</b> By default, each commit that writes issues {@code NOTIFY} on the
 * caller's connection: PostgreSQL delivers it when the transaction commits and drops it when it
 * rolls back, so workers (on every node, this one included) wake up exactly for committed jobs. A
 * transaction that is prepared for two-phase commit must not notify (PostgreSQL refuses to {@code
 * PREPARE} one that did): with {@link PostgresKvStore#inTransaction(Connection, boolean)
 * inTransaction(connection, false)} the view sends nothing in the transaction, and {@link
 * #afterCommit()}, called once the transaction committed, sends the notifications through the
 * store.
 *
 * <p><b>Reads</b> are single statements on the connection: they see the transaction's own writes. A
 * read that fails fails the caller's transaction, as any failed statement does. {@link #claim} is
 * the SPI's default; a view is for pushing, workers use the store. {@link #subscribe} is not
 * supported. The view belongs to one transaction and one thread, like its connection; {@link
 * #close()} marks it closed and leaves the connection alone.
 */
public final class ConnectionStore implements KvStore {

  /** Above this many distinct announced prefixes, one commit notifies everyone instead. */
  private static final int MAX_NOTIFY_PAYLOADS = 16;

  /** What this view's payloads start with: no node's id, so every node's listener wakes. */
  static final String TAG = "tx";

  /** SQLState in_failed_sql_transaction. */
  private static final String FAILED_TRANSACTION = "25P02";

  /** SQLState no_active_sql_transaction: a savepoint outside a transaction block. */
  private static final String NO_TRANSACTION = "25P01";

  private final PostgresKvStore store;
  private final Tables tables;
  private final Transactions transactions;
  private final Connection connection;
  private final boolean notifyInTransaction;
  private final List<AtomicOperation> committed = new ArrayList<>();
  private boolean closed;

  ConnectionStore(
      PostgresKvStore store,
      Tables tables,
      Transactions transactions,
      Connection connection,
      boolean notifyInTransaction) {
    this.store = store;
    this.tables = tables;
    this.transactions = transactions;
    this.connection = Objects.requireNonNull(connection, "connection");
    this.notifyInTransaction = notifyInTransaction;
  }

  /**
   * Returns the connection this view works on.
   *
   * @return the caller's connection
   */
  public Connection connection() {
    return connection;
  }

  // ---- reads

  /**
   * {@inheritDoc} On the caller's connection: it sees the transaction's own writes.
   *
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalStateException if the view or the store is closed, or the connection is closed
   *     or in auto-commit mode
   * @throws KvStoreException if the database fails
   */
  @Override
  public Optional<KvEntry> get(Key key) {
    Objects.requireNonNull(key, "key");
    return read("get " + key, () -> Reads.get(connection, tables, key, Reads.Where.CALLERS));
  }

  /**
   * {@inheritDoc} On the caller's connection: it sees the transaction's own writes.
   *
   * @throws NullPointerException if {@code keys} or one of them is null
   * @throws IllegalStateException if the view or the store is closed, or the connection is closed
   *     or in auto-commit mode
   * @throws KvStoreException if the database fails
   */
  @Override
  public List<Optional<KvEntry>> getMany(List<Key> keys) {
    Objects.requireNonNull(keys, "keys");
    keys.forEach(k -> Objects.requireNonNull(k, "key"));
    if (keys.isEmpty()) {
      ensureUsable();
      return List.of();
    }
    Map<ByteBuffer, KvEntry> found =
        read(
            "getMany of " + keys.size() + " keys",
            () -> transactions.readKeys(connection, keys, Reads.Where.CALLERS));
    return Reads.inKeyOrder(keys, found);
  }

  /**
   * {@inheritDoc} On the caller's connection: it sees the transaction's own writes.
   *
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the view or the store is closed, or the connection is closed
   *     or in auto-commit mode
   * @throws KvStoreException if the database fails
   */
  @Override
  public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
    Objects.requireNonNull(range, "range");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    if (range.isEmpty()) {
      ensureUsable();
      return List.of();
    }
    return read(
        "list " + range,
        () -> Reads.list(connection, tables, range, limit, reverse, Reads.Where.CALLERS));
  }

  /**
   * {@inheritDoc} One statement on the caller's connection: it sees the transaction's own writes.
   *
   * @throws NullPointerException if {@code ranges} or one of them is null
   * @throws IllegalStateException if the view or the store is closed, or the connection is closed
   *     or in auto-commit mode
   * @throws KvStoreException if the database fails
   */
  @Override
  public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    Objects.requireNonNull(ranges, "ranges");
    ranges.forEach(r -> Objects.requireNonNull(r, "range"));
    if (ranges.isEmpty()) {
      ensureUsable();
      return List.of();
    }
    return read(
        "firstEntries of " + ranges.size() + " ranges",
        () -> Reads.firstEntries(connection, tables, ranges, Reads.Where.CALLERS));
  }

  // ---- commits

  /**
   * {@inheritDoc}
   *
   * <p>Here the operation is applied in the caller's transaction, inside a savepoint: it is visible
   * to others, and durable, when that transaction commits. A result that is not {@code ok} (a check
   * failed) wrote nothing.
   *
   * @throws NullPointerException if {@code operation} is null
   * @throws IllegalArgumentException if the operation takes more than {@value
   *     KeyLocks#MAX_KEY_LOCKS} key locks (see the class comment)
   * @throws IllegalStateException if the view or the store is closed, or the connection is closed
   *     or in auto-commit mode; nothing was written
   * @throws KvStoreException if the database refuses or fails the commit (the message says whether
   *     the caller's transaction can go on); nothing of the operation was written
   */
  @Override
  public CommitResult commit(AtomicOperation operation) {
    Objects.requireNonNull(operation, "operation");
    if (KeyLocks.lockKeys(List.of(), keysOf(operation)) == null) {
      throw new IllegalArgumentException(
          "an operation that takes more than "
              + KeyLocks.MAX_KEY_LOCKS
              + " key locks (one per job it writes, one per unique key) can't commit in the"
              + " caller's transaction: it would lock the whole store until the transaction ends."
              + " Push at most 48 jobs per call (24 with unique keys); the transaction makes the"
              + " calls atomic together");
    }
    ensureUsable();
    store.prepareSchema();
    if (operation.isReadOnly()) {
      return read(
          "commit " + operation,
          () -> transactions.checkOnly(connection, List.of(operation), Reads.Where.CALLERS).get(0));
    }
    String[] payloads =
        notifyInTransaction ? payloads(Transactions.announced(List.of(operation))) : new String[0];
    Long[] outcome;
    try {
      outcome =
          transactions.callCommit(
              connection, tables.commitInCallersTransaction, List.of(operation), payloads);
    } catch (SQLException e) {
      throw failed("commit " + operation, e);
    }
    if (outcome.length != 1) {
      throw new IllegalStateException(
          "the commit function returned " + outcome.length + " outcomes for 1. Indicates a bug.");
    }
    if (outcome[0] <= 0) {
      return CommitResult.checkFailed();
    }
    committed.add(operation);
    return CommitResult.committed(outcome[0]);
  }

  /**
   * {@inheritDoc} Each operation is a {@link #commit} of its own, in the caller's transaction.
   *
   * @throws NullPointerException if {@code operations} or one of them is null
   * @throws IllegalArgumentException if an operation takes more than {@value
   *     KeyLocks#MAX_KEY_LOCKS} key locks (nothing of the batch was written)
   * @throws IllegalStateException as {@link #commit} does
   * @throws KvStoreException as {@link #commit} does; the operations before the failing one are
   *     applied in the transaction
   */
  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    Objects.requireNonNull(operations, "operations");
    for (AtomicOperation op : operations) {
      Objects.requireNonNull(op, "operation");
      if (KeyLocks.lockKeys(List.of(), keysOf(op)) == null) {
        commit(op); // throws
      }
    }
    List<CommitResult> results = new ArrayList<>(operations.size());
    for (AtomicOperation op : operations) {
      results.add(commit(op));
    }
    return Collections.unmodifiableList(results);
  }

  /**
   * Sends the change notifications of everything this view committed, once the caller's transaction
   * has committed: for a view made with {@link PostgresKvStore#inTransaction(Connection, boolean)
   * inTransaction(connection, false)}, where nothing is notified in the transaction. Other nodes
   * hear of it through the store's notifier, this node's subscribers directly. Call it only after a
   * commit (never after a rollback: the wake-up is harmless, but pointless); a second call does
   * nothing. On a view that notifies in the transaction, it does nothing. Never throws.
   */
  public void afterCommit() {
    if (notifyInTransaction || committed.isEmpty()) {
      committed.clear();
      return;
    }
    List<AtomicOperation> done = List.copyOf(committed);
    committed.clear();
    store.announceCommitted(done);
  }

  // ---- notification

  /**
   * {@inheritDoc} True: the key locks of this view's commits are transaction locks, held until the
   * caller's transaction ends.
   */
  @Override
  public boolean joinsCallersTransaction() {
    return true;
  }

  /** {@inheritDoc} False: a view is for pushing; subscribe to the store. */
  @Override
  public boolean notifiesChanges() {
    return false;
  }

  /**
   * Not supported: subscribe to the store.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public Subscription subscribe(Key prefix, Runnable listener) {
    throw new UnsupportedOperationException(
        "a view on the caller's connection does not notify: subscribe to " + store);
  }

  /** Marks the view closed. The connection is the caller's and stays as it is. */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return store + " in the caller's transaction";
  }

  // ---- plumbing

  /** A unit of work on the caller's connection. */
  @FunctionalInterface
  private interface Read<T> {
    T run() throws SQLException;
  }

  private <T> T read(String what, Read<T> work) {
    ensureUsable();
    store.prepareSchema();
    try {
      return work.run();
    } catch (SQLException e) {
      if (NO_TRANSACTION.equals(e.getSQLState())) {
        throw notInTransaction(e);
      }
      throw new KvStoreException(message(what, e, "the caller's transaction has failed"), e);
    }
  }

  /**
   * Checks that the view and the store are open and the connection is not closed. Whether it is in
   * a transaction is left to the database: every read and commit of the view starts with a {@code
   * SAVEPOINT}, which PostgreSQL refuses outside a transaction block ({@link #NO_TRANSACTION}),
   * before anything is written. {@code getAutoCommit()} can't tell: pgjdbc's XA connections open
   * their branch with {@code BEGIN} and keep saying they are in auto-commit mode.
   */
  private void ensureUsable() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
    store.ensureOpenForView();
    try {
      if (connection.isClosed()) {
        throw new IllegalStateException(this + ": the connection is closed; nothing was written");
      }
    } catch (SQLException e) {
      throw new KvStoreException(
          this + ": the connection can't tell its state: " + e.getMessage() + Jdbc.state(e), e);
    }
  }

  /**
   * After a failed commit: undoes it to its savepoint so that the caller's transaction can go on,
   * unless the transaction had failed before (then there is no savepoint to go back to).
   */
  private RuntimeException failed(String what, SQLException e) {
    if (NO_TRANSACTION.equals(e.getSQLState())) {
      return notInTransaction(e);
    }
    if (FAILED_TRANSACTION.equals(e.getSQLState())) {
      return new KvStoreException(
          this
              + ": "
              + what
              + " refused: the caller's transaction has already failed (an earlier statement"
              + " failed); roll it back. Nothing was written"
              + Jdbc.state(e),
          e);
    }
    String after;
    try (Statement s = connection.createStatement()) {
      s.execute(
          "ROLLBACK TO SAVEPOINT " + Tables.SAVEPOINT + "; RELEASE SAVEPOINT " + Tables.SAVEPOINT);
      after = "nothing of it was written; the caller's transaction can go on";
    } catch (SQLException again) {
      e.addSuppressed(again);
      after = "nothing of it was written; the caller's transaction has failed: roll it back";
    }
    return new KvStoreException(message(what, e, after), e);
  }

  /** The connection has no open transaction: the savepoint was refused, nothing ran after it. */
  private IllegalStateException notInTransaction(SQLException e) {
    return new IllegalStateException(
        this
            + ": the connection is in auto-commit mode with no transaction open, so there is no"
            + " transaction to write in; call setAutoCommit(false) first (or push on the store"
            + " itself); nothing was written",
        e);
  }

  private String message(String what, SQLException e, String after) {
    return this + ": " + what + " failed (" + after + "): " + e.getMessage() + Jdbc.state(e);
  }

  private static String[] payloads(Set<String> prefixes) {
    if (prefixes.isEmpty()) {
      return new String[0];
    }
    if (prefixes.size() > MAX_NOTIFY_PAYLOADS) {
      return new String[] {TAG + ":" + PostgresKvStore.EVERYONE};
    }
    Set<String> tagged = new LinkedHashSet<>();
    for (String p : prefixes) {
      tagged.add(TAG + ":" + p);
    }
    return tagged.toArray(new String[0]);
  }

  private static List<byte[]> keysOf(AtomicOperation op) {
    List<byte[]> keys = new ArrayList<>();
    for (AtomicOperation.Check check : op.checks()) {
      keys.add(check.key().encoded());
    }
    for (AtomicOperation.Mutation m : op.mutations()) {
      keys.add(m.key().encoded());
    }
    return keys;
  }
}
