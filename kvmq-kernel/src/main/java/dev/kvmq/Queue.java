package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * A durable job queue on a {@link KvStore}: push jobs, list and count them, pause and resume,
 * delete, inspect and replay dead letters, and make {@link Worker}s.
 *
 * <p>Thread-safe. Many {@code Queue} objects (in one process or many) may share one store and name:
 * all their state is in the store.
 *
 * <pre>{@code
 * Queue<String> emails = Queue.builder(store, "emails", Codecs.utf8()).build();
 * emails.push("hello@example.com", JobOptions.defaults().retry(3, Backoff.fixed(Duration.ofSeconds(10))));
 * Worker<String> worker = emails.worker((job, ctx) -> send(job.state()), WorkerOptions.defaults(), executor);
 * worker.start();
 * }</pre>
 *
 * @param <S> the type of the jobs' state
 */
public final class Queue<S> {

  /**
   * The largest encoded state a job may have: the store's value limit less room for the job's own
   * fields and its last error.
   */
  public static final int MAX_STATE_BYTES = KvStore.MAX_VALUE_BYTES - 16 * 1024;

  /**
   * How many times a job's lease may expire (its worker died or hung) before the job becomes a dead
   * letter instead of being reclaimed again, unless the builder sets another limit: 5.
   */
  public static final int DEFAULT_MAX_LEASE_EXPIRIES = 5;

  /**
   * The most jobs {@link #cancelAll} and {@link #deleteAll} change in one commit: each batch is a
   * short commit of its own, so a bulk change never holds a claim up for long.
   */
  public static final int BULK_BATCH = 100;

  /** The largest result a handler may set ({@link JobContext#result(String)}), in UTF-8 bytes. */
  public static final int MAX_RESULT_BYTES = 4096;

  /** The longest node name ({@link Builder#node(String)}), in characters. */
  public static final int MAX_NODE_LENGTH = 100;

  private static final int MAX_NAME_LENGTH = 200;

  /** The group limit of a group with none: no limit. */
  public static final int UNLIMITED = Integer.MAX_VALUE;

  final KvStore store;
  final QueueKeys keys;
  final Codec<S> codec;
  final InstantSource clock;
  final RandomGenerator random;
  final Tracer tracer;
  private final Ulid ulid;
  private final QueueListing<S> listing;
  private final QueueCommands<S> commands;
  private final Schedules<S> schedules;
  private final Duration heldTimeout; // null: held jobs are kept for an operator
  final int defaultGroupLimit;
  private final java.util.Map<String, Integer> groupLimits;
  private final RateLimit rateLimit; // null: none
  private final RateLimit defaultGroupRateLimit; // null: none
  private final java.util.Map<String, RateLimit> groupRateLimits;
  final Duration defaultTimeout; // null: runs have no timeout unless their job's options give one
  final Set<Class<? extends Throwable>> nonRetryable;
  final int maxLeaseExpiries;
  private final Retention retention;
  private final String node;

  /**
   * The started workers of this queue object that take handoffs ({@link WorkerOptions#handoff()}),
   * in start order: a push asks them in turn for an idle slot.
   */
  final List<Handoff<S>> takers = new java.util.concurrent.CopyOnWriteArrayList<>();

  private Queue(Builder<S> b) {
    this.store = b.store;
    this.keys = new QueueKeys(b.name);
    this.codec = b.codec;
    this.clock = b.clock;
    this.random = b.random;
    this.tracer = new Tracer(b.name, b.tracing);
    this.ulid = new Ulid(b.random);
    this.listing = new QueueListing<>(this);
    this.commands = new QueueCommands<>(this, listing);
    this.schedules = new Schedules<>(this);
    this.heldTimeout = b.heldTimeout;
    this.defaultTimeout = b.defaultTimeout;
    this.nonRetryable = Set.copyOf(b.nonRetryable);
    this.maxLeaseExpiries = b.maxLeaseExpiries;
    this.retention = b.retention;
    this.node = b.node;
    this.defaultGroupLimit = b.defaultGroupLimit;
    this.groupLimits = java.util.Map.copyOf(b.groupLimits);
    this.rateLimit = b.rateLimit;
    this.defaultGroupRateLimit = b.defaultGroupRateLimit;
    this.groupRateLimits = java.util.Map.copyOf(b.groupRateLimits);
  }

  /**
   * Returns how many jobs of {@code group} may run at once across all nodes, as this queue object
   * was configured (docs/flow-control.md, "Groups"): its own limit, else the default limit.
   *
   * @param group a group name
   * @return the limit; {@link #UNLIMITED} when none was set
   * @throws NullPointerException if {@code group} is null
   */
  public int groupLimit(String group) {
    Objects.requireNonNull(group, "group");
    return groupLimits.getOrDefault(group, defaultGroupLimit);
  }

  /** The limits of this queue's groups, for a {@link GroupBook}. */
  GroupBook.Limits groupLimits() {
    return this::groupLimit;
  }

  /**
   * Returns the queue's rate limit: how many jobs may start per period across all nodes.
   *
   * @return the rate limit, or empty when starts are not limited
   */
  public Optional<RateLimit> rateLimit() {
    return Optional.ofNullable(rateLimit);
  }

