package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStore.ClaimPlanner.RecordKeyRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The claim path of a worker: promote due delayed jobs, reclaim expired leases, claim ready jobs in
 * queue order. Each step reads a bounded index range (O(log n) in every store) and commits its
 * moves as one batch.
 */
final class Claimer {

  static final int MAINTENANCE_BATCH = 256;

  /** How many times {@link #admitFreeSlots()} plans one group again after a refused check. */
  private static final int MAX_GROUP_REPLANS = 20;

  private static final System.Logger LOG = System.getLogger(Claimer.class.getName());

  /** A claimed job and the versionstamp of the claim's commit. */
  record Claimed(JobRecord record, long versionstamp) {}

  /**
   * What one claim took, in queue order, and whether there may be more ready jobs (a full batch, or
   * lost races).
   */
  record Batch(List<Claimed> claimed, boolean more) {}

  private final QueueKeys keys;
  private final KvStore store;
  private final KvStore.ClaimPlanner.RecordKeyRule recordKeyRule;
  private final int batch;
  private GroupBook.Limits limits = g -> Queue.UNLIMITED;
  private RateLimit rate;
  private GroupBook.Rates rates = GroupBook.Rates.NONE;
  private final String node;

  /** The committer whose waiting operations ride in each claim's commit; null: none ride. */
  private GroupCommitter rideFrom;

  /** The operations that rode in the last claim's commit, until {@link #settleRiders()}. */
  private GroupCommitter.Ride ride;

  private List<CommitResult> rideResults;

  /**
   * Whether the last {@link #claim} went to the store's claim, which takes the operations waiting
   * in the committer; false when it stopped before (its starts paused, its rate limit reached).
   */
  private boolean wentToStore;

  /**
   * When the last claim found the queue's starts paused or its rate limit reached: the time they
   * resume; 0 when it did not. Written by the claiming thread, read by {@link #startsKnownUnpaused}
   * on others.
   */
  private volatile long blockedUntil;

  /**
   * Whether the next claim reads the pause of the queue's starts first. A claim checks that key's
   * versionstamp in its commit whether or not it read it (absent when no pause was read), so the
   * read is only needed to know when a pause ends: after a read found none, claims skip it until
   * one of them fails (a pause committed since fails every claim's check, so it starts nothing).
   * That saves a round trip per claim on PostgreSQL, where the pickup of a job was a push, this
   * read and the claim's two. Written by the claiming thread, read by {@link #startsKnownUnpaused}
   * on others.
   */
  private volatile boolean pauseInDoubt = true;

  private final int maxLeaseExpiries;

  /**
   * A claimer that moves up to {@code batch} due jobs of each kind per call (tests: small ones),
   * with the default limit of lease expiries.
   */
  Claimer(QueueKeys keys, KvStore store) {
    this(keys, store, MAINTENANCE_BATCH);
  }

  /**
   * A claimer that moves up to {@code batch} due jobs of each kind per call (tests: small ones),
   * with the default limit of lease expiries.
   */
  Claimer(QueueKeys keys, KvStore store, int batch) {
    this(keys, store, batch, Queue.DEFAULT_MAX_LEASE_EXPIRIES);
  }

  /** A claimer whose claims record {@code node} in the attempts they start. */
  Claimer(QueueKeys keys, KvStore store, String node) {
    this(keys, store, MAINTENANCE_BATCH, node);
  }

  /**
   * Sets the queue's group limits (admission in promotions) and rate limit (a start slot taken in
   * each claim's commit); by default every group is unlimited and starts are not limited.
   */
  Claimer flow(GroupBook.Limits limits, RateLimit rate) {
    this.limits = limits;
    this.rate = rate;
    return this;
  }

  /**
   * Sets the queue's group limits, its rate limit and its groups' rate limits (a start slot of the
   * job's group taken in each claim's commit of a job of a group that has one).
   */
  Claimer flow(GroupBook.Limits limits, RateLimit rate, GroupBook.Rates rates) {
    this.limits = limits;
    this.rate = rate;
    this.rates = rates;
    return this;
  }

