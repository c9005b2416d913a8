package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The claim path of a worker: promote due delayed jobs, reclaim expired leases, claim ready
 * jobs in queue order. Each step reads a bounded index range (O(log n) in every store) and
 * commits its moves as one batch.
 */
final class Claimer {

  static final int MAINTENANCE_BATCH = 256;
  private static final System.Logger LOG = System.getLogger(Claimer.class.getName());

  /** A claimed job and the versionstamp of the claim's commit. */
  record Claimed(JobRecord record, long versionstamp) {}

  private final QueueKeys keys;
  private final KvStore store;

  Claimer(QueueKeys keys, KvStore store) {
    this.keys = keys;
    this.store = store;
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
    List<KvEntry> index = store.list(due, MAINTENANCE_BATCH, false);
    if (index.isEmpty()) {
      return false;
    }
    List<AtomicOperation> ops = new ArrayList<>(index.size());
    for (Optional<KvEntry> e : store.getMany(jobKeys(index))) {
      if (e.isPresent()) {
        JobRecord r = JobRecord.decode(e.get().value());
        long vs = e.get().versionstamp();
        Transitions.Plan plan = promote ? Transitions.promote(keys, r, vs, now) : Transitions.reclaim(keys, r, vs, now);
        if (!plan.refused()) {
          ops.add(plan.operation());
        }
      }
    }
    if (!ops.isEmpty()) {
      store.commitAll(ops); // a refused check means another worker moved the job first
    }
    return index.size() == MAINTENANCE_BATCH;
  }

  /**
   * Claims up to {@code max} ready jobs, in queue order, in one batch commit.
   *
   * @param more set to true when there may be more ready jobs (a full batch, or lost races)
   */
  List<Claimed> claim(int max, long now, long leaseMillis, boolean[] more) {
    List<KvEntry> ready = store.list(keys.ready(), max, false);
    more[0] = false;
    if (ready.isEmpty()) {
      return List.of();
    }
    List<AtomicOperation> ops = new ArrayList<>(ready.size());
    List<JobRecord> planned = new ArrayList<>(ready.size());
    List<Optional<KvEntry>> records = store.getMany(jobKeys(ready));
    for (int i = 0; i < records.size(); i++) {
      Optional<KvEntry> e = records.get(i);
      if (e.isPresent()) {
        JobRecord r;
        try {
          r = JobRecord.decode(e.get().value());
        } catch (IllegalStateException corrupt) {
          quarantine(ready.get(i).key(), e.get(), corrupt);
          continue;
        }
        Transitions.Plan plan = Transitions.claim(keys, r, e.get().versionstamp(), now, leaseMillis);
        if (!plan.refused()) {
          ops.add(plan.operation());
          planned.add(plan.after());
        }
      }
    }
    List<Claimed> claimed = new ArrayList<>(ops.size());
    if (!ops.isEmpty()) {
      List<CommitResult> results = store.commitAll(ops);
      for (int i = 0; i < results.size(); i++) {
        if (results.get(i).ok()) {
          claimed.add(new Claimed(planned.get(i), results.get(i).versionstamp()));
        }
      }
    }
    more[0] = ready.size() == max || claimed.size() < ready.size();
    return claimed;
  }

  /**
   * Moves an unreadable record's index entry aside, to {@code [..., "corrupt", id]}, so that
   * one bad record does not stop the queue; the record itself is kept for inspection.
   */
  private void quarantine(Key indexKey, KvEntry record, RuntimeException why) {
    String id = QueueKeys.idOf(indexKey);
    LOG.log(System.Logger.Level.ERROR, "job " + id + " of queue " + keys.queue
        + " can't be read; moving it aside to " + keys.corrupt(id), why);
    store.commit(AtomicOperation.builder()
        .check(record.key(), record.versionstamp())
        .delete(indexKey)
        .set(keys.corrupt(id), QueueKeys.EMPTY)
        .build());
  }

  /** The earliest of {@code at}, the first delayed job's due time and the first lease's end. */
  long nextChange(long at) {
    for (KeyRange range : List.of(keys.delayed(), keys.leased())) {
      List<KvEntry> first = store.list(range, 1, false);
      if (!first.isEmpty()) {
        Key k = first.get(0).key();
        at = Math.min(at, k.getLong(k.size() - 2));
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