  /**
   * Returns the rate limit of {@code group}, as this queue object was configured
   * (docs/flow-control.md, "Rate limits"): how many of the group's jobs may start per period across
   * all nodes; its own limit, else the default group rate limit.
   *
   * @param group a group name
   * @return the rate limit, or empty when the group's starts are not limited
   * @throws NullPointerException if {@code group} is null
   */
  public Optional<RateLimit> groupRateLimit(String group) {
    Objects.requireNonNull(group, "group");
    return Optional.ofNullable(groupRateLimits.getOrDefault(group, defaultGroupRateLimit));
  }

  /** The rate limits of this queue's groups, for a {@link Claimer}: null for a group with none. */
  GroupBook.Rates groupRates() {
    if (defaultGroupRateLimit == null && groupRateLimits.isEmpty()) {
      return GroupBook.Rates.NONE;
    }
    return g -> groupRateLimits.getOrDefault(g, defaultGroupRateLimit);
  }

  /**
   * Starts building a queue.
   *
   * @param <S> the state type
   * @param store where the queue lives
   * @param name the queue's name: 1 to 200 characters
   * @param codec turns states into bytes and back
   * @return a builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the name is empty or too long
   */
  public static <S> Builder<S> builder(KvStore store, String name, Codec<S> codec) {
    return new Builder<>(store, name, codec);
  }

  /**
   * The names of the queues that hold anything in a store (jobs, finished jobs kept, schedules, a
   * pause, a group's records), in name order: to find the queues that no application opens any
   * more, such as one whose handler was removed or whose name changed. One read per queue.
   *
   * @param store the store
   * @return the names, sorted
   * @throws NullPointerException if {@code store} is null
   * @throws KvStoreException if the store fails
   */
  public static List<String> names(KvStore store) {
    Objects.requireNonNull(store, "store");
    List<String> names = new java.util.ArrayList<>();
    dev.kvmq.store.KeyRange all = dev.kvmq.store.KeyRange.prefix(Key.of(QueueKeys.ROOT));
    dev.kvmq.store.KeyRange left = all;
    while (true) {
      List<dev.kvmq.store.KvEntry> first = store.list(left, 1, false);
      if (first.isEmpty() || !(first.get(0).key().get(1) instanceof String name)) {
        return names; // queues are named by strings; kvmq writes nothing else under its root
      }
      names.add(name);
      // the name followed by NUL sorts after every key of the queue and before the next name
      left = all.from(Key.of(QueueKeys.ROOT, name + "\0"));
    }
  }

  /**
   * Returns the queue's name.
   *
   * @return the name
   */
  public String name() {
    return keys.queue;
  }

  /**
   * Returns the queue's store.
   *
   * @return the store
   */
  public KvStore store() {
    return store;
  }

  /**
   * Returns the codec of the jobs' states.
   *
   * @return the codec
   */
  public Codec<S> codec() {
    return codec;
  }

  /**
   * Returns the clock the queue and its workers read.
   *
   * @return the clock
   */
  public InstantSource clock() {
    return clock;
  }

  // ---- push

  /**
   * Pushes a job with default options.
   *
   * @param state the job's state
   * @return the job as stored
   * @throws NullPointerException if {@code state} is null
   * @throws IllegalArgumentException if the encoded state is over {@link #MAX_STATE_BYTES}
   * @throws IllegalStateException if the store is closed
   * @throws PushFailedException if the store failed the commit: the job may or may not be stored,
   *     and the exception names it ({@link PushFailedException#jobIds()})
   * @throws KvStoreException if the store failed before the commit: nothing was stored
   */
  public Job<S> push(S state) {
    return push(state, JobOptions.defaults());
  }

  /**
   * Pushes a job.
   *
   * <p>With a {@link JobOptions#unique unique key} whose key is taken, nothing is stored and the
   * job holding the key is returned (changed by a {@link UniqueKey#debounce() debounce}); {@link
   * #offer} says which happened.
   *
   * @param state the job's state
   * @param options priority, delay, repeats, retries, unique key
   * @return the job as stored, or the job that holds its unique key
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the encoded state is over {@link #MAX_STATE_BYTES}
   * @throws IllegalStateException if the store is closed; if the unique key is a {@link
   *     UniqueKey.Scope#PERIOD throttle} key taken within its period by a job that is gone (deleted
   *     or pruned), so that there is no job to return (use {@link #offer}, which says so)
   * @throws PushFailedException if the store failed the commit: the job may or may not be stored,
   *     and the exception names it ({@link PushFailedException#jobIds()})
   * @throws KvStoreException if the store failed before the commit: nothing was stored
   */
  public Job<S> push(S state, JobOptions options) {
    if (options != null && options.unique() != null) {
      return commands.pushUnique(state, options);
    }
    return pushAll(List.of(Objects.requireNonNull(state, "state")), options).get(0);
  }

  /**
   * Pushes a job and says what the push did (docs/flow-control.md, "Unique jobs"). Without a {@link
   * JobOptions#unique unique key} it is {@link #push(Object, JobOptions)}: always {@link
   * PushResult.Outcome#CREATED}. With one, in one atomic commit: if the key is free, the job is
   * stored and takes the key ({@code CREATED}); if another job holds it, nothing is stored and the
   * result names that job ({@code DUPLICATE}); in {@link UniqueKey#debounce() debounce} mode, a
   * holder that is still waiting gets this push's state and due time instead ({@code DEBOUNCED}).
   * Two pushes of one key at the same instant, on any nodes, make one job.
   *
   * @param state the job's state
   * @param options priority, delay, repeats, retries, unique key
   * @return what the push did, and the job
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the encoded state is over {@link #MAX_STATE_BYTES}
   * @throws IllegalStateException if the store is closed, or the key's holder kept changing through
   *     20 attempts
   * @throws PushFailedException if the store failed the commit: the job may or may not be stored,
   *     and the exception names it ({@link PushFailedException#jobIds()})
   * @throws KvStoreException if the store failed before the commit: nothing was stored
   */
  public PushResult<S> offer(S state, JobOptions options) {
    return commands.offer(state, options);
  }

