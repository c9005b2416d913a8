package dev.kvmq.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The store SPI: an ordered, versioned key-value map (the model of Deno KV).
 *
 * <ul>
 *   <li>Keys are {@link Key} tuples, in the one total order documented there.
 *   <li>Values are opaque bytes, at most {@link #MAX_VALUE_BYTES} each.
 *   <li>Every commit that writes gets a versionstamp strictly greater than that of every commit
 *       that finished before it started; every key it writes carries that versionstamp. So a key's
 *       versionstamps increase in the order its writes commit; commits that overlap and share no
 *       key may get theirs in either order.
 *   <li>Reads ({@link #get}, {@link #getMany}, {@link #list}, {@link #count}) each see one
 *       consistent state: all of a commit or none of it. {@link #firstEntries} reads the first
 *       entry of several ranges, each range at one consistent state; a store may read them all at
 *       one state and in one round trip.
 *   <li>{@link #commit} applies an {@link AtomicOperation} all or nothing, serializably with every
 *       other commit. A failed check is a normal {@link CommitResult}.
 *   <li>{@link #commitAll} commits many independent operations at once, so that a durable store can
 *       make them all durable with one flush (group commit).
 *   <li>{@link #claim} reads the first entries of an index range, lets the caller plan operations
 *       from them and commits those; a store may make concurrent claims take different entries
 *       instead of colliding on the first ones.
 *   <li>A store may notify subscribers of commits ({@link #notifiesChanges()}), so that an idle
 *       worker waits instead of polling.
 * </ul>
 *
 * <p>Implementations are thread-safe. Every implementation passes the contract suite {@code
 * dev.kvmq.store.KvStoreContract} in the kernel's test jar.
 *
 * <p>Errors: arguments that break the rules get {@link NullPointerException} or {@link
 * IllegalArgumentException} naming the problem, before anything is written; a closed store gets
 * {@link IllegalStateException}; a failure of the store itself (I/O, connection) gets {@link
 * KvStoreException}.
 */
public interface KvStore extends AutoCloseable {

  /** The longest {@link Key#encoded()} a store accepts, in bytes. */
  int MAX_KEY_BYTES = 2048;

  /** The longest value a store accepts, in bytes (1 MiB). */
  int MAX_VALUE_BYTES = 1 << 20;

  /**
   * Reads one key.
   *
   * @param key the key
   * @return the entry, or empty if the key is absent
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  Optional<KvEntry> get(Key key);

  /**
   * Reads several keys at one consistent state.
   *
   * @param keys the keys; may repeat
   * @return one element per key, in the same order: the entry, or empty if absent
   * @throws NullPointerException if {@code keys} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  List<Optional<KvEntry>> getMany(List<Key> keys);

  /**
   * Lists the entries of a range in key order (or reverse key order), at one consistent state.
   *
   * @param range the keys to list
   * @param limit the most entries to return, at least 1
   * @param reverse true to start from the end of the range
   * @return up to {@code limit} entries
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  List<KvEntry> list(KeyRange range, int limit, boolean reverse);

  /**
   * Lists every entry of a range in key order.
   *
   * @param range the keys to list
   * @return the entries
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  default List<KvEntry> list(KeyRange range) {
    return list(range, Integer.MAX_VALUE, false);
  }

  /**
   * Counts the keys of a range without returning them.
   *
   * @param range the keys to count
   * @return the number of keys in the range
   * @throws NullPointerException if {@code range} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  default long count(KeyRange range) {
    return list(range).size();
  }

  /**
   * Reads the first entry, in key order, of each of several ranges: what a worker reads to learn
   * when it must look at the queue again (the first delayed job, the first lease's end, ...).
   *
   * <p>Each range is read at one consistent state, like {@link #list}. A store may read them all at
   * one state and in one round trip; the default lists them one by one, and the bundled stores read
   * them together.
   *
   * @param ranges the ranges; may repeat, may be empty
   * @return one element per range, in the same order: the range's first entry, or empty if it has
   *     none
   * @throws NullPointerException if {@code ranges} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  default List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
    Objects.requireNonNull(ranges, "ranges");
    ranges.forEach(r -> Objects.requireNonNull(r, "range"));
    List<Optional<KvEntry>> result = new ArrayList<>(ranges.size());
    for (KeyRange range : ranges) {
      List<KvEntry> first = list(range, 1, false);
      result.add(first.isEmpty() ? Optional.empty() : Optional.of(first.get(0)));
    }
    return List.copyOf(result);
  }

  /**
   * Applies an atomic operation if all its checks hold.
   *
   * <p>When this method returns {@code ok}, the commit is as durable as the store promises (see
   * each store's documentation) and visible to every later read.
   *
   * @param operation the checks and mutations
   * @return {@link CommitResult#committed(long)} or {@link CommitResult#checkFailed()}; an
   *     operation with no mutations whose checks hold also returns {@code ok}, with the
   *     versionstamp of the latest commit
   * @throws NullPointerException if {@code operation} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails; the operation may or may not be applied
   */
  CommitResult commit(AtomicOperation operation);

  /**
   * Applies several independent atomic operations, in order, each with its own checks: one failing
   * check refuses only its own operation. A durable store makes them durable together, so that a
   * batch costs about what one commit costs.
   *
   * <p>The default commits them one by one; stores override it.
   *
   * @param operations the operations, applied in list order
   * @return one result per operation, in the same order
   * @throws NullPointerException if {@code operations} or one of them is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails; any of the operations may or may not be applied
   */
  default List<CommitResult> commitAll(List<AtomicOperation> operations) {
    List<CommitResult> results = new ArrayList<>(operations.size());
    for (AtomicOperation op : operations) {
      results.add(commit(op));
    }
    return results;
  }

  /**
   * Reads up to {@code limit} entries of an index range, in key order, and the record each one
   * points at, asks {@code planner} for the operations to commit, and commits them as {@link
   * #commitAll} does. This is how the kernel claims jobs: the range is a queue's {@code ready}
   * index, the records are the jobs, the operations lease them.
   *
   * <p>The default does exactly that with {@link #list}, {@link #getMany} and {@link #commitAll}:
   * concurrent callers read the same first entries and all but one see their checks fail. A store
   * may override it so that concurrent claims (from this or another node) take <em>different</em>
   * entries: it may then leave out entries that another claim in progress has taken, and only
   * those, so that the planner sees the first {@code limit} entries that no other claim holds, in
   * key order. Whatever it does, the operations are committed with their checks, so correctness
   * never depends on it.
   *
   * <p>Every record is read no earlier than its index entry, and all records at one consistent
   * state; the entries and the records need not be one snapshot, so a planner plans from the record
   * (an entry may point at a record that another claim has just taken). The planner may be called
   * more than once (a store may retry on a fresh connection); only the operations of its last call
   * are committed, and the results refer to those. It must not call the store (a store may hold
   * locks while it runs) and should return quickly.
   *
   * @param range the index entries to claim from
   * @param limit the most entries to read, at least 1
   * @param planner maps index entries to records, and plans the operations
   * @return one result per operation the planner returned (in its order); empty if it returned
   *     none, in which case nothing is committed
   * @throws NullPointerException if an argument is null, or the planner returns null or a null key
   *     or operation
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails; any of the operations may or may not be applied
   */
  default List<CommitResult> claim(KeyRange range, int limit, ClaimPlanner planner) {
    Objects.requireNonNull(range, "range");
    Objects.requireNonNull(planner, "planner");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    List<KvEntry> index = list(range, limit, false);
    List<Optional<KvEntry>> records =
        index.isEmpty() ? List.of() : getMany(ClaimPlanner.recordKeys(planner, index));
    List<AtomicOperation> operations =
        Objects.requireNonNull(planner.plan(index, records), "planned operations");
    return operations.isEmpty() ? List.of() : commitAll(operations);
  }

  /**
   * Tells whether this store applies commits one after another on a single writer, each at a cost
   * that does not grow much with its operations (EclipseStore's committer, which forces its files
   * once per group of commits): operations committed together then wait once, where apart they wait
   * in turn. A worker on such a store lets the outcomes its handlers submit while its pass runs
   * ride in the pass's claim, one commit where there were two in a row (docs/semantics.md, "The
   * group committer"). Where commits run side by side (PostgreSQL's connections) or cost little (in
   * memory), merging them lengthens the claim, which the worker waits for, and the default, false,
   * keeps them apart.
   *
   * @return true if commits are applied one at a time at a cost mostly per commit; false (the
   *     default) otherwise
   */
  default boolean commitsOneAtATime() {
    return false;
  }

  /**
   * Tells whether this store's commits join a transaction its caller holds, so that the locks a
   * commit takes on the keys it writes last until the caller commits or rolls back (a view such as
   * {@code PostgresKvStore.inTransaction(connection)}). A queue on such a store writes no key that
   * other jobs share where it can avoid it: a job of a group is pushed delayed, due at its push,
   * and a worker admits it to its group once the caller's transaction has committed
   * (docs/semantics.md, "Pushing in the caller's transaction").
   *
   * @return true if commits hold their locks until the caller's transaction ends; false (the
   *     default) if each commit ends its own
   */
  default boolean joinsCallersTransaction() {
    return false;
  }

  /**
   * Tells whether {@link #subscribe} works on this store. When it does not, callers poll.
   *
   * @return true if the store notifies subscribers of commits
   */
  boolean notifiesChanges();

  /**
   * Calls {@code listener} after every commit that writes a key under {@code prefix} (that {@code
   * prefix} is a prefix of, or equal to).
   *
   * <p>Notifications are wake-up hints: a listener may be called when nothing under its prefix
   * changed, and several commits may be reported by one call; it is called after the commit is
   * visible to reads. A store shared by several processes may lose the notification of a commit
   * made by a process that dies right after it, so a subscriber that must not miss a change also
   * looks now and then (the kernel's worker does, every {@code pollInterval}). The listener runs on
   * a store thread or a committing thread: it must return quickly and must not call the store;
   * schedule work elsewhere. Exceptions it throws are logged and ignored.
   *
   * @param prefix the keys of interest
   * @param listener what to call
   * @return a handle that stops the notifications when closed
   * @throws NullPointerException if an argument is null
   * @throws UnsupportedOperationException if {@link #notifiesChanges()} is false
   * @throws IllegalStateException if the store is closed
   */
  Subscription subscribe(Key prefix, Runnable listener);

  /**
   * Closes the store and releases its resources (files, locks, connections). Calls after this one
   * throw {@link IllegalStateException}; a second close does nothing. Every subscription is closed
   * as {@link Subscription#close()} says: after this returns, no change listener is running or
   * starts.
   *
   * @throws KvStoreException if releasing a resource fails
   */
  @Override
  void close();

  /**
   * What a {@link KvStore#claim} does with the index entries it reads: it names the record each
   * entry points at, and plans the operations to commit once the records are read. Implementations
   * must not call the store.
   */
  interface ClaimPlanner {
    /**
     * Names the record an index entry points at.
     *
     * @param indexKey the key of an index entry
     * @return the key of its record
     */
    Key recordKey(Key indexKey);

    /**
     * Plans the operations to commit. May be called more than once per claim; only the last call's
     * operations are committed.
     *
     * @param index the index entries read, in key order, at most the claim's limit
     * @param records for each index entry, its record (empty if absent), in the same order
     * @return the operations to commit, in order; empty to commit nothing
     */
    List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records);

    /**
     * Tells, if it can, how {@link #recordKey} maps keys in bytes, so that a store can read the
     * records in the same query as the index entries. A store that uses the rule still checks every
     * key it yields against {@link #recordKey} and reads the records of the others apart: a wrong
     * rule costs a read, never a wrong claim.
     *
     * @return the rule, or empty (the default) if {@link #recordKey} follows none
     */
    default Optional<RecordKeyRule> recordKeyRule() {
      return Optional.empty();
    }

    /**
     * A record key made from an index key in bytes: {@code prefix}'s encoding followed by the index
     * key's encoding less its first {@code dropped} bytes. For example, the record {@code ["job",
     * id]} of the index entry {@code ["ready", rank, id]}: the prefix is {@code ["job"]}, and
     * {@code dropped} the length of {@code ["ready", rank]}'s encoding.
     *
     * @param prefix the parts the record key starts with
     * @param dropped how many leading bytes of the index key's encoding the prefix replaces
     */
    record RecordKeyRule(Key prefix, int dropped) {
      /**
       * Checks the parts.
       *
       * @param prefix the parts the record key starts with
       * @param dropped how many leading bytes of the index key's encoding the prefix replaces
       * @throws NullPointerException if {@code prefix} is null
       * @throws IllegalArgumentException if {@code dropped} is negative
       */
      public RecordKeyRule {
        Objects.requireNonNull(prefix, "prefix");
        if (dropped < 0) {
          throw new IllegalArgumentException("dropped must not be negative: " + dropped);
        }
      }
    }

    /**
     * The record keys of {@code index}, for stores that implement {@link KvStore#claim}.
     *
     * @param planner the planner
     * @param index index entries
     * @return {@code planner.recordKey} of each, in order
     * @throws NullPointerException if the planner returns null
     */
    static List<Key> recordKeys(ClaimPlanner planner, List<KvEntry> index) {
      List<Key> keys = new ArrayList<>(index.size());
      for (KvEntry e : index) {
        keys.add(Objects.requireNonNull(planner.recordKey(e.key()), "record key"));
      }
      return keys;
    }
  }

  /** A registration made by {@link KvStore#subscribe}. */
  @FunctionalInterface
  interface Subscription extends AutoCloseable {
    /**
     * Stops the notifications: after it returns, no call of the listener is running or starts. A
     * call running on another thread when it is called is waited for; a listener that closes its
     * own subscription from within its call does not wait for itself. If the closing thread is
     * interrupted while it waits, it returns at once with the interrupt status set, and that call
     * may still be running. Calling it again does nothing. ({@link SubscriberRegistry} implements
     * this for stores.)
     */
    @Override
    void close();
  }
}