  /**
   * Lets the operations waiting in {@code committer} ride in each claim's commit: a claim takes
   * them when it plans (after its read, just before its commit), commits them after its own
   * operations in the same commit, and leaves their callbacks to {@link #settleRiders()}.
   */
  Claimer rides(GroupCommitter committer) {
    this.rideFrom = committer;
    return this;
  }

  /** Whether the last {@link #claim} went to the store's claim (see {@code wentToStore}). */
  boolean reachedStore() {
    return wentToStore;
  }

  /**
   * Runs the callbacks of the operations that rode in the last claim's commit, if any (the pass
   * calls it once it has handed the claimed jobs to the slots), and forgets them.
   */
  void settleRiders() {
    GroupCommitter.Ride r = ride;
    List<CommitResult> results = rideResults;
    ride = null;
    rideResults = null;
    if (r != null) {
      r.committed(results);
    }
  }

  /**
   * A claimer that moves up to {@code batch} due jobs of each kind per call (tests: small ones); a
   * job whose lease expires the {@code maxLeaseExpiries}-th time becomes a dead letter.
   */
  Claimer(QueueKeys keys, KvStore store, int batch, int maxLeaseExpiries) {
    this(keys, store, batch, maxLeaseExpiries, "");
  }

  /** A claimer of {@code batch} moves per call whose claims record {@code node}. */
  Claimer(QueueKeys keys, KvStore store, int batch, String node) {
    this(keys, store, batch, Queue.DEFAULT_MAX_LEASE_EXPIRIES, node);
  }

  /**
   * A claimer of {@code batch} moves per call, whose reclaims make a job a dead letter at its
   * {@code maxLeaseExpiries}-th expired lease and whose claims record {@code node}.
   */
  Claimer(QueueKeys keys, KvStore store, int batch, int maxLeaseExpiries, String node) {
    this.keys = keys;
    this.store = store;
    this.recordKeyRule = keys.readyToJob();
    this.batch = batch;
    this.maxLeaseExpiries = maxLeaseExpiries;
    this.node = node;
  }

  /**
   * Moves one batch of due delayed jobs and one of expired leases to ready; true if there may be
   * more of either. A claim must wait until this returns false: a job still in the delayed or
   * leased index may come before every ready job in queue order (docs/semantics.md, "A worker's
   * pass").
   */
  boolean moveDue(long now) {
    boolean more = promoteDue(now);
    if (!more) {
      // after the due promotions: a blocked group admits the jobs that came due in queue order
      more = wakeGroups(now);
    }
    return reclaimExpired(now) | more;
  }