  /**
   * Pushes many jobs with the same options in one atomic commit: all are stored, or none. They
   * queue in list order.
   *
   * @param states the jobs' states
   * @param options priority, delay, repeats, retries for each
   * @return the jobs as stored, in the same order
   * @throws NullPointerException if an argument or a state is null
   * @throws IllegalArgumentException if an encoded state is over {@link #MAX_STATE_BYTES}, or
   *     {@code options} has a unique key and there is more than one state (a key names one job:
   *     {@link #offer} them one by one)
   * @throws IllegalStateException if the store is closed
   * @throws PushFailedException if the store failed the commit: the jobs may or may not be stored,
   *     and the exception names them ({@link PushFailedException#jobIds()})
   * @throws KvStoreException if the store failed before the commit: nothing was stored
   */
  public List<Job<S>> pushAll(Collection<? extends S> states, JobOptions options) {
    return commands.pushAll(states, options);
  }

  // ---- pause

  /**
   * Pauses the queue: no worker claims a job until {@link #resume()}. Jobs being processed go on.
   * Stored, so every worker on the store sees it.
   *
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public void pause() {
    store.commit(AtomicOperation.builder().set(keys.paused, QueueKeys.EMPTY).build());
  }

  /**
   * Resumes a paused queue; idle workers wake up.
   *
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public void resume() {
    store.commit(AtomicOperation.builder().delete(keys.paused).build());
  }

  /**
   * Tells whether the queue is paused.
   *
   * @return true between {@link #pause()} and {@link #resume()}
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public boolean isPaused() {
    return store.get(keys.paused).isPresent();
  }

  // ---- read

  /**
   * Reads one job (dead letters included).
   *
   * @param id the job's id
   * @return the job, or empty if there is none with that id
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public Optional<Job<S>> job(String id) {
    Objects.requireNonNull(id, "id");
    if (!Ulid.isValid(id)) {
      return Optional.empty();
    }
    long now = clock.millis();
    return store.get(keys.job(id)).map(e -> toJob(JobRecord.decode(e.value()), now));
  }

  /**
   * Lists the queue's jobs (not dead letters, not cancelled or completed jobs) in queue order:
   * priority, then creation. The seed's {@code getAllJobs}. Held jobs are listed too, with place 0,
   * like the ones being processed. Reads every job: for a large queue, prefer {@link #counts()}.
   *
   * <p>A job whose state this queue's codec can't decode is listed with a null state, and its
   * stored bytes in {@link Job#undecodedState()}.
   *
   * @return the jobs with their places and statuses
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public List<JobEntry<S>> jobs() {
    return jobs(null, 0, Integer.MAX_VALUE);
  }

  /**
   * One page of {@link #jobs()}: the jobs of one status (all of them for null) in queue order,
   * after skipping {@code offset} of them, at most {@code limit}, each with its place in the whole
   * queue. Reads every job record, as {@link #jobs()} does, but decodes the states of the page's
   * jobs only: a page of a queue of 100,000 jobs costs a scan and sort of small binary records, not
   * 100,000 payload decodes.
   *
   * @param status {@code WAITING}, {@code DELAYED}, {@code PROCESSING}, {@code HELD}, or null for
   *     all; {@code COMPLETED} lists nothing here (completed jobs are not in the queue: see {@link
   *     #list})
   * @param offset how many matching jobs to skip, 0 or more
   * @param limit the most jobs to return, 0 or more
   * @return the page
   * @throws IllegalArgumentException if {@code status} is {@code DEAD} (see {@link #deadLetters()})
   *     or {@code CANCELLED} (read a cancelled job with {@link #job}), or {@code offset} or {@code
   *     limit} is negative
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public List<JobEntry<S>> jobs(JobStatus status, int offset, int limit) {
    return listing.jobs(status, offset, limit);
  }

  /**
   * Counts the jobs per status from the queue's indexes, without reading the jobs.
   *
   * @return the counts now
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public QueueCounts counts() {
    long now = clock.millis();
    long ready = store.count(keys.ready()) + store.count(keys.allParked());
    long delayed = store.count(keys.delayed());
    long delayedDue = store.count(keys.delayedDue(now));
    long leased = store.count(keys.leased());
    long leasedExpired = store.count(keys.leasedExpired(now));
    long dead = store.count(keys.dead());
    long held = store.count(keys.held());
    return new QueueCounts(
        ready + delayedDue + leasedExpired,
        delayed - delayedDue,
        leased - leasedExpired,
        dead,
        held);
  }

  /**
   * Lists the dead letters, oldest failure first, each with its last error.
   *
   * @return the dead jobs
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public List<Job<S>> deadLetters() {
    return listing.deadLetters(0, Integer.MAX_VALUE);
  }

  /**
   * One page of {@link #deadLetters()}: oldest failure first, after skipping {@code offset} of
   * them, at most {@code limit}. Reads {@code offset + limit} entries of the dead-letter index
   * (small keys) and the records of the page only.
   *
   * @param offset how many dead letters to skip, 0 or more
   * @param limit the most to return, 0 or more
   * @return the page
   * @throws IllegalArgumentException if {@code offset} or {@code limit} is negative
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public List<Job<S>> deadLetters(int offset, int limit) {
    return listing.deadLetters(offset, limit);
  }

  // ---- listing by status, with a cursor (docs/semantics.md, "History")

  /**
   * One page of the jobs {@code filter} takes, in the order of their status's index: waiting jobs
   * in queue order (priority, then creation), delayed ones by due time, processing ones by lease
   * end, dead letters by failure, completed jobs by completion, held ones by creation; oldest first
   * where it is a time. The page starts where {@code cursor} says (null: at the beginning) and
   * holds {@code limit} jobs at most; its {@link JobPage#next()} is the cursor of the next page.
   * Costs O(limit + log n) reads whatever the queue holds: it reads the status's index from the
   * cursor on, and the page's records.
   *
   * <p>A page is read at one moment; jobs that move between pages (a claim, a completion) may be
   * listed twice or not at all across pages, never twice in one page. {@code WAITING} lists the
   * ready index, then the jobs of groups that wait for a free slot of their group (parked), group
   * by group; a delayed job whose time has come, or a lease that expired, is listed under its index
   * ({@code DELAYED}, {@code PROCESSING}) until a worker moves it, with its status at listing time
   * ({@code WAITING}).
   *
   * <p>A filter narrowed by {@link JobFilter#group} or {@link JobFilter#uniqueKeyPrefix} is checked
   * on each job of the status's index: a page reads index entries and their jobs until it has
   * {@code limit} matches, the index ends, or {@link JobFilter#MAX_SCAN} entries were read; then it
   * may hold fewer jobs than {@code limit} (even none) and still have a {@link JobPage#next()}
   * cursor. A page ends only when {@code next()} is empty.
   *
   * @param filter which jobs
   * @param cursor where the page starts: a {@link JobPage#next()} of the same filter, or null
   * @param limit the most jobs to return, 1 to 1,000
   * @return the page
   * @throws NullPointerException if {@code filter} is null
   * @throws IllegalArgumentException if {@code filter} takes more than one status, {@code limit} is
   *     out of range, or {@code cursor} is not a cursor of this queue and filter
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public JobPage<S> list(JobFilter filter, String cursor, int limit) {
    return listing.page(filter, cursor, limit);
  }

  /**
   * Counts the jobs {@code filter} takes, from the status's index, without reading the jobs. As in
   * {@link #list}, a job is counted under its index: {@code WAITING} counts the ready and the
   * parked jobs, as {@link #counts()} does, which also counts due delayed jobs and expired leases
   * as waiting. A filter narrowed by {@link JobFilter#group} or {@link JobFilter#uniqueKeyPrefix}
   * reads every job of the status to count the matches, in batches: it costs as much as listing
   * them all.
   *
   * @param filter which jobs
   * @return how many
   * @throws NullPointerException if {@code filter} is null
   * @throws IllegalArgumentException if {@code filter} takes more than one status
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public long count(JobFilter filter) {
    return listing.count(filter);
  }

  /**
   * Returns how long the queue keeps the jobs that ended ({@link Builder#retention(Retention)}).
   *
   * @return the retention
   */
  public Retention retention() {
    return retention;
  }

