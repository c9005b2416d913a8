package dev.kvmq;

import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lease renewal: every {@code renewInterval} the leases of every job the worker holds (running or
 * claimed ahead) are extended in one commit; a renewal that finds its record changed reads it again
 * and, if the lease is still this worker's, renews from what it read, else reports the lease lost.
 *
 * <p>Locking: each lease's own monitor, one at a time, only while reading what to plan from;
 * commits run outside every lock. Runs on the executor's repeating renewal task and, for one lease,
 * on a handler thread about to start a job whose lease ran out.
 *
 * @param <S> the state type
 */
final class Renewer<S> {

  private final WorkerCore<S> core;

  /** A look for cancelled jobs is asked for and has not started yet. */
  private final AtomicBoolean cancelCheckPending = new AtomicBoolean();

  /** How many changes of the cancelled index the store announced. */
  private final AtomicLong cancelsHeard = new AtomicLong();

  /** How many of those a finished look for cancelled jobs covers. */
  private final AtomicLong cancelsSeen = new AtomicLong();

  Renewer(WorkerCore<S> core) {
    this.core = core;
  }

  /**
   * The store announced a change of the cancelled index: one look at the held jobs runs on the
   * executor (not on the store's thread, which must not call the store), however many changes were
   * announced before it started.
   */
  void cancelsChanged() {
    cancelsHeard.incrementAndGet();
    if (!cancelCheckPending.compareAndSet(false, true)) {
      return;
    }
    try {
      core.executor.execute(
          WorkerCore.named(
              "the cancel check of a worker of queue " + core.queue.name(), this::checkCancelled));
    } catch (RejectedExecutionException e) {
      cancelCheckPending.set(false);
      core.reporter.refused(e);
    }
  }

  /**
   * Reads the records of the jobs this worker holds, in one read; each one an operator cancelled
   * under this worker's lease tells its handler ({@link JobContext.CancelReason#CANCELLED}). The
   * lease itself was revoked by the cancel's commit: what the handler records next is refused.
   */
  void checkCancelled() {
    cancelCheckPending.set(false);
    long heard = cancelsHeard.get();
    List<Lease<S>> leases = new ArrayList<>(core.active.values());
    if (leases.isEmpty()) {
      cancelsSeen.accumulateAndGet(heard, Math::max);
      return;
    }
    List<Key> jobKeys = new ArrayList<>(leases.size());
    for (Lease<S> l : leases) {
      jobKeys.add(core.keys.job(l.id));
    }
    try {
      List<Optional<KvEntry>> records = core.store.getMany(jobKeys);
      for (int i = 0; i < records.size(); i++) {
        Optional<KvEntry> e = records.get(i);
        if (e.isPresent()) {
          JobRecord r = JobRecord.decode(e.get().value());
          if (r.state == JobRecord.State.CANCELLED && r.token == leases.get(i).token) {
            leases.get(i).cancel(JobContext.CancelReason.CANCELLED);
          }
        }
      }
      cancelsSeen.accumulateAndGet(heard, Math::max);
    } catch (RuntimeException e) {
      core.reporter.failing(
          e); // the next renewal finds the cancel, as on a store that can't notify
    }
  }

  /**
   * Looks for cancelled jobs now, on the calling thread, if the store announced a change of the
   * cancelled index that no finished look covers yet: a handler thread about to start a job claimed
   * ahead calls it, so that a cancel this worker has heard of is never started, whether or not the
   * look it scheduled on the executor has run. A look costs one read of the held jobs' records, and
   * only after a cancel was announced.
   */
  void catchUpOnCancels() {
    if (cancelsSeen.get() < cancelsHeard.get()) {
      checkCancelled();
    }
  }

  /**
   * The repeating task: renews every held lease; never throws (a task that throws stops repeating).
   */
  void renewAll() {
    try {
      renewActive();
    } catch (RuntimeException e) {
      core.reporter.failing(e);
    }
  }

  private void renewActive() {
    if (core.phase == WorkerCore.Phase.STOPPED || core.active.isEmpty()) {
      return;
    }
    long now = core.now();
    List<Lease<S>> leases = new ArrayList<>();
    List<Transitions.Applied> plans = new ArrayList<>();
    List<Long> plannedAt = new ArrayList<>();
    for (Lease<S> l : core.active.values()) {
      Optional<Transitions.Holding> held = l.renewable();
      if (held.isEmpty()) {
        continue;
      }
      if (held.get().record().leaseUntil <= now) {
        // Not renewed in time (the store was failing?): someone else may run the job now.
        l.cancel(JobContext.CancelReason.LEASE_LOST);
      }
      if (Transitions.renew(core.keys, held.get(), now, core.leaseMillis)
          instanceof Transitions.Applied plan) {
        leases.add(l);
        plans.add(plan);
        plannedAt.add(held.get().versionstamp());
      }
    }
    if (plans.isEmpty()) {
      return;
    }
    List<CommitResult> results;
    try {
      results = core.store.commitAll(plans.stream().map(Transitions.Applied::operation).toList());
      core.reporter.recovered();
    } catch (RuntimeException e) {
      core.reporter.failing(e);
      return;
    }
    for (int i = 0; i < results.size(); i++) {
      Lease<S> l = leases.get(i);
      if (results.get(i).ok()) {
        l.adopt(plans.get(i).record(), plannedAt.get(i), results.get(i).versionstamp());
      } else if (refused(l)) {
        renewNow(l, now); // the record changed but is still ours: renew it from what we read
      }
    }
  }

  /**
   * A renewal of {@code l} was refused (its record changed since it was planned): true if the lease
   * still holds the job (the record read again is adopted). A job that finished meanwhile is its
   * settler's to record: its completion is what changed the record, and a loss is the settler's to
   * report (it plans from what it holds and finds out itself). Else the lease is reported lost.
   */
  private boolean refused(Lease<S> l) {
    if (l.isFinishing()) {
      return false;
    }
    if (l.refresh()) {
      return true;
    }
    if (!l.isFinishing()) { // it may have finished while the record was read
      core.reporter.leaseLost(l, JobEvent.RefusedOutcome.RENEW);
    }
    return false;
  }

  /** Renews one lease at once (after its record was read again). */
  void renewNow(Lease<S> l, long now) {
    Optional<Transitions.Holding> held = l.renewable();
    if (held.isEmpty()) {
      return;
    }
    if (!(Transitions.renew(core.keys, held.get(), now, core.leaseMillis)
        instanceof Transitions.Applied plan)) {
      core.reporter.leaseLost(l, JobEvent.RefusedOutcome.RENEW);
      return;
    }
    CommitResult result = core.store.commit(plan.operation());
    if (result.ok()) {
      l.adopt(plan.record(), held.get().versionstamp(), result.versionstamp());
    } else {
      refused(l); // still ours: changed again under us, and the next round renews it
    }
  }
}