  /**
   * Unblocks the groups whose blocked time has come ({@link Transitions#wake}): each admits its
   * first parked jobs again, one commit per group. True if there may be more to wake.
   */
  boolean wakeGroups(long now) {
    List<KvEntry> due = store.list(keys.groupsWakingDue(now), batch, false);
    if (due.isEmpty()) {
      return false;
    }
    java.util.Set<String> groups = new java.util.LinkedHashSet<>();
    for (KvEntry e : due) {
      groups.add(QueueKeys.groupOf(e.key()));
    }
    Map<String, GroupBook.Read> reads = GroupReads.read(store, keys, groups);
    List<String> names = new ArrayList<>(groups);
    List<Key> pauseKeys = new ArrayList<>(names.size());
    for (String g : names) {
      pauseKeys.add(keys.groupPaused(g));
    }
    List<Optional<KvEntry>> pauses = store.getMany(pauseKeys);
    List<AtomicOperation> ops = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      String g = names.get(i);
      Optional<KvEntry> pause = pauses.get(i);
      GroupBook book = GroupBook.of(keys, limits, Map.of(g, reads.get(g)));
      if (Transitions.wake(
              keys,
              g,
              now,
              pause.map(e -> Transitions.decodeTime(e.value())).orElse(0L),
              pause.map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT),
              book)
          instanceof Transitions.Applied a) {
        ops.add(a.operation());
      }
    }
    if (!ops.isEmpty()) {
      store.commitAll(ops); // a refused check: another worker woke or changed the group first
    }
    return due.size() == batch;
  }

  /**
   * Admits the parked jobs of every group that has a free slot under this claimer's limits ({@link
   * Transitions#admitFreeSlots}): a worker does this once, at its start, so that a limit raised or
   * removed since the jobs parked (from 0, say, where no completion is to come) takes effect
   * without waiting for the group's next push. Reads every group record in pages of the batch (idle
   * groups have none), then, per group with a free slot and parked jobs, one commit per {@link
   * GroupBook#HEADS} jobs admitted; a refused check (another commit changed the group) reads the
   * group again. Undecodable group records are skipped.
   *
   * @return how many jobs it admitted
   * @throws dev.kvmq.store.KvStoreException if the store fails: the caller tries again later
   */
  int admitFreeSlots() {
    int admitted = 0;
    KeyRange all = keys.groups();
    Key last = null;
    while (true) {
      List<KvEntry> page = store.list(last == null ? all : all.from(last), batch + 1, false);
      int fresh = 0;
      for (KvEntry e : page) {
        if (last != null && e.key().equals(last)) {
          continue;
        }
        fresh++;
        String g = QueueKeys.groupOf(e.key());
        GroupBook.Counts counts;
        try {
          counts = GroupBook.Counts.decode(e.value());
        } catch (IllegalStateException unreadable) {
          continue;
        }
        if (counts.parked() > 0 && counts.blockedUntil() == 0 && counts.admitted() < limits.of(g)) {
          admitted += admitFreeSlots(g);
        }
      }
      if (page.isEmpty() || fresh == 0 || page.size() < batch + 1) {
        return admitted;
      }
      last = page.get(page.size() - 1).key();
    }
  }

  /** {@link #admitFreeSlots()} for one group: commits until it has no free slot or parked job. */
  private int admitFreeSlots(String group) {
    int admitted = 0;
    int refused = 0;
    while (refused < MAX_GROUP_REPLANS) {
      GroupBook.Read read = GroupReads.read(store, keys, java.util.Set.of(group)).get(group);
      GroupBook book = GroupBook.of(keys, limits, Map.of(group, read));
      if (!(Transitions.admitFreeSlots(group, book) instanceof Transitions.Applied a)) {
        break;
      }
      if (store.commit(a.operation()).ok()) {
        admitted += book.admittedHeads().size();
      } else {
        refused++;
      }
    }
    return admitted;
  }

  /**
   * When the last claim found the queue's starts paused or its rate limit reached: when they
   * resume; 0 when it did not.
   */
  long blockedUntil() {
    return blockedUntil;
  }

  /**
   * Whether the last claim knew the queue's starts unpaused and unlimited: it read no pause (or
   * none was in doubt), was not blocked, and the queue has no rate limit (a handoff takes no start
   * slot, so a rate-limited queue takes none: {@link Handoff}).
   */
  boolean startsKnownUnpaused() {
    return rate == null && !pauseInDoubt && blockedUntil == 0;
  }

  /** Moves due delayed jobs to ready; true if there may be more to move. */
  boolean promoteDue(long now) {
    return move(keys.delayedDue(now), now, true);
  }

  /** Moves jobs whose lease expired back to ready; true if there may be more. */
  boolean reclaimExpired(long now) {
    return move(keys.leasedExpired(now), now, false);
  }

  private boolean move(KeyRange due, long now, boolean promote) {
    List<KvEntry> index = store.list(due, batch, false);
    if (index.isEmpty()) {
      return false;
    }
    List<AtomicOperation> ops = new ArrayList<>(index.size());
    List<Quarantine> quarantined = new ArrayList<>();
    Map<String, List<Transitions.Read>> grouped = new LinkedHashMap<>();
    List<Optional<KvEntry>> records = store.getMany(jobKeys(index));
    for (int i = 0; i < records.size(); i++) {
      Optional<KvEntry> e = records.get(i);
      if (e.isPresent()) {
        Optional<Transitions.Read> found =
            readOrQuarantine(index.get(i).key(), e.get(), quarantined);
        if (found.isEmpty()) {
          continue;
        }
        Transitions.Read read = found.get();
        if (read.record().group != null) {
          grouped.computeIfAbsent(read.record().group, g -> new ArrayList<>()).add(read);
          continue;
        }
        Transitions.Plan plan =
            promote
                ? Transitions.promote(keys, read, now)
                : Transitions.reclaim(keys, read, now, maxLeaseExpiries);
        if (plan instanceof Transitions.Applied applied) {
          ops.add(applied.operation());
        }
      }
    }
    if (!grouped.isEmpty()) {
      // One operation per group: its promotions (or reclaims) share (check and rewrite) its record.
      Map<String, GroupBook.Read> reads = GroupReads.read(store, keys, grouped.keySet());
      for (Map.Entry<String, List<Transitions.Read>> g : grouped.entrySet()) {
        GroupBook book = GroupBook.of(keys, limits, Map.of(g.getKey(), reads.get(g.getKey())));
        AtomicOperation.Builder op = AtomicOperation.builder();
        boolean any = false;
        for (Transitions.Read read : g.getValue()) {
          any |=
              (promote
                      ? Transitions.promoteInto(op, keys, read, now, book)
                      : Transitions.reclaimInto(op, keys, read, now, maxLeaseExpiries, book))
                  != null;
        }
        if (any) {
          book.finishInto(op);
          ops.add(op.build());
        }
      }
    }
    if (!ops.isEmpty()) {
      store.commitAll(ops); // a refused check means another worker moved the job first
    }
    commitQuarantines(keys, store, quarantined);
    return index.size() == batch;
  }

  /**
   * Decodes the record {@code indexKey} points at; if it can't be read, notes its quarantine
   * (committed by {@link #commitQuarantines}) and returns empty, so that one bad record does not
   * stop the moves of the others.
   */
  static Optional<Transitions.Read> readOrQuarantine(
      Key indexKey, KvEntry record, List<Quarantine> quarantined) {
    try {
      return Optional.of(
          new Transitions.Read(JobRecord.decode(record.value()), record.versionstamp()));
    } catch (IllegalStateException corrupt) {
      quarantined.add(new Quarantine(indexKey, record.versionstamp(), corrupt));
      return Optional.empty();
    }
  }

  /**
   * Moves each unreadable record's index entry aside ({@link Transitions#quarantine}), one commit
   * each, and logs the ones moved. A refused check means the record changed since: it is read again
   * next time.
   */
  static void commitQuarantines(QueueKeys keys, KvStore store, List<Quarantine> quarantined) {
    for (Quarantine q : quarantined) {
      if (store.commit(Transitions.quarantine(keys, q.indexKey, q.versionstamp).operation()).ok()) {
        logQuarantined(keys, q);
      }
    }
  }

  private static void logQuarantined(QueueKeys keys, Quarantine q) {
    String id = QueueKeys.idOf(q.indexKey);
    LOG.log(
        System.Logger.Level.ERROR,
        "job "
            + id
            + " of queue "
            + keys.queue
            + " can't be read; moved it aside to "
            + keys.corrupt(id),
        q.why);
  }

  /**
   * Claims up to {@code max} ready jobs, in queue order, in one batch commit, through {@link
   * KvStore#claim}: a store may let concurrent claims take different jobs instead of colliding on
   * the first ones; every claim still checks the versionstamp of the record it was planned from.
   */
  Batch claim(int max, long now, long leaseMillis) {
    blockedUntil = 0;
    wentToStore = false;
    boolean pauseRead = pauseInDoubt;
    Optional<KvEntry> pause = pauseRead ? store.get(keys.startsPaused()) : Optional.empty();
    long pausedVs = AtomicOperation.ABSENT;
    if (pauseRead && pause.isEmpty()) {
      pauseInDoubt = false;
    }
    if (pause.isPresent()) {
      long until = Transitions.decodeTime(pause.get().value());
      if (until > now) {
        blockedUntil = until;
        return new Batch(List.of(), false); // a handler paused the queue's starts
      }
      // The pause is over: remove it (checked: a new pause written since stays).
      AtomicOperation end =
          AtomicOperation.builder()
              .check(keys.startsPaused(), pause.get().versionstamp())
              .delete(keys.startsPaused())
              .build();
      if (!store.commit(end).ok()) {
        return new Batch(List.of(), true);
      }
    }
    List<Transitions.RateSlot> slots = null;
    if (rate != null) {
      slots = freeSlots(max, now);
      if (slots.isEmpty()) {
        List<KvEntry> oldest = store.list(keys.rateTaken(), 1, false);
        blockedUntil =
            oldest.isEmpty()
                ? now + 1
                : QueueKeys.timeOf(oldest.get(0).key()) + rate.period().toMillis();
        return new Batch(List.of(), false); // the rate limit is reached until the next slot frees
      }
      max = slots.size();
    }
    ClaimPlan plan = new ClaimPlan(now, leaseMillis, pausedVs, slots);
    List<CommitResult> results = claimWithRiders(max, plan);
    List<Claimed> claimed = new ArrayList<>(results.size());
    List<Transitions.Read> grouped = new ArrayList<>(plan.gated);
    boolean failed = false;
    for (int i = 0; i < results.size(); i++) {
      CommitResult result = results.get(i);
      JobRecord after = plan.planned.get(i);
      if (after == null) {
        if (result.ok()) {
          logQuarantined(keys, plan.quarantined.get(i));
        }
      } else if (result.ok()) {
        claimed.add(new Claimed(after, result.versionstamp()));
      } else {
        failed = true;
        if (after.group != null) {
          grouped.add(plan.reads.get(i)); // lost to another claim, or its group's starts paused
        }
      }
    }
    if (failed) {
      // A claim failed: another claim took its job, or a pause of the queue's starts was
      // committed since this claimer last read none. Read it before claiming again.
      pauseInDoubt = true;
    }
    if (!grouped.isEmpty() && !pauseRead && store.get(keys.startsPaused()).isPresent()) {
      // the second step commits claims and blocks: not under a pause this claim has not read
      pauseInDoubt = true;
      return new Batch(claimed, true); // the next pass reads when the pause ends
    }
    if (!grouped.isEmpty()) {
      List<Transitions.RateSlot> left =
          slots == null
              ? null
              : slots.subList(Math.min(plan.slotsUsed, slots.size()), slots.size());
      claimGated(grouped, now, leaseMillis, pausedVs, left, claimed);
    }
    return new Batch(claimed, plan.seen == max || claimed.size() < plan.seen);
  }

  /**
   * Commits the claim {@code plan} plans, with the operations that ride in it, and gives the
   * claim's own results; the riders' results wait for {@link #settleRiders()}, or, if the store
   * fails, the riders are given the failure at once.
   */
  private List<CommitResult> claimWithRiders(int max, ClaimPlan plan) {
    wentToStore = true; // the store's claim plans, and its planning takes what waits
    List<CommitResult> results;
    try {
      results = store.claim(keys.ready(), max, plan);
    } catch (RuntimeException e) {
      if (plan.ride != null) {
        plan.ride.failed(e); // any of the operations may have applied, as for any failed commit
      }
      throw e;
    }
    if (plan.ride == null) {
      return results;
    }
    int own = results.size() - plan.riders.size();
    if (own != plan.planned.size()) {
      IllegalStateException e =
          new IllegalStateException(
              store
                  + " returned "
                  + results.size()
                  + " results for a claim of "
                  + (plan.planned.size() + plan.riders.size())
                  + " operations");
      plan.ride.failed(e);
      throw e;
    }
    ride = plan.ride;
    rideResults = List.copyOf(results.subList(own, results.size()));
    return results.subList(0, own);
  }

  /**
   * The second step of a claim, for the jobs of groups whose starts it must read first: the jobs of
   * groups with a rate limit (which the first step leaves ready) and the grouped jobs whose claim
   * failed (another claim took them, or their group's starts are paused). Per group it reads the
   * pause of its starts, its record and, with a rate limit, the free slots of its window; then it
   * claims what the window allows (each claim takes a slot, {@link Transitions#claim}) and blocks
   * the rest ({@link Transitions#block}) until the group's next slot frees or its pause ends, so
   * that no claim meets those jobs in the ready index again before then. One commit per claim and
   * one per blocked group.
   *
   * @param slots the queue's free start slots left, or null with no queue rate limit
   */
  private void claimGated(
      List<Transitions.Read> jobs,
      long now,
      long leaseMillis,
      long pausedVs,
      List<Transitions.RateSlot> slots,
      List<Claimed> claimed) {
    Map<String, List<Transitions.Read>> byGroup = new LinkedHashMap<>();
    for (Transitions.Read r : jobs) {
      byGroup.computeIfAbsent(r.record().group, g -> new ArrayList<>()).add(r);
    }
    List<String> names = new ArrayList<>(byGroup.keySet());
    List<Key> pauseKeys = new ArrayList<>(names.size());
    for (String g : names) {
      pauseKeys.add(keys.groupPaused(g));
    }
    List<Optional<KvEntry>> pauses = store.getMany(pauseKeys);
    List<AtomicOperation> ops = new ArrayList<>();
    List<JobRecord> planned = new ArrayList<>(); // per op: the claimed record, or null
    int slotNext = 0;
    for (int i = 0; i < names.size(); i++) {
      String g = names.get(i);
      List<Transitions.Read> reads = byGroup.get(g);
      Optional<KvEntry> pause = pauses.get(i);
      long pausedUntil = pause.map(e -> Transitions.decodeTime(e.value())).orElse(0L);
      if (pause.isPresent() && pausedUntil > now) {
        blockInto(ops, planned, g, reads, pausedUntil);
        continue;
      }
      if (pause.isPresent()) { // ended: remove it; its jobs are claimed next time
        ops.add(
            AtomicOperation.builder()
                .check(keys.groupPaused(g), pause.get().versionstamp())
                .delete(keys.groupPaused(g))
                .build());
        planned.add(null);
        continue;
      }
      RateLimit groupRate = rates.of(g);
      if (groupRate == null) {
        continue; // lost races: another claim took them
      }
      QueueKeys.RateWindow window = keys.rateWindow(g);
      List<Transitions.RateSlot> free = freeSlots(window, groupRate, reads.size(), now);
      int taken = 0;
      for (Transitions.Read read : reads) {
        if (taken == free.size()) {
          break;
        }
        Transitions.RateSlot queueSlot = null;
        if (slots != null) {
          if (slotNext == slots.size()) {
            break; // the queue's window is full: the rest stay ready
          }
          queueSlot = slots.get(slotNext);
        }
        if (Transitions.claim(
                keys, read, now, leaseMillis, node, pausedVs, queueSlot, free.get(taken))
            instanceof Transitions.Applied a) {
          ops.add(a.operation());
          planned.add(a.record());
          taken++;
          if (slots != null) {
            slotNext++;
          }
        }
      }
      if (taken == free.size() && taken < reads.size()) {
        List<KvEntry> oldest = store.list(window.taken(), 1, false);
        long next =
            oldest.isEmpty()
                ? now + 1
                : QueueKeys.timeOf(oldest.get(0).key()) + groupRate.period().toMillis();
        blockInto(ops, planned, g, reads.subList(taken, reads.size()), Math.max(next, now + 1));
      }
    }
    if (ops.isEmpty()) {
      return;
    }
    List<CommitResult> results = store.commitAll(ops);
    for (int i = 0; i < results.size(); i++) {
      if (results.get(i).ok() && planned.get(i) != null) {
        claimed.add(new Claimed(planned.get(i), results.get(i).versionstamp()));
      }
    }
  }

  /** Adds the block of {@code reads}, ready jobs of {@code group}, until {@code until}. */
  private void blockInto(
      List<AtomicOperation> ops,
      List<JobRecord> planned,
      String group,
      List<Transitions.Read> reads,
      long until) {
    Map<String, GroupBook.Read> read = GroupReads.read(store, keys, java.util.Set.of(group));
    GroupBook.Read r = read.get(group);
    GroupBook book =
        GroupBook.of(
            keys,
            limits,
            Map.of(group, new GroupBook.Read(group, r.counts(), r.versionstamp(), List.of())));
    if (Transitions.block(keys, reads, group, until, book) instanceof Transitions.Applied a) {
      ops.add(a.operation());
      planned.add(null);
    }
  }

  /**
   * An unreadable record to move aside: the index entry that points at it, the versionstamp it was
   * read at, and why it could not be read.
   */
  record Quarantine(Key indexKey, long versionstamp, RuntimeException why) {}

  /**
   * Plans the claims of one {@link KvStore#claim} call with the pure {@link Transitions#claim}. An
   * unreadable record's index entry is moved aside, to {@code [..., "corrupt", id]}, in the same
   * batch, so that one bad record does not stop the queue; the record itself is kept for
   * inspection. Every call of {@link #plan} starts afresh (a store may call it again).
   */
  private final class ClaimPlan implements KvStore.ClaimPlanner {
    /**
     * The operations waiting in the committer, taken at the first planning (after the read, just
     * before the commit) and committed after the claim's own; null until taken, or if none ride.
     */
    GroupCommitter.Ride ride;

    List<AtomicOperation> riders = List.of();

    private boolean ridersTaken;

    private final long now;
    private final long leaseMillis;
    private final long pausedVs;
    private final List<Transitions.RateSlot> slots; // null: no rate limit

    /** Per planned operation: the claimed record, or null for a quarantine. */
    final List<JobRecord> planned = new ArrayList<>();

    /** Per planned operation: the quarantine, or null for a claim. */
    final List<Quarantine> quarantined = new ArrayList<>();

    /** Per planned operation: the job as read, or null for a quarantine. */
    final List<Transitions.Read> reads = new ArrayList<>();

    /** Ready jobs of groups with a rate limit: claimed in a second step ({@link #claimGated}). */
    final List<Transitions.Read> gated = new ArrayList<>();

    /** How many of the queue's free slots the planned claims take. */
    int slotsUsed;

    int seen;

    ClaimPlan(long now, long leaseMillis, long pausedVs, List<Transitions.RateSlot> slots) {
      this.now = now;
      this.leaseMillis = leaseMillis;
      this.pausedVs = pausedVs;
      this.slots = slots;
    }

    @Override
    public Key recordKey(Key indexKey) {
      return keys.job(QueueKeys.idOf(indexKey));
    }

    @Override
    public Optional<RecordKeyRule> recordKeyRule() {
      return Optional.of(recordKeyRule);
    }

    @Override
    public List<AtomicOperation> plan(List<KvEntry> index, List<Optional<KvEntry>> records) {
      planned.clear();
      quarantined.clear();
      reads.clear();
      gated.clear();
      slotsUsed = 0;
      seen = index.size();
      List<AtomicOperation> ops = new ArrayList<>(index.size());
      for (int i = 0; i < records.size(); i++) {
        Optional<KvEntry> e = records.get(i);
        if (e.isEmpty()) {
          continue;
        }
        JobRecord r;
        try {
          r = JobRecord.decode(e.get().value());
        } catch (IllegalStateException corrupt) {
          Key indexKey = index.get(i).key();
          ops.add(Transitions.quarantine(keys, indexKey, e.get().versionstamp()).operation());
          planned.add(null);
          quarantined.add(new Quarantine(indexKey, e.get().versionstamp(), corrupt));
          reads.add(null);
          continue;
        }
        Transitions.Read read =
            new Transitions.Read(r, e.get().versionstamp(), e.get().key(), index.get(i).key());
        if (r.group != null && rates.of(r.group) != null) {
          gated.add(read); // its group's window is read first: the second step claims it
          continue;
        }
        Transitions.RateSlot slot = null;
        if (slots != null) {
          if (slotsUsed >= slots.size()) {
            break; // every free start slot is planned
          }
          slot = slots.get(slotsUsed);
        }
        Transitions.Plan plan =
            Transitions.claim(keys, read, now, leaseMillis, node, pausedVs, slot);
        if (plan instanceof Transitions.Applied applied) {
          ops.add(applied.operation());
          planned.add(applied.record());
          quarantined.add(null);
          reads.add(read);
          if (slot != null) {
            slotsUsed++;
          }
        }
      }
      if (!ridersTaken && rideFrom != null) {
        ridersTaken = true; // a second planning (a store's retry) commits the same riders
        GroupCommitter.Ride r = rideFrom.take();
        if (!r.isEmpty()) {
          ride = r;
          riders = r.operations();
        }
      }
      ops.addAll(riders);
      return ops;
    }
  }

  /**
   * Up to {@code max} start slots of the rate limit free at {@code now}: the ones taken longest
   * ago, if a period has passed since, then slots never taken while fewer than the limit exist.
   * Slots numbered at or over a lowered limit are deleted as they are met.
   */
  private List<Transitions.RateSlot> freeSlots(int max, long now) {
    return freeSlots(keys.rateWindow(), rate, max, now);
  }

  /** As {@link #freeSlots(int, long)}, of the window {@code w} of the rate limit {@code rate}. */
  private List<Transitions.RateSlot> freeSlots(
      QueueKeys.RateWindow w, RateLimit rate, int max, long now) {
    List<Transitions.RateSlot> free = new ArrayList<>(max);
    long period = rate.period().toMillis();
    List<KvEntry> taken = store.list(w.taken(), max, false);
    List<AtomicOperation> stale = new ArrayList<>();
    List<Key> slotKeys = new ArrayList<>();
    List<KvEntry> candidates = new ArrayList<>();
    for (KvEntry e : taken) {
      long takenAt = QueueKeys.timeOf(e.key());
      long slot = e.key().getLong(e.key().size() - 1);
      if (slot >= rate.starts()) {
        stale.add(AtomicOperation.builder().delete(e.key()).delete(w.slot(slot)).build());
      } else if (takenAt + period <= now) {
        candidates.add(e);
        slotKeys.add(w.slot(slot));
      }
    }
    if (!stale.isEmpty()) {
      store.commitAll(stale);
    }
    if (!candidates.isEmpty()) {
      List<Optional<KvEntry>> records = store.getMany(slotKeys);
      for (int i = 0; i < candidates.size(); i++) {
        Key k = candidates.get(i).key();
        long takenAt = QueueKeys.timeOf(k);
        Optional<KvEntry> slot = records.get(i);
        if (slot.isPresent() && Transitions.decodeTime(slot.get().value()) == takenAt) {
          free.add(
              new Transitions.RateSlot(
                  k.getLong(k.size() - 1), takenAt, slot.get().versionstamp()));
        }
      }
    }
    if (free.size() < max) {
      List<KvEntry> last = store.list(w.slots(), 1, true);
      long next = last.isEmpty() ? 0 : last.get(0).key().getLong(last.get(0).key().size() - 1) + 1;
      for (long i = next; i < rate.starts() && free.size() < max; i++) {
        free.add(new Transitions.RateSlot(i, Transitions.NEVER, AtomicOperation.ABSENT));
      }
    }
    return free;
  }

  /**
   * The ranges whose first entries {@link #nextChange} reads: the delayed index, the leased index
   * and the groups' waking times.
   */
  List<KeyRange> horizon() {
    return List.of(keys.delayed(), keys.leased(), keys.groupsWaking());
  }

  /**
   * The earliest of {@code at}, the first delayed job's due time, the first lease's end, the first
   * group's waking time, the end of a pause of the queue's starts and the time the rate limit's
   * next slot frees.
   *
   * @param firsts the first entries of the {@link #horizon()} ranges, in their order
   */
  long nextChange(long at, List<Optional<KvEntry>> firsts) {
    for (Optional<KvEntry> first : firsts) {
      if (first.isPresent()) {
        at = Math.min(at, QueueKeys.timeOf(first.get().key()));
      }
    }
    if (blockedUntil > 0) {
      at = Math.min(at, blockedUntil);
    }
    return at;
  }

  private List<Key> jobKeys(List<KvEntry> index) {
    List<Key> jobKeys = new ArrayList<>(index.size());
    for (KvEntry e : index) {
      jobKeys.add(keys.job(QueueKeys.idOf(e.key())));
    }
    return jobKeys;
  }
}