  /**
   * Returns the name this queue's workers record in each attempt they run ({@link
   * Builder#node(String)}).
   *
   * @return the node name
   */
  public String node() {
    return node;
  }

  // ---- delete and replay

  /**
   * Deletes a job that is not being processed (waiting, delayed, or dead).
   *
   * @param id the job's id
   * @return true if the job was deleted, false if there was none
   * @throws NullPointerException if {@code id} is null
   * @throws JobProcessingException if the job is being processed under a live lease
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public boolean delete(String id) {
    return commands.delete(id);
  }

  /**
   * Deletes every job that is not being processed (waiting and delayed; not dead letters) in one
   * atomic operation. The seed's {@code deleteWaitingJobs}, made atomic.
   *
   * @return how many jobs were deleted
   * @throws IllegalStateException if the store is closed, or if workers kept changing the queue
   *     through 20 attempts (pause it first)
   * @throws KvStoreException if the store fails
   */
  public int deleteWaiting() {
    return commands.deleteWaiting();
  }

  /**
   * Puts a dead letter back in the queue, due now, with its retries restored; its last error stays
   * visible until it next fails or completes.
   *
   * @param id the dead job's id
   * @return true if it was replayed, false if there is no dead job with that id
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public boolean replayDead(String id) {
    return commands.replayDead(id);
  }

  /**
   * Deletes a dead letter.
   *
   * @param id the dead job's id
   * @return true if it was deleted, false if there is no dead job with that id
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails
   */
  public boolean deleteDead(String id) {
    return commands.deleteDead(id);
  }

  // ---- control (docs/semantics.md, "Cancel")

