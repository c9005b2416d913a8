package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStoreException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What a {@link Queue} changes on request, each as read, plan ({@link Transitions}), commit:
 * pushes, deletes, replays. A plan whose commit fails because the job changed under it is made
 * again from a fresh read, up to {@link #ATOMIC_RETRIES} times.
 *
 * <p>Locking: none (no state of its own); the versionstamp checks of the store order concurrent
 * callers.
 *
 * @param <S> the state type
 */
final class QueueCommands<S> {

  static final int ATOMIC_RETRIES = 20;

  private final Queue<S> queue;
  private final QueueKeys keys;
  private final QueueListing<S> listing;

  QueueCommands(Queue<S> queue, QueueListing<S> listing) {
    this.queue = queue;
    this.keys = queue.keys;
    this.listing = listing;
  }

  /**
   * Commits a push or a hold that writes {@code jobs}: a store that fails the commit throws {@link
   * PushFailedException}, which names them, so that the caller can look them up.
   */
  private CommitResult commitPush(AtomicOperation op, List<JobRecord> jobs) {
    try {
      return queue.store.commit(op);
    } catch (KvStoreException e) {
      throw new PushFailedException(queue.name(), jobs.stream().map(r -> r.id).toList(), e);
    }
  }

  /** See {@link Queue#pushAll}. */
  List<Job<S>> pushAll(Collection<? extends S> states, JobOptions options) {
    Objects.requireNonNull(states, "states");
    Objects.requireNonNull(options, "options");
    if (options.unique() != null) {
      if (states.size() > 1) {
        throw new IllegalArgumentException(
            "a unique key names one job, and these options give the key \""
                + options.unique().key()
                + "\" to "
                + states.size()
                + " jobs: push them one by one (Queue.offer)");
      }
      if (states.size() == 1) {
        return List.of(pushUnique(states.iterator().next(), options));
      }
    }
    if (states.size() == 1 && !queue.takers.isEmpty()) {
      Job<S> handedOff = handOff(states.iterator().next(), options);
      if (handedOff != null) {
        return List.of(handedOff);
      }
    }
    // through a store whose locks last until its caller's transaction ends, a due job of a group
    // is left for a promotion to admit: the push then writes no group record for others to wait on
    boolean admitLater = queue.store.joinsCallersTransaction();
    return newJobs(
        states,
        options,
        options.group() != null && !admitLater,
        (op, k, id, payload, o, now, trace, book) ->
            Transitions.pushInto(op, k, id, payload, o, now, trace, book, admitLater));
  }

  /**
   * Pushes one job leased to an idle worker of this queue object that takes handoffs, in one commit
   * ({@link Transitions#pushClaimed}, docs/semantics.md, "Handoff"), and starts it there; null when
   * the job or no worker can take one now, or the commit refused (the queue or its starts were
   * paused since the worker last looked): the caller pushes it as usual. A commit that fails
   * (throws) gives the slot back and throws: the job may or may not be stored, leased to this
   * worker and not run, so that its lease expires and it is reclaimed, as after a claim whose
   * commit failed.
   */
  private Job<S> handOff(S state, JobOptions options) {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(options, "options");
    if (options.group() != null || options.unique() != null) {
      return null;
    }
    long now = queue.clock.millis();
    if (options.dueAt(Instant.ofEpochMilli(now)).toEpochMilli() > now) {
      return null;
    }
    for (Handoff<S> taker : queue.takers) {
      if (!taker.reserve()) {
        continue;
      }
      Transitions.Applied plan;
      CommitResult result;
      try {
        plan =
            Transitions.pushClaimed(
                keys,
                queue.nextId(now),
                queue.encode(state),
                options,
                now,
                queue.tracer.pushContext(),
                taker.leaseMillis(),
                queue.node());
        result = commitPush(plan.operation(), List.of(plan.record()));
      } catch (RuntimeException | Error e) {
        taker.cancel();
        throw e;
      }
      if (!result.ok()) {
        taker.cancel();
        return null;
      }
      JobRecord record = plan.record();
      taker.take(record, result.versionstamp());
      return Job.of(queue.name(), record, state, now);
    }
    return null;
  }

  /** See {@link Queue#push(Object, JobOptions)} with a unique key. */
  Job<S> pushUnique(S state, JobOptions options) {
    PushResult<S> result = offer(state, options);
    return result
        .job()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "the throttle key \""
                        + options.unique().key()
                        + "\" of queue "
                        + queue.name()
                        + " is taken until its period ends, by job "
                        + result.id()
                        + ", which has finished: no job to return; Queue.offer says so without"
                        + " an exception"));
  }

  /**
   * See {@link Queue#offer}: reads the key's entry and the job it names, plans ({@link
   * UniqueTransitions#push}), commits; a commit that fails because the key or its holder changed
   * under it is planned again from a fresh read.
   */
  PushResult<S> offer(S state, JobOptions options) {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(options, "options");
    if (options.unique() == null) {
      return PushResult.created(pushAll(List.of(state), options).get(0));
    }
    byte[] payload = queue.encode(state);
    Map<String, String> traceContext = queue.tracer.pushContext();
    dev.kvmq.store.Key entryKey = keys.unique(options.unique().key());
    for (int i = 0; i < ATOMIC_RETRIES; i++) {
      long now = queue.clock.millis();
      UniqueTransitions.KeyRead read = readKey(entryKey);
      // the groups a push can move: the new job's, and a debounced holder's
      java.util.Set<String> groups = new java.util.LinkedHashSet<>();
      boolean admitLater = queue.store.joinsCallersTransaction();
      if (options.group() != null && !admitLater) {
        groups.add(options.group());
      }
      read.holder().map(h -> h.record().group).ifPresent(groups::add);
      GroupBook book = GroupReads.book(queue.store, keys, limits(), groups);
      String id = queue.nextId(now);
      UniqueTransitions.Plan plan =
          UniqueTransitions.push(
              keys, read, id, payload, options, now, traceContext, book, admitLater);
      if (plan instanceof UniqueTransitions.Duplicate d) {
        return PushResult.duplicate(d.id(), d.holder().map(r -> queue.toJob(r, now)));
      } else if (plan instanceof UniqueTransitions.Create c) {
        if (commitPush(c.applied().operation(), List.of(c.applied().record())).ok()) {
          return PushResult.created(Job.of(queue.name(), c.applied().record(), state, now));
        }
      } else if (plan instanceof UniqueTransitions.Debounce d
          && commitPush(d.applied().operation(), List.of(d.applied().record())).ok()) {
        return PushResult.debounced(Job.of(queue.name(), d.applied().record(), state, now));
      }
    }
    throw contention("push a job with the unique key \"" + options.unique().key() + "\"");
  }

  /** Reads a unique key's entry and the job it names. */
  private UniqueTransitions.KeyRead readKey(dev.kvmq.store.Key entryKey) {
    Optional<KvEntry> entry = queue.store.get(entryKey);
    if (entry.isEmpty()) {
      return UniqueTransitions.KeyRead.free();
    }
    UniqueTransitions.Holder holder = UniqueTransitions.Holder.decode(entry.get().value());
    Optional<KvEntry> job =
        Ulid.isValid(holder.id()) ? queue.store.get(keys.job(holder.id())) : Optional.empty();
    Optional<Transitions.Read> read = Optional.empty();
    boolean unreadable = false;
    if (job.isPresent()) {
      JobRecord r = listing.readable(job.get());
      if (r == null) {
        unreadable = true;
      } else {
        read = Optional.of(new Transitions.Read(r, job.get().versionstamp()));
      }
    }
    return new UniqueTransitions.KeyRead(
        Optional.of(holder), entry.get().versionstamp(), read, unreadable);
  }

  private GroupBook.Limits limits() {
    return queue.groupLimits();
  }

  /** How a batch of new jobs is added to its operation: pushed, or held. */
  @FunctionalInterface
  private interface NewJob {
    JobRecord addTo(
        AtomicOperation.Builder op,
        QueueKeys keys,
        String id,
        byte[] payload,
        JobOptions options,
        long now,
        Map<String, String> traceContext,
        GroupBook book);
  }

  /**
   * Writes new jobs in one operation, with the pusher's trace context; returns them.
   *
   * @param booksGroup whether the jobs may move their group's counts: its record is read, checked
   *     and written, and a commit refused by a change of it is planned again
   */
  private List<Job<S>> newJobs(
      Collection<? extends S> states, JobOptions options, boolean booksGroup, NewJob newJob) {
    Objects.requireNonNull(states, "states");
    Objects.requireNonNull(options, "options");
    if (states.isEmpty()) {
      return List.of();
    }
    List<byte[]> payloads = new ArrayList<>(states.size());
    for (S state : states) {
      payloads.add(queue.encode(state));
    }
    Map<String, String> traceContext = queue.tracer.pushContext();
    long now = queue.clock.millis();
    List<JobRecord> records = new ArrayList<>(states.size());
    for (int attempt = 0; ; attempt++) {
      // A job of a group reads the group's record; a commit that fails its check read it before
      // another commit of the group and is planned again. Without the record, a failed check is a
      // duplicate id.
      GroupBook book =
          booksGroup
              ? GroupReads.book(queue.store, keys, limits(), java.util.Set.of(options.group()))
              : GroupBook.none();
      AtomicOperation.Builder op = AtomicOperation.builder();
      records.clear();
      for (byte[] payload : payloads) {
        records.add(
            newJob.addTo(op, keys, queue.nextId(now), payload, options, now, traceContext, book));
      }
      book.finishInto(op);
      CommitResult result = commitPush(op.build(), records);
      if (result.ok()) {
        break;
      }
      if (!booksGroup) {
        throw new IllegalStateException(
            "a new job id was already taken in queue "
                + queue.name()
                + ": two id generators made the same ULID. Indicates a bug.");
      }
      if (attempt + 1 >= ATOMIC_RETRIES) {
        throw contention("push jobs of group " + options.group());
      }
      now = queue.clock.millis();
    }
    List<Job<S>> jobs = new ArrayList<>(records.size());
    int i = 0;
    for (S state : states) {
      jobs.add(Job.of(queue.name(), records.get(i++), state, now));
    }
    return jobs;
  }

  /** See {@link Queue#delete}. */
  boolean delete(String id) {
    return onJob(
        id,
        "delete job " + id,
        (read, now, book) -> {
          Transitions.Plan plan = Transitions.delete(keys, read, now, book);
          if (plan instanceof Transitions.Refused) {
            throw new JobProcessingException(
                "job "
                    + id
                    + " of queue "
                    + queue.name()
                    + " is being processed (leased until "
                    + Instant.ofEpochMilli(read.record().leaseUntil)
                    + "); delete it after it completes or its lease expires");
          }
          return plan;
        });
  }

  /** See {@link Queue#deleteWaiting}. */
  int deleteWaiting() {
    for (int i = 0; i < ATOMIC_RETRIES; i++) {
      long now = queue.clock.millis();
      List<Transitions.Read> reads = new ArrayList<>();
      for (KvEntry e : queue.store.list(keys.jobs())) {
        JobRecord r = listing.readable(e);
        if (r != null) {
          reads.add(new Transitions.Read(r, e.versionstamp()));
        }
      }
      List<JobRecord> records = new ArrayList<>(reads.size());
      for (Transitions.Read read : reads) {
        records.add(read.record());
      }
      GroupBook book = GroupReads.book(queue.store, keys, limits(), GroupReads.groupsOf(records));
      Transitions.Removal removal = Transitions.deleteWaiting(keys, reads, now, book);
      if (removal.count() == 0 || queue.store.commit(removal.operation()).ok()) {
        return removal.count();
      }
    }
    throw contention("delete the waiting jobs");
  }

  /** See {@link Queue#replayDead}. */
  boolean replayDead(String id) {
    return onJob(id, "replay job " + id, (read, now, book) -> Transitions.replay(keys, read, book));
  }

  /** See {@link Queue#deleteDead}. */
  boolean deleteDead(String id) {
    return onJob(
        id, "delete dead job " + id, (read, now, book) -> Transitions.deleteDead(keys, read, now));
  }

  // ---- control

  /** See {@link Queue#cancel}. */
  boolean cancel(String id) {
    return onJob(
        id, "cancel job " + id, (read, now, book) -> Transitions.cancel(keys, read, now, book));
  }

  /** See {@link Queue#cancelAll}. */
  long cancelAll(JobFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return bulk(filter, EnumSet.of(JobStatus.DEAD, JobStatus.CANCELLED, JobStatus.COMPLETED), true);
  }

  /** See {@link Queue#deleteAll}. */
  long deleteAll(JobFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return bulk(filter, EnumSet.of(JobStatus.PROCESSING), false);
  }

  /**
   * Walks the indexes of the filter's statuses in batches of {@link Queue#BULK_BATCH} entries, and
   * commits each batch's cancels (or deletes) as independent operations in one {@link
   * dev.kvmq.store.KvStore#commitAll}: a short commit per batch, and a job changed since its read
   * (claimed, completed) is left out, not retried. The walk goes on after the batch's last entry,
   * so a job left out is not read again.
   */
  private long bulk(JobFilter filter, Set<JobStatus> never, boolean cancel) {
    long now = queue.clock.millis();
    Set<JobStatus> statuses = EnumSet.copyOf(filter.statuses());
    statuses.removeAll(never);
    long done = 0;
    for (KeyRange range : rangesOf(statuses, now)) {
      Key after = null;
      while (true) {
        KeyRange rest = after == null ? range : range.from(after);
        List<KvEntry> index = queue.store.list(rest, Queue.BULK_BATCH + 1, false);
        if (after != null && !index.isEmpty() && index.get(0).key().equals(after)) {
          index = index.subList(1, index.size());
        } else if (index.size() > Queue.BULK_BATCH) {
          index = index.subList(0, Queue.BULK_BATCH);
        }
        if (index.isEmpty()) {
          break;
        }
        after = index.get(index.size() - 1).key();
        List<Key> jobKeys = new ArrayList<>(index.size());
        for (KvEntry e : index) {
          jobKeys.add(keys.job(QueueKeys.idOf(e.key())));
        }
        List<Transitions.Read> reads = new ArrayList<>(jobKeys.size());
        List<String> grouped = new ArrayList<>();
        for (Optional<KvEntry> e : queue.store.getMany(jobKeys)) {
          if (e.isPresent()) {
            JobRecord r = listing.readable(e.get());
            if (r != null && r.group != null && filter.matches(r, now)) {
              grouped.add(r.id); // books its group's record: one job per commit, below
            } else if (r != null) {
              reads.add(new Transitions.Read(r, e.get().versionstamp()));
            }
          }
        }
        for (String id : grouped) {
          if (onJob(id, (cancel ? "cancel job " : "delete job ") + id, matching(filter, cancel))) {
            done++;
          }
        }
        List<Transitions.Applied> plans =
            cancel
                ? Transitions.cancelMatching(keys, reads, now, filter)
                : Transitions.deleteMatching(keys, reads, now, filter);
        if (!plans.isEmpty()) {
          for (CommitResult result :
              queue.store.commitAll(plans.stream().map(Transitions.Applied::operation).toList())) {
            if (result.ok()) {
              done++;
            }
          }
        }
      }
    }
    return done;
  }

  /**
   * The cancel (or delete) of one job of a group in a bulk walk, if it still matches {@code filter}
   * when it is read: the jobs of a group share its record, so each is its own commit.
   */
  private Planner matching(JobFilter filter, boolean cancel) {
    return (read, now, book) -> {
      if (!filter.matches(read.record(), now)) {
        return new Transitions.Refused(Transitions.Refusal.WRONG_STATE);
      }
      return cancel
          ? Transitions.cancel(keys, read, now, book)
          : Transitions.delete(keys, read, now, book);
    };
  }

  /** The index ranges that hold the jobs of {@code statuses} at {@code now}. */
  private List<KeyRange> rangesOf(Set<JobStatus> statuses, long now) {
    List<KeyRange> ranges = new ArrayList<>();
    for (JobStatus status : statuses) {
      switch (status) {
        case WAITING -> {
          // the parked first: taking a group's admitted job (ready, or an expired lease) admits
          // its first parked job into the ready index, behind a walk of it that has passed there
          ranges.add(keys.parkedAll());
          ranges.add(keys.ready());
          ranges.add(keys.delayedDue(now));
          ranges.add(keys.leasedExpired(now));
        }
        case DELAYED -> ranges.add(keys.delayed().from(keys.delayedIndex().append(now + 1)));
        case PROCESSING -> ranges.add(keys.leased().from(keys.leasedIndex().append(now + 1)));
        case HELD -> ranges.add(keys.held());
        case DEAD -> ranges.add(keys.dead());
        case CANCELLED -> ranges.add(keys.cancelled());
        case COMPLETED -> ranges.add(keys.completed());
      }
    }
    return ranges;
  }

  // ---- held jobs

  /** See {@link Queue#holdAll}. */
  List<Job<S>> holdAll(Collection<? extends S> states, JobOptions options) {
    if (options != null && options.unique() != null) {
      throw new IllegalArgumentException(
          "a held job can't have a unique key (unique key \""
              + options.unique().key()
              + "\"): push it after the transaction commits");
    }
    return newJobs(
        states,
        options,
        false, // a held job counts in no group until it is released
        (op, k, id, payload, o, now, trace, book) ->
            Transitions.holdInto(op, k, id, payload, o, now, trace));
  }

  /** See {@link Queue#releaseHeld}. */
  int releaseHeld(Collection<String> ids) {
    return onHeld(
        ids,
        "release held jobs",
        (reads, book) -> Transitions.releaseHeld(keys, reads, queue.clock.millis(), book));
  }

  /** See {@link Queue#dropHeld}. */
  int dropHeld(Collection<String> ids) {
    return onHeld(ids, "drop held jobs", (reads, book) -> Transitions.dropHeld(keys, reads));
  }

  /**
   * Reads the jobs {@code ids} names, plans one move of the held ones, and commits it, again while
   * they change under us (up to {@link #ATOMIC_RETRIES} times). Ids of no held job are left out.
   */
  private int onHeld(
      Collection<String> ids,
      String what,
      java.util.function.BiFunction<List<Transitions.Read>, GroupBook, Transitions.HeldMove>
          planner) {
    Objects.requireNonNull(ids, "ids");
    List<dev.kvmq.store.Key> jobKeys = new ArrayList<>(ids.size());
    for (String id : ids) {
      if (Ulid.isValid(Objects.requireNonNull(id, "id"))) {
        jobKeys.add(keys.job(id));
      }
    }
    if (jobKeys.isEmpty()) {
      return 0;
    }
    for (int i = 0; i < ATOMIC_RETRIES; i++) {
      List<Transitions.Read> reads = new ArrayList<>(jobKeys.size());
      for (Optional<KvEntry> e : queue.store.getMany(jobKeys)) {
        if (e.isPresent()) {
          JobRecord r = listing.readable(e.get());
          if (r != null) {
            reads.add(new Transitions.Read(r, e.get().versionstamp()));
          }
        }
      }
      List<JobRecord> records = new ArrayList<>(reads.size());
      for (Transitions.Read read : reads) {
        records.add(read.record());
      }
      GroupBook book = GroupReads.book(queue.store, keys, limits(), GroupReads.groupsOf(records));
      Transitions.HeldMove move = planner.apply(reads, book);
      if (move.moved().isEmpty() || queue.store.commit(move.operation()).ok()) {
        return move.moved().size();
      }
    }
    throw contention(what);
  }

  /** Plans a transition of one job from what the store holds. */
  @FunctionalInterface
  private interface Planner {
    Transitions.Plan plan(Transitions.Read read, long now, GroupBook book);
  }

  /**
   * Reads a job, plans, and commits, again while the job changes under us (up to {@link
   * #ATOMIC_RETRIES} times). False if there is no such job or the plan is refused.
   */
  private boolean onJob(String id, String what, Planner planner) {
    Objects.requireNonNull(id, "id");
    if (!Ulid.isValid(id)) {
      return false;
    }
    for (int i = 0; i < ATOMIC_RETRIES; i++) {
      Optional<KvEntry> e = queue.store.get(keys.job(id));
      if (e.isEmpty()) {
        return false;
      }
      Transitions.Read read =
          new Transitions.Read(JobRecord.decode(e.get().value()), e.get().versionstamp());
      GroupBook book = GroupReads.book(queue.store, keys, limits(), read.record());
      if (!(planner.plan(read, queue.clock.millis(), book) instanceof Transitions.Applied plan)) {
        return false;
      }
      if (queue.store.commit(plan.operation()).ok()) {
        return true;
      }
    }
    throw contention(what);
  }

  private IllegalStateException contention(String what) {
    return new IllegalStateException(
        "could not "
            + what
            + " in queue "
            + queue.name()
            + ": the queue changed under "
            + ATOMIC_RETRIES
            + " attempts in a row; pause the queue and try again");
  }
}
