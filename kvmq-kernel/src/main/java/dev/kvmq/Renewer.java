package dev.kvmq;

import dev.kvmq.store.CommitResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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

  Renewer(WorkerCore<S> core) {
    this.core = core;
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
      } else if (l.refresh()) {
        renewNow(l, now); // the record changed but is still ours: renew it from what we read
      } else {
        core.reporter.leaseLost(l, JobEvent.RefusedOutcome.RENEW);
      }
    }
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
    } else if (!l.refresh()) {
      core.reporter.leaseLost(l, JobEvent.RefusedOutcome.RENEW);
    } // else: changed again under us; the next round renews it
  }
}