  /**
   * Cancels a job that has not ended: waiting, delayed, held, or being processed. It becomes {@link
   * JobStatus#CANCELLED} in one commit, and is kept (with the time of the cancel) until deleted or
   * pruned; no worker runs it again. For a job being processed the same commit revokes its lease:
   * the worker's later completion, failure or update is refused (fencing), and its handler is told
   * ({@link JobContext.CancelReason#CANCELLED}; its thread interrupted too when the job's {@link
   * JobOptions#interruptOnCancel()} says so) as soon as the worker hears of it: at once on a store
   * that notifies changes, else at its next lease renewal.
   *
   * @param id the job's id
   * @return true if the job was cancelled; false if there is none with that id, or it has ended
   *     already (a dead letter, or cancelled before)
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalStateException if the store is closed, or the job kept changing through 20
   *     attempts
   * @throws KvStoreException if the store fails; the job may or may not be cancelled
   */
  public boolean cancel(String id) {
    return commands.cancel(id);
  }

  /**
   * Cancels every job that matches {@code filter}, as {@link #cancel} does each, in batches of at
   * most {@link #BULK_BATCH} jobs per commit: a job claimed, completed or changed between a batch's
   * read and its commit is left as it is (its own commit came first), the others of the batch are
   * cancelled. Statuses that can't be cancelled ({@code DEAD}, {@code CANCELLED}) match nothing
   * here. Not one atomic operation: a job pushed while it runs may or may not be cancelled. A
   * filter narrowed by group or unique-key prefix walks the statuses' indexes whole and cancels the
   * jobs whose records match.
   *
   * @param filter which jobs
   * @return how many jobs were cancelled
   * @throws NullPointerException if {@code filter} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails; the batches before the failure are committed
   */
  public long cancelAll(JobFilter filter) {
    return commands.cancelAll(filter);
  }

  /**
   * Deletes every job that matches {@code filter}, in batches of at most {@link #BULK_BATCH} jobs
   * per commit, as {@link #cancelAll} does: jobs being processed under a live lease are never
   * deleted ({@code PROCESSING} matches nothing here: cancel them instead), nor a job changed
   * between a batch's read and its commit.
   *
   * @param filter which jobs: waiting, delayed, held, dead or cancelled ones
   * @return how many jobs were deleted
   * @throws NullPointerException if {@code filter} is null
   * @throws IllegalStateException if the store is closed
   * @throws KvStoreException if the store fails; the batches before the failure are committed
   */
  public long deleteAll(JobFilter filter) {
    return commands.deleteAll(filter);
  }

  /**
   * Returns the queue's default timeout: how long a run of a job whose options give none may take.
   *
   * @return the default timeout, or empty for none
   */
  public Optional<Duration> defaultTimeout() {
    return Optional.ofNullable(defaultTimeout);
  }

  /**
   * Returns the exception types that fail a job for good: a handler that throws one of them (or a
   * subclass) makes its job a dead letter at once, whatever retries it has left.
   *
   * @return the types, unmodifiable
   */
  public Set<Class<? extends Throwable>> nonRetryable() {
    return nonRetryable;
  }

  /**
   * Returns how many times a job's lease may expire before the job becomes a dead letter (error
   * type {@link JobError#LEASE_EXPIRED}) instead of being reclaimed again.
   *
   * @return the limit, 1 or more
   */
  public int maxLeaseExpiries() {
    return maxLeaseExpiries;
  }

  // ---- held jobs (docs/semantics.md, "Held jobs")

  /**
   * Writes jobs held, in one atomic commit (all or none): stored durably now, with their ids, but
   * run by no worker until {@link #releaseHeld released}; {@link #dropHeld} removes them. For a
   * push in an application's transaction that this store can't join: hold in the transaction,
   * release after its commit, drop after its rollback. A held job left by a crash in between is
   * listed with status {@link JobStatus#HELD} and resolved by the queue's {@link
   * Builder#heldTimeout held-job policy}. A delay counts from now.
   *
   * @param states the jobs' states
   * @param options priority, delay, repeats, retries for each
   * @return the held jobs, in the same order
   * @throws NullPointerException if an argument or a state is null
   * @throws IllegalArgumentException if an encoded state is over {@link #MAX_STATE_BYTES}
   * @throws IllegalStateException if the store is closed
   * @throws PushFailedException if the store failed the commit: the jobs may or may not be stored,
   *     and the exception names them ({@link PushFailedException#jobIds()})
   * @throws KvStoreException if the store failed before the commit: nothing was stored
   */
  public List<Job<S>> holdAll(Collection<? extends S> states, JobOptions options) {
    return commands.holdAll(states, options);
  }

  /**
   * Releases held jobs in one atomic commit: each joins the queue (waiting, or delayed while its
   * delay runs) in its place by priority and creation. Ids of jobs that are not held (gone,
   * released already, or never held) are left out.
   *
   * @param ids the held jobs' ids
   * @return how many were released
   * @throws NullPointerException if {@code ids} or an id is null
   * @throws IllegalStateException if the store is closed, or the jobs kept changing through 20
   *     attempts
   * @throws KvStoreException if the store fails; the jobs may or may not be released
   */
  public int releaseHeld(Collection<String> ids) {
    return commands.releaseHeld(ids);
  }

  /**
   * Removes held jobs in one atomic commit. Ids of jobs that are not held are left out: a job
   * released already is not removed.
   *
   * @param ids the held jobs' ids
   * @return how many were removed
   * @throws NullPointerException if {@code ids} or an id is null
   * @throws IllegalStateException if the store is closed, or the jobs kept changing through 20
   *     attempts
   * @throws KvStoreException if the store fails; the jobs may or may not be removed
   */
  public int dropHeld(Collection<String> ids) {
    return commands.dropHeld(ids);
  }

