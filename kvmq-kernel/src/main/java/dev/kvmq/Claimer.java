package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStore.ClaimPlanner.RecordKeyRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The claim path of a worker: promote due delayed jobs, reclaim expired leases, claim ready jobs in
 * queue order. Each step reads a bounded index range (O(log n) in every store) and commits its
 * moves as one batch.
 */
final class Claimer {

  static final int MAINTENANCE_BATCH = 256;
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
  private final int maxLeaseExpiries;
  private final String node;

  /**
   * A claimer that moves up to {@code batch} due jobs of each kind per call (tests: small ones),
   * with the default limit of lease expiries.
   */
  Claimer(QueueKeys keys, KvStore store, int batch) {
    this(keys, store, batch, Queue.DEFAULT_MAX_LEASE_EXPIRIES);
  }

  /** A claimer whose claims record {@code node} in the attempts they start. */
  Claimer(QueueKeys keys, KvStore store, String node) {
    this(keys, store, MAINTENANCE_BATCH, Queue.DEFAULT_MAX_LEASE_EXPIRIES, node);
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
   * A claimer of {@code batch} moves per call, with the queue's limit of lease expiries, whose
   * claims record {@code node}.
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
    return reclaimExpired(now) | more;
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
    for (Optional<KvEntry> e : store.getMany(jobKeys(index))) {
      if (e.isPresent()) {
        Transitions.Read read =
            new Transitions.Read(JobRecord.decode(e.get().value()), e.get().versionstamp());
        Transitions.Plan plan =
            promote
                ? Transitions.promote(keys, read, now)
                : Transitions.reclaim(keys, read, now, maxLeaseExpiries);
        if (plan instanceof Transitions.Applied applied) {
          ops.add(applied.operation());
        }
      }
    }
    if (!ops.isEmpty()) {
      store.commitAll(ops); // a refused check means another worker moved the job first
    }
    return index.size() == batch;
  }

  /**
   * Claims up to {@code max} ready jobs, in queue order, in one batch commit, through {@link
   * KvStore#claim}: a store may let concurrent claims take different jobs instead of colliding on
   * the first ones; every claim still checks the versionstamp of the record it was planned from.
   */
  Batch claim(int max, long now, long leaseMillis) {
    ClaimPlan plan = new ClaimPlan(now, leaseMillis);
    List<CommitResult> results = store.claim(keys.ready(), max, plan);
    List<Claimed> claimed = new ArrayList<>(results.size());
    for (int i = 0; i < results.size(); i++) {
      CommitResult result = results.get(i);
      JobRecord after = plan.planned.get(i);
      if (after == null) {
        Quarantine q = plan.quarantined.get(i);
        if (result.ok()) {
          LOG.log(
              System.Logger.Level.ERROR,
              "job "
                  + q.id
                  + " of queue "
                  + keys.queue
                  + " can't be read; moved it aside to "
                  + keys.corrupt(q.id),
              q.why);
        }
      } else if (result.ok()) {
        claimed.add(new Claimed(after, result.versionstamp()));
      }
    }
    return new Batch(claimed, plan.seen == max || claimed.size() < plan.seen);
  }

  /** An unreadable record moved aside by a claim, and why it could not be read. */
  private record Quarantine(String id, RuntimeException why) {}

  /**
   * Plans the claims of one {@link KvStore#claim} call with the pure {@link Transitions#claim}. An
   * unreadable record's index entry is moved aside, to {@code [..., "corrupt", id]}, in the same
   * batch, so that one bad record does not stop the queue; the record itself is kept for
   * inspection. Every call of {@link #plan} starts afresh (a store may call it again).
   */
  private final class ClaimPlan implements KvStore.ClaimPlanner {
    private final long now;
    private final long leaseMillis;

    /** Per planned operation: the claimed record, or null for a quarantine. */
    final List<JobRecord> planned = new ArrayList<>();

    /** Per planned operation: the quarantine, or null for a claim. */
    final List<Quarantine> quarantined = new ArrayList<>();

    int seen;

    ClaimPlan(long now, long leaseMillis) {
      this.now = now;
      this.leaseMillis = leaseMillis;
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
          quarantined.add(new Quarantine(QueueKeys.idOf(indexKey), corrupt));
          continue;
        }
        Transitions.Plan plan =
            Transitions.claim(
                keys, new Transitions.Read(r, e.get().versionstamp()), now, leaseMillis, node);
        if (plan instanceof Transitions.Applied applied) {
          ops.add(applied.operation());
          planned.add(applied.record());
          quarantined.add(null);
        }
      }
      return ops;
    }
  }

  /** The earliest of {@code at}, the first delayed job's due time and the first lease's end. */
  long nextChange(long at) {
    for (KeyRange range : List.of(keys.delayed(), keys.leased())) {
      List<KvEntry> first = store.list(range, 1, false);
      if (!first.isEmpty()) {
        at = Math.min(at, QueueKeys.timeOf(first.get(0).key()));
      }
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
