package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvEntry;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Settling a job that ran: plans its completion or failure with {@link Transitions} from what its
 * lease holds, submits the operation to the worker's {@link GroupCommitter} (many handler threads'
 * outcomes share one commit, and a handler thread does not wait for it), reports the event after
 * the commit, and plans again (up to {@link Lease#RETRIES} times) when the record changed under it
 * but is still this worker's. An outcome that could not be recorded (its planning threw, or the
 * store failed the commit) is tried again while the worker runs and the lease has time left, after
 * a wait that doubles from {@value #FIRST_WAIT_MILLIS} ms up to {@value #LONGEST_WAIT_MILLIS} ms;
 * only then is it given up, and the job runs again when its lease expires. Also gives back jobs
 * claimed ahead that never ran ({@link #release}).
 *
 * <p>Locking: none of its own. What a lease holds is read under the lease's monitor ({@link
 * Lease#finish()}); planning, the commit's callback and the events run outside every lock, on the
 * handler thread or on the group committer's leader.
 *
 * @param <S> the state type
 */
final class Settler<S> {

  /** The wait before an outcome that could not be recorded is tried again the first time. */
  static final long FIRST_WAIT_MILLIS = 100;

  /** The longest wait between two tries of one outcome. */
  static final long LONGEST_WAIT_MILLIS = 2_000;

  private final WorkerCore<S> core;
  private final GroupCommitter committer;

  /**
   * A settler of the worker {@code core}'s outcomes, which it commits through {@code committer}.
   */
  Settler(WorkerCore<S> core, GroupCommitter committer) {
    this.core = core;
    this.committer = committer;
  }

  /**
   * What a run's outcome is to be: complete, fail (for good when {@code permanent}), or snooze.
   *
   * @param failure what the attempt failed with, or null to complete or snooze; with a snooze, the
   *     error its attempt ends with (a failure after the worker said it is stopping)
   * @param permanent the failure makes the job a dead letter whatever retries it has left
   * @param snoozeMillis for a snooze, the delay; -1 otherwise
   */
  private record Decision(Throwable failure, boolean permanent, long snoozeMillis) {
    boolean snooze() {
      return snoozeMillis >= 0;
    }
  }

  /**
   * Why an outcome is being tried again: how many tries failed, the last failure, whether a
   * planning threw (a bug, logged as one) and whether a commit failed (it may have taken effect).
   */
  private record Trouble(int failures, RuntimeException last, boolean bug, boolean commitFailed) {
    static final Trouble NONE = new Trouble(0, null, false, false);

    /** Planning the outcome threw: a bug, or a class its planning needs could not be loaded. */
    Trouble planning(RuntimeException e) {
      return new Trouble(failures + 1, e, true, commitFailed);
    }

    /** The store failed to read the job again: the outcome was not written. */
    Trouble reading(RuntimeException e) {
      return new Trouble(failures + 1, e, bug, commitFailed);
    }

    /** The store failed the commit: it may have taken effect or not. */
    Trouble committing(RuntimeException e) {
      return new Trouble(failures + 1, e, bug, true);
    }
  }

  /**
   * The outcome of a run from what the handler did: a run over its timeout fails with a {@link
   * JobTimeoutException} whatever it did (retries apply); a failure is for good when the handler
   * said so or threw a type the queue calls non-retryable; any other failure after the worker told
   * the handler {@link JobContext.CancelReason#WORKER_STOPPING} gives the job back, as a snooze of
   * zero whose attempt ends with the failure; a normal return completes, or fails for good, or
   * snoozes, as the handler asked last.
   */
  private Decision decide(Lease<S> lease, Throwable failure) {
    if (lease.overran(core.now())) {
      return new Decision(
          new JobTimeoutException(lease.id, java.time.Duration.ofMillis(lease.timeoutMillis())),
          false,
          -1);
    }
    Lease.Requested asked = lease.requested();
    if (failure != null) {
      boolean permanent = asked instanceof Lease.Permanent;
      for (Class<? extends Throwable> type : core.queue.nonRetryable) {
        permanent |= type.isInstance(failure);
      }
      if (!permanent
          && lease.cancelReason().orElse(null) == JobContext.CancelReason.WORKER_STOPPING) {
        // cut off by the stop, as told: given back, due at once, no retry used
        return new Decision(failure, false, 0);
      }
      return new Decision(failure, permanent, -1);
    }
    if (asked instanceof Lease.Permanent p) {
      return new Decision(new PermanentFailure(p.message()), true, -1);
    }
    if (asked instanceof Lease.Snooze z) {
      return new Decision(null, false, z.delayMillis());
    }
    return new Decision(null, false, -1);
  }

  /** Records the outcome of a job that ran: completed ({@code failure} null) or failed. */
  void settle(Lease<S> lease, Throwable thrown) {
    Optional<Transitions.Holding> held = lease.finish();
    Decision decision = decide(lease, thrown);
    Throwable failure = decision.failure();
    if (held.isEmpty()) {
      traced(lease, JobTracing.Outcome.LEASE_LOST, failure);
      core.settled(lease); // already reported; another worker owns the job now
      return;
    }
    Transitions.Plan plan;
    try {
      plan = plan(lease, held.get(), decision);
    } catch (RuntimeException e) {
      notRecorded(lease, decision, Trouble.NONE.planning(e));
      return;
    }
    submit(lease, decision, plan, 0, Trouble.NONE);
  }

  /**
   * Submits a planned outcome to the group committer, or reports the lease lost.
   *
   * @param conflicts how many times this outcome's commit found its records changed
   */
  private void submit(
      Lease<S> lease, Decision decision, Transitions.Plan plan, int conflicts, Trouble trouble) {
    if (!(plan instanceof Transitions.Applied applied)) {
      lost(lease, decision);
      return;
    }
    committer.submit(
        applied.operation(),
        (result, error) -> committed(lease, decision, applied, result, error, conflicts, trouble));
  }

  /**
   * Reads the job again and submits the outcome planned from what it read. A read or a planning
   * that throws makes the outcome one that could not be recorded ({@link #notRecorded}); a job this
   * lease no longer holds goes to {@code notHeld}.
   */
  private void replan(
      Lease<S> lease, Decision decision, int conflicts, Trouble trouble, Runnable notHeld) {
    boolean held;
    try {
      held = lease.refresh();
    } catch (RuntimeException e) {
      core.reporter.failing(e);
      notRecorded(lease, decision, trouble.reading(e));
      return;
    }
    if (!held) {
      notHeld.run();
      return;
    }
    Transitions.Plan plan;
    try {
      plan = plan(lease, lease.holding(), decision);
    } catch (RuntimeException e) {
      notRecorded(lease, decision, trouble.planning(e));
      return;
    }
    submit(lease, decision, plan, conflicts, trouble);
  }

  private void lost(Lease<S> lease, Decision decision) {
    core.reporter.leaseLost(lease, refused(decision));
    traced(lease, JobTracing.Outcome.LEASE_LOST, decision.failure());
    core.settled(lease);
  }

  /**
   * The outcome could not be recorded. While the worker runs and the job's lease will not have
   * expired by then, it is tried again after a wait ({@link #again}); else it is given up, and the
   * job runs again when its lease expires.
   */
  private void notRecorded(Lease<S> lease, Decision decision, Trouble trouble) {
    long wait =
        Math.min(LONGEST_WAIT_MILLIS, FIRST_WAIT_MILLIS << Math.min(trouble.failures() - 1, 5));
    if (core.running() && core.now() + wait < lease.record().leaseUntil) {
      try {
        core.executor.schedule(
            WorkerCore.named(
                "another try at the outcome of job " + lease.id + " of queue " + core.queue.name(),
                () -> again(lease, decision, trouble)),
            wait,
            TimeUnit.MILLISECONDS);
        core.reporter.tryingAgain(lease, trouble.last(), trouble.bug(), trouble.failures());
        return;
      } catch (RejectedExecutionException e) {
        core.reporter.refused(e);
      }
    }
    giveUp(lease, decision, trouble);
  }

  private void giveUp(Lease<S> lease, Decision decision, Trouble trouble) {
    core.reporter.couldNot("record the outcome of", lease, trouble.last(), trouble.bug());
    traced(lease, JobTracing.Outcome.NOT_RECORDED, decision.failure());
    core.settled(lease);
  }

  /**
   * Tries an outcome again: reads the job again and plans from what it read. A job this lease no
   * longer holds is not tried again: after a failed commit that may be because the commit took
   * effect after all, so the outcome is given up as unknown; else the lease was lost meanwhile.
   */
  private void again(Lease<S> lease, Decision decision, Trouble trouble) {
    if (!core.running()) {
      giveUp(lease, decision, trouble);
      return;
    }
    replan(
        lease,
        decision,
        0,
        trouble,
        trouble.commitFailed()
            ? () -> giveUp(lease, decision, trouble)
            : () -> lost(lease, decision));
  }

  /** Tells the tracing hook how the run ended (before the listeners, so a span ends first). */
  private void traced(Lease<S> lease, JobTracing.Outcome outcome, Throwable failure) {
    core.queue.tracer.end(lease.span, outcome, failure);
  }

  private static JobEvent.RefusedOutcome refused(Decision d) {
    if (d.snooze()) {
      return JobEvent.RefusedOutcome.SNOOZE;
    }
    return d.failure() == null ? JobEvent.RefusedOutcome.COMPLETE : JobEvent.RefusedOutcome.FAIL;
  }

  /** The dead letter a queue that keeps none removed: what the failed event reports. */
  private static JobRecord discarded(JobRecord r, Throwable failure, long now) {
    JobRecord.Draft d = r.draft().state(JobRecord.State.DEAD).leaseUntil(0);
    d.error = error(failure, now);
    d.finishedAt = now;
    return d.build();
  }

  private static JobError error(Throwable failure, long now) {
    return new JobError(
        failure.getClass().getName(),
        Objects.toString(failure.getMessage(), ""),
        Instant.ofEpochMilli(now));
  }

  /** A pause until {@code until}, with the one stored at {@code key} as read now. */
  private Transitions.Pause pause(dev.kvmq.store.Key key, long until) {
    Optional<KvEntry> stored = core.store.get(key);
    return new Transitions.Pause(
        until,
        stored.map(e -> Transitions.decodeTime(e.value())).orElse(0L),
        stored.map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT));
  }

  private Transitions.Plan plan(Lease<S> lease, Transitions.Holding held, Decision decision) {
    long now = core.now();
    GroupBook book =
        GroupReads.book(core.store, core.keys, core.queue.groupLimits(), held.record());
    long pauseUntil = lease.pauseQueueUntil();
    long pauseGroupUntil = lease.pauseGroupUntil();
    if (pauseUntil > 0 || pauseGroupUntil > 0) {
      Transitions.Pause queue = pauseUntil > 0 ? pause(core.keys.startsPaused(), pauseUntil) : null;
      Transitions.Pause group = // pauseGroupStarts refuses a job of no group
          pauseGroupUntil > 0
              ? pause(core.keys.groupPaused(held.record().group), pauseGroupUntil)
              : null;
      return Transitions.defer(core.keys, held, queue, group, book);
    }
    if (decision.snooze()) {
      return Transitions.snooze(
          core.keys,
          held,
          now,
          decision.snoozeMillis(),
          book,
          decision.failure() == null ? null : error(decision.failure(), now));
    }
    Throwable failure = decision.failure();
    if (failure == null) {
      String nextId = held.record().repeatCount != 0 ? core.queue.nextId(now) : null;
      return Transitions.complete(
          core.keys,
          held,
          now,
          nextId,
          core.queue.retention().completed().keepsAny(),
          lease.result(),
          book);
    }
    JobError error = error(failure, now);
    return Transitions.fail(
        core.keys,
        held,
        now,
        error,
        core.queue.random.nextDouble(),
        decision.permanent(),
        core.queue.retention().dead().keepsAny(),
        book);
  }

  private void committed(
      Lease<S> lease,
      Decision decision,
      Transitions.Applied plan,
      CommitResult result,
      RuntimeException error,
      int conflicts,
      Trouble trouble) {
    Throwable failure = decision.failure();
    if (error != null) {
      core.reporter.failing(error);
      notRecorded(lease, decision, trouble.committing(error));
      return;
    }
    if (result.ok()) {
      core.reporter.recovered();
      if (trouble.failures() > 0) {
        core.reporter.recordedAfter(lease, trouble.bug(), trouble.failures() + 1);
      }
      long now = core.now();
      if (lease.pauseQueueUntil() > 0 || lease.pauseGroupUntil() > 0) {
        traced(lease, JobTracing.Outcome.DEFERRED, failure);
      } else if (decision.snooze()) {
        traced(lease, JobTracing.Outcome.SNOOZED, null);
        Job<S> snoozed = core.queue.toJob(plan.record(), now);
        core.reporter.emit(new JobEvent.Snoozed<>(snoozed, snoozed.delayUntil()));
      } else if (failure == null) {
        Optional<Job<S>> next = plan.spawned().map(r -> core.queue.toJob(r, now));
        traced(lease, JobTracing.Outcome.COMPLETED, null);
        JobRecord done = plan.after().orElse(lease.record()); // the kept record, when kept
        core.reporter.emit(new JobEvent.Completed<>(core.queue.toJob(done, now), next));
      } else {
        // removed: the last failure of a queue that keeps no dead letters
        JobRecord after = plan.after().orElseGet(() -> discarded(lease.record(), failure, now));
        boolean dead = after.state == JobRecord.State.DEAD;
        traced(lease, dead ? JobTracing.Outcome.DEAD : JobTracing.Outcome.FAILED, failure);
        core.reporter.emit(
            new JobEvent.Failed<>(
                core.queue.toJob(after, now),
                after.error,
                failure,
                after.state == JobRecord.State.DEAD));
      }
      core.settled(lease);
      return;
    }
    // The record changed since we planned (a renewal landed, or someone else took the job, or
    // an operator cancelled it). A job of a group also checks its group's record, which every
    // job of the group changes: more tries, since another job's commit is no sign that this
    // lease is lost.
    int tries = lease.record().group != null ? QueueCommands.ATOMIC_RETRIES : Lease.RETRIES;
    if (conflicts >= tries) {
      lost(lease, decision);
      return;
    }
    replan(lease, decision, conflicts + 1, trouble, () -> lost(lease, decision));
  }

  /**
   * Gives back a job claimed ahead and not started (the worker is stopping, or the queue is
   * paused): ready again, in its place, with the attempt not counted. A release that fails leaves
   * the job to expire and be reclaimed, as after a crash.
   */
  void release(Lease<S> lease) {
    Optional<Transitions.Holding> held = lease.finish(); // no more renewals
    if (held.isEmpty()
        || !(Transitions.release(core.keys, held.get()) instanceof Transitions.Applied plan)) {
      core.settled(lease);
      return;
    }
    committer.submit(
        plan.operation(),
        (result, error) -> {
          if (error != null || !result.ok()) {
            core.reporter.couldNotRelease(lease);
          }
          core.settled(lease);
        });
  }
}