  /**
   * Returns the queue's held-job policy: how long a job may stay held before a worker releases it
   * with a warning; empty to keep held jobs until an operator releases or deletes them.
   *
   * @return the held timeout, or empty
   */
  public Optional<Duration> heldTimeout() {
    return Optional.ofNullable(heldTimeout);
  }

  // ---- listen and work

  /**
   * Calls {@code listener} with the queue's listing ({@link #jobs()}) now and after every change:
   * new jobs, claims, completions, failures, deletes, and statuses that change with time (a delay
   * that passes, a lease that expires). The seed's {@code listenUpdates}, without polling where the
   * store notifies: it lists again only after a commit to this queue or when a status is due to
   * change. Where the store can't notify, it polls every {@code pollInterval}. A listing equal to
   * the previous one is not reported.
   *
   * @param executor runs the listings and the listener; the caller keeps ownership
   * @param pollInterval how often to look for changes if the store can't notify
   * @param listener gets each new listing
   * @return a handle that stops listening when closed
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code pollInterval} is shorter than 1 ms or longer than
   *     {@link JobOptions#MAX_DELAY}
   */
  public Subscription listen(
      ScheduledExecutorService executor,
      Duration pollInterval,
      Consumer<? super List<JobEntry<S>>> listener) {
    return new QueueListener<>(this, executor, pollInterval, listener).start();
  }

  /**
   * Calls {@code listener} after every commit that changes this queue: a cheap hint, for feeds that
   * then read what they need (such as {@link #counts()}). It may be called when nothing changed,
   * and once for several commits. It runs on a store thread: it must be quick and must not call the
   * store.
   *
   * @param listener what to call
   * @return a handle that stops the calls when closed
   * @throws NullPointerException if {@code listener} is null
   * @throws UnsupportedOperationException if the store can't notify ({@link
   *     KvStore#notifiesChanges()})
   */
  public Subscription onChange(Runnable listener) {
    KvStore.Subscription subscription =
        store.subscribe(keys.root, Objects.requireNonNull(listener, "listener"));
    return subscription::close;
  }

  /**
   * Returns the queue's recurring schedules: define, list, pause, resume, trigger and delete them.
   * A worker of this queue fires them.
   *
   * @return the schedules
   */
  public Schedules<S> schedules() {
    return schedules;
  }

  /**
   * Makes a worker for this queue. Call {@link Worker#start()} to begin.
   *
   * @param handler processes each job
   * @param options concurrency, lease, intervals
   * @param executor runs the worker's tasks and the handlers; in a Jakarta EE server, the
   *     container's {@code ManagedScheduledExecutorService}; the caller keeps ownership
   * @return the worker, not yet started
   * @throws NullPointerException if an argument is null
   */
  public Worker<S> worker(
      JobHandler<S> handler, WorkerOptions options, ScheduledExecutorService executor) {
    return new Worker<>(this, handler, options, executor);
  }

  // ---- on another view of the store

  /**
   * Returns this queue on another store: the same name, codec, clock and random source, and every
   * other setting of this queue object (group and rate limits, timeouts, held-job policy,
   * retention, tracing, node), and so the same jobs, admitted by the same rules, if {@code store}
   * is a view of this queue's store. For a view whose commits join a transaction the caller holds,
   * such as {@code PostgresKvStore.inTransaction(connection)}: a push on the returned queue commits
   * in that transaction. Cheap: make one per transaction.
   *
   * @param store the store to read and commit through
   * @return a queue on {@code store}
   * @throws NullPointerException if {@code store} is null
   */
  public Queue<S> withStore(KvStore store) {
    Builder<S> b =
        builder(store, name(), codec)
            .clock(clock)
            .random(random)
            .tracing(tracer.hook())
            .heldTimeout(heldTimeout)
            .defaultTimeout(defaultTimeout)
            .nonRetryable(nonRetryable)
            .maxLeaseExpiries(maxLeaseExpiries)
            .retention(retention)
            .node(node);
    // the limits as this object holds them (a push admits or parks by them), not re-validated
    b.defaultGroupLimit = defaultGroupLimit;
    b.groupLimits.putAll(groupLimits);
    b.rateLimit = rateLimit;
    b.defaultGroupRateLimit = defaultGroupRateLimit;
    b.groupRateLimits.putAll(groupRateLimits);
    return b.build();
  }

  // ---- internals

  Job<S> toJob(JobRecord r, long now) {
    S state;
    try {
      state = codec.decode(r.payload.clone());
    } catch (RuntimeException e) {
      return Job.undecodable(name(), r, now);
    }
    return Job.of(name(), r, state, now);
  }

  /** Encodes a state, refusing one larger than {@link #MAX_STATE_BYTES}. */
  byte[] encode(S state) {
    byte[] bytes = codec.encode(Objects.requireNonNull(state, "state"));
    if (bytes.length > MAX_STATE_BYTES) {
      throw new IllegalArgumentException(
          "the state of a job in queue "
              + name()
              + " is "
              + bytes.length
              + " bytes encoded, over the limit of "
              + MAX_STATE_BYTES);
    }
    return bytes;
  }

  String nextId(long now) {
    return ulid.next(now);
  }

  @Override
  public String toString() {
    return "Queue[" + name() + " on " + store + "]";
  }

  /**
   * Builds a {@link Queue}.
   *
   * @param <S> the state type
   */
  public static final class Builder<S> {
    private final KvStore store;
    private final String name;
    private final Codec<S> codec;
    private Duration heldTimeout;
    private Duration defaultTimeout;
    private Set<Class<? extends Throwable>> nonRetryable = Set.of();
    private int maxLeaseExpiries = DEFAULT_MAX_LEASE_EXPIRIES;
    private InstantSource clock;
    private RandomGenerator random;
    private JobTracing tracing = JobTracing.none();
    private int defaultGroupLimit = UNLIMITED;
    private final java.util.Map<String, Integer> groupLimits = new java.util.HashMap<>();
    private RateLimit rateLimit;
    private RateLimit defaultGroupRateLimit;
    private final java.util.Map<String, RateLimit> groupRateLimits = new java.util.HashMap<>();
    private Retention retention = Retention.defaults();
    private String node; // null: DefaultNode.NAME

    private Builder(KvStore store, String name, Codec<S> codec) {
      this.store = Objects.requireNonNull(store, "store");
      this.name = Objects.requireNonNull(name, "name");
      this.codec = Objects.requireNonNull(codec, "codec");
      if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
        throw new IllegalArgumentException(
            "a queue name has 1 to " + MAX_NAME_LENGTH + " characters: \"" + name + "\"");
      }
      Key.of("kvmq", name); // refuses names with no UTF-8 form
    }

    /**
     * Sets the clock (default: the system clock). Tests pass a {@link dev.kvmq.testkit.FakeClock}.
     *
     * @param clock the time source for pushes, leases and listings
     * @return this builder
     * @throws NullPointerException if {@code clock} is null
     */
    public Builder<S> clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Sets the held-job policy (docs/semantics.md, "Held jobs"): a job held this long (its
     * transaction neither committed nor rolled back: its process died in between) is released by a
     * worker of this queue, with one warning naming it. Null (the default) keeps held jobs until an
     * operator releases or deletes them: no job of a transaction that rolled back runs, and no job
     * of one that committed is lost.
     *
     * @param timeout how long a job may stay held, 1 ms to {@link JobOptions#MAX_DELAY}; null to
     *     keep held jobs
     * @return this builder
     * @throws IllegalArgumentException if {@code timeout} is shorter than 1 ms or longer than
     *     {@link JobOptions#MAX_DELAY}
     */
    public Builder<S> heldTimeout(Duration timeout) {
      if (timeout != null
          && (timeout.compareTo(JobOptions.MAX_DELAY) > 0 || timeout.toMillis() < 1)) {
        throw new IllegalArgumentException(
            "the held timeout must be at least 1 ms and at most "
                + JobOptions.MAX_DELAY
                + ": "
                + timeout);
      }
      this.heldTimeout = timeout;
      return this;
    }

    /**
     * Sets the default timeout of a run (default: none): a handler still running this long after it
     * started is told to stop ({@link JobContext.CancelReason#TIMED_OUT}) and its attempt counts as
     * failed with a {@link JobTimeoutException}; retries and backoff apply. A job's own {@link
     * JobOptions#timeout} comes first.
     *
     * @param timeout the longest run, at least 1 ms; null for none
     * @return this builder
     * @throws IllegalArgumentException if {@code timeout} is shorter than 1 ms or over {@link
     *     JobOptions#MAX_TIMEOUT}
     */
    public Builder<S> defaultTimeout(Duration timeout) {
      if (timeout != null
          && (timeout.compareTo(JobOptions.MAX_TIMEOUT) > 0 || timeout.toMillis() < 1)) {
        throw new IllegalArgumentException(
            "the default timeout must be at least 1 ms and at most "
                + JobOptions.MAX_TIMEOUT
                + ": "
                + timeout);
      }
      this.defaultTimeout = timeout;
      return this;
    }

    /**
     * Sets the exception types that fail a job for good (default: none): a handler that throws one
     * of them, or a subclass, makes its job a dead letter at once, whatever retries it has left.
     * Replaces the types set before.
     *
     * @param types the exception types
     * @return this builder
     * @throws NullPointerException if {@code types} or a type is null
     */
    public Builder<S> nonRetryable(Collection<Class<? extends Throwable>> types) {
      this.nonRetryable = Set.copyOf(Objects.requireNonNull(types, "types"));
      return this;
    }

    /**
     * Sets how many times a job's lease may expire (its worker died or hung) before the job becomes
     * a dead letter, with an error of type {@link JobError#LEASE_EXPIRED} saying so, instead of
     * being reclaimed again (default {@link #DEFAULT_MAX_LEASE_EXPIRIES}).
     *
     * @param max the limit, 1 or more
     * @return this builder
     * @throws IllegalArgumentException if {@code max} is less than 1
     */
    public Builder<S> maxLeaseExpiries(int max) {
      if (max < 1) {
        throw new IllegalArgumentException("maxLeaseExpiries must be at least 1: " + max);
      }
      this.maxLeaseExpiries = max;
      return this;
    }

    /**
     * Sets the random source for job ids and backoff jitter (default: a new {@link Random}). Must
     * be thread-safe. Tests pass a seeded one.
     *
     * @param random the random source
     * @return this builder
     * @throws NullPointerException if {@code random} is null
     */
    public Builder<S> random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Sets the tracing hook (default: {@link JobTracing#none()}): what a push stores of its
     * caller's trace context, and what the queue's workers tell about each handler run. On the
     * queue, not on a worker, because a push needs it as much as a run does.
     *
     * @param tracing the hook
     * @return this builder
     * @throws NullPointerException if {@code tracing} is null
     */
    public Builder<S> tracing(JobTracing tracing) {
      this.tracing = Objects.requireNonNull(tracing, "tracing");
      return this;
    }

    /**
     * Sets the default concurrency limit of every group (default {@link #UNLIMITED}): at most this
     * many jobs of one group are admitted to run (ready or leased) at once, across every node. The
     * limit is this queue object's: every node should configure the same (docs/flow-control.md,
     * "Groups", says what happens when they differ).
     *
     * @param limit 0 (no job of a group starts) or more; {@link #UNLIMITED} for none
     * @return this builder
     * @throws IllegalArgumentException if {@code limit} is negative
     */
    public Builder<S> groupLimit(int limit) {
      this.defaultGroupLimit = checkLimit(limit, "the default group limit");
      return this;
    }

    /**
     * Sets how long the queue keeps the jobs that ended (default {@link Retention#defaults()}):
     * completed, dead and cancelled jobs, pruned by the queue's workers in bounded batches. Every
     * queue object of this name should have the same retention; the workers of each prune by their
     * own.
     *
     * @param retention the retention; {@link Retention#none()} keeps no history
     * @return this builder
     * @throws NullPointerException if {@code retention} is null
     */
    public Builder<S> retention(Retention retention) {
      this.retention = Objects.requireNonNull(retention, "retention");
      return this;
    }

    /**
     * Sets the concurrency limit of one group, in place of the default.
     *
     * @param group the group, 1 to {@link JobOptions#MAX_GROUP_LENGTH} characters
     * @param limit 0 (no job of the group starts) or more; {@link #UNLIMITED} for none
     * @return this builder
     * @throws NullPointerException if {@code group} is null
     * @throws IllegalArgumentException if {@code group} is empty or too long, or {@code limit} is
     *     negative
     */
    public Builder<S> groupLimit(String group, int limit) {
      Objects.requireNonNull(group, "group");
      JobOptions.checkGroup(group);
      groupLimits.put(group, checkLimit(limit, "the limit of group \"" + group + "\""));
      return this;
    }

    private static int checkLimit(int limit, String what) {
      if (limit < 0) {
        throw new IllegalArgumentException(what + " must not be negative: " + limit);
      }
      return limit;
    }

    /**
     * Sets the queue's rate limit (default none): at most {@code limit.starts()} jobs start in any
     * {@code limit.period()}, across every node (docs/flow-control.md, "Rate limits").
     *
     * @param limit the rate limit, or null for none
     * @return this builder
     */
    public Builder<S> rateLimit(RateLimit limit) {
      this.rateLimit = limit;
      return this;
    }

    /**
     * Sets the default rate limit of every group (default none): at most {@code limit.starts()}
     * jobs of one group start in any {@code limit.period()}, across every node, beside the queue's
     * own rate limit (docs/flow-control.md, "Rate limits"). Jobs of no group are not limited by it.
     * The limit is this queue object's: every node should configure the same.
     *
     * @param limit the rate limit of each group, or null for none
     * @return this builder
     */
    public Builder<S> groupRateLimit(RateLimit limit) {
      this.defaultGroupRateLimit = limit;
      return this;
    }

    /**
     * Sets the rate limit of one group, in place of the default group rate limit.
     *
     * @param group the group, 1 to {@link JobOptions#MAX_GROUP_LENGTH} characters
     * @param limit the group's rate limit
     * @return this builder
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code group} is empty or too long
     */
    public Builder<S> groupRateLimit(String group, RateLimit limit) {
      Objects.requireNonNull(group, "group");
      Objects.requireNonNull(limit, "limit");
      JobOptions.checkGroup(group);
      groupRateLimits.put(group, limit);
      return this;
    }

    /**
     * Sets the name of this node, recorded in each attempt this queue's workers run (default: the
     * process id and host name, {@code pid@host}).
     *
     * @param node 1 to {@link #MAX_NODE_LENGTH} characters
     * @return this builder
     * @throws NullPointerException if {@code node} is null
     * @throws IllegalArgumentException if {@code node} is empty or too long
     */
    public Builder<S> node(String node) {
      Objects.requireNonNull(node, "node");
      if (node.isEmpty() || node.length() > MAX_NODE_LENGTH) {
        throw new IllegalArgumentException(
            "a node name has 1 to " + MAX_NODE_LENGTH + " characters: \"" + node + "\"");
      }
      this.node = node;
      return this;
    }

    /** The default node name, looked up once per class loader (a host lookup may be slow). */
    private static final class DefaultNode {
      static final String NAME = defaultNode();
    }

    private static String defaultNode() {
      String host;
      try {
        host = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.io.IOException | RuntimeException e) {
        host = "localhost";
      }
      String n = ProcessHandle.current().pid() + "@" + host;
      return n.length() > MAX_NODE_LENGTH ? n.substring(0, MAX_NODE_LENGTH) : n;
    }

    /**
     * Makes the queue.
     *
     * @return the queue
     */
    public Queue<S> build() {
      if (clock == null) {
        clock = systemClock();
      }
      if (random == null) {
        random = new Random();
      }
      if (node == null) {
        node = DefaultNode.NAME;
      }
      return new Queue<>(this);
    }

    @SuppressForbidden(reason = "the default when no clock is injected")
    private static InstantSource systemClock() {
      return InstantSource.system();
    }
  }
}
