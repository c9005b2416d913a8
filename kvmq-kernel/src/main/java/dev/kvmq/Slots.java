package dev.kvmq;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Handler slots and the jobs claimed ahead: up to {@code concurrency} handlers run at once, each on
 * an executor thread; claimed jobs wait, leased and in queue order, for a free slot. A handler
 * thread that finishes a job takes the next waiting one at once, on the same thread, and asks for a
 * pass once half the prefetch is used (not after every job); it gives its slot back when none is
 * waiting.
 *
 * <p>Locking: none; lock-free counters. A slot is taken by a compare-and-set on {@code running}
 * before a job is taken from {@code waiting}, and given back if there was none; {@code
 * waitingCount} is the queue's size (its own size() counts nodes). While the queue is paused (or a
 * pause is in doubt: {@link Pass#pausedSeen()}) or the worker is not running, no waiting job is
 * started.
 *
 * @param <S> the state type
 */
final class Slots<S> {

  private final WorkerCore<S> core;
  private final JobHandler<S> handler;
  private final Settler<S> settler;
  private final Renewer<S> renewer;
  private Pass<S> pass;

  /** Handler slots taken. */
  private final AtomicInteger running = new AtomicInteger();

  /**
   * Jobs claimed ahead, in queue order, waiting for a handler slot; also in {@code core.active}.
   */
  private final ConcurrentLinkedQueue<Lease<S>> waiting = new ConcurrentLinkedQueue<>();

  private final AtomicInteger waitingCount = new AtomicInteger();

  /** Idle handler slots promised to jobs being handed off by a push ({@link Handoff}). */
  private final AtomicInteger reserved = new AtomicInteger();

  Slots(WorkerCore<S> core, JobHandler<S> handler, Settler<S> settler, Renewer<S> renewer) {
    this.core = core;
    this.handler = handler;
    this.settler = settler;
    this.renewer = renewer;
  }

  /** Connects the pass this worker's handlers ask for (made after the slots). */
  void attach(Pass<S> pass) {
    this.pass = pass;
  }

  /**
   * How many jobs a pass claims now: all it has room for ({@link #wanted()}) while a handler slot
   * would stay idle without them; once every slot is running or has a job waiting for it, none
   * until half the jobs claimed ahead are used, the moment a handler asks for a pass ({@link
   * #run}). So a busy worker refills its prefetch in claims of at least half of it, however often
   * the ready index changes (every claim of every node announces one); claims of a few jobs each
   * would cost a commit each.
   */
  int toClaim() {
    int wanted = wanted();
    int idle = core.options.concurrency() - running.get() - waitingCount.get() - reserved.get();
    if (idle > 0) {
      return wanted;
    }
    int prefetch = core.options.prefetch();
    return wanted >= prefetch - prefetch / 2 ? wanted : 0;
  }

  /** How many more jobs the worker may hold: free slots plus room among the waiting ones. */
  int wanted() {
    return core.options.concurrency()
        + core.options.prefetch()
        - running.get()
        - waitingCount.get()
        - reserved.get();
  }

  /**
   * Promises an idle handler slot to a job a push is handing off: true if one was idle (no job
   * running on it, waiting for it, or promised), and then passes claim one job fewer until {@link
   * #unreserve}. Promises never outnumber the slots; a slot taken by a handler thread at the same
   * moment may leave a handed-off job waiting for the next free slot, like a job claimed ahead.
   */
  boolean reserve() {
    while (true) {
      int r = reserved.get();
      if (running.get() + waitingCount.get() + r >= core.options.concurrency()) {
        return false;
      }
      if (reserved.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  /** A promise of {@link #reserve} ends: its job was offered, or the push kept it. */
  void unreserve() {
    reserved.decrementAndGet();
  }

  /** Queues a claimed job for a slot. */
  void offer(Lease<S> lease) {
    waiting.add(lease);
    waitingCount.incrementAndGet();
  }

  /**
   * Starts waiting jobs on the executor while handler slots are free; false if the executor refused
   * one (it is shut down: that job stays leased to this worker until its lease expires).
   */
  boolean dispatch() {
    while (core.running() && !pass.pausedSeen()) {
      int taken = running.get();
      if (taken >= core.options.concurrency() || waitingCount.get() == 0) {
        return true;
      }
      if (!running.compareAndSet(taken, taken + 1)) {
        continue;
      }
      Lease<S> lease = take();
      if (lease == null) {
        // another thread took it; give the slot back and look again, so that a job queued
        // while this thread held the slot is not left waiting
        running.decrementAndGet();
        continue;
      }
      try {
        core.executor.execute(
            WorkerCore.named(
                "a handler slot of queue "
                    + core.queue.name()
                    + ", from job "
                    + lease.id
                    + " (attempt "
                    + lease.attempt
                    + ")",
                () -> run(lease)));
      } catch (RejectedExecutionException e) {
        core.reporter.refusedJob(lease, e);
        running.decrementAndGet();
        core.settled(lease);
        return false;
      }
    }
    return true;
  }

  /**
   * Gives back every waiting job (the worker is stopping, or the queue is paused): see {@link
   * Settler#release}.
   */
  void releaseWaiting() {
    Lease<S> lease;
    while ((lease = take()) != null) {
      settler.release(lease);
    }
  }

  private Lease<S> take() {
    Lease<S> lease = waiting.poll();
    if (lease != null) {
      waitingCount.decrementAndGet();
    }
    return lease;
  }

  /**
   * Runs a job on the slot taken for it, then, while the worker runs, the waiting jobs one after
   * the other on this thread; gives the slot back when none is left.
   */
  private void run(Lease<S> first) {
    Lease<S> lease = first;
    try {
      while (lease != null) {
        if (!stillHeld(lease)) {
          core.settled(lease);
        } else {
          Throwable failure = handle(lease);
          settler.settle(lease, failure);
          if (failure instanceof VirtualMachineError e) {
            throw e;
          }
        }
        lease = core.running() && !pass.pausedSeen() ? take() : null;
        if (lease != null && waitingCount.get() <= core.options.prefetch() / 2) {
          pass.request(); // refill once half the prefetch is used, not after every job
        }
      }
    } finally {
      running.decrementAndGet();
      if (core.running()) {
        dispatch(); // a job queued while this thread held the slot
        pass.request();
      }
    }
  }

  /**
   * Whether this worker still holds a job it is about to run. A job claimed ahead may have waited
   * long: if its renewal was refused, or its lease ran out (renewals failing) and another worker
   * took it, it is not run.
   */
  private boolean stillHeld(Lease<S> lease) {
    long now = core.now();
    if (lease.isLost()) {
      return false;
    }
    renewer.catchUpOnCancels();
    if (lease.cancelReason().orElse(null) == JobContext.CancelReason.CANCELLED) {
      core.reporter.leaseLost(lease, JobEvent.RefusedOutcome.START); // cancelled while it waited
      return false;
    }
    if (lease.record().leaseUntil > now) {
      return true;
    }
    try {
      if (!lease.refresh()) {
        core.reporter.leaseLost(lease, JobEvent.RefusedOutcome.START);
        return false;
      }
      renewer.renewNow(lease, now);
    } catch (RuntimeException e) {
      // the store is failing: run it anyway; its outcome is refused if someone else has it
      core.reporter.failing(e);
      return true;
    }
    return !lease.isLost();
  }

  private Throwable handle(Lease<S> lease) {
    JobRecord r = lease.record();
    long now = core.now();
    S state = null;
    Throwable failure = null;
    try {
      state = core.queue.codec.decode(r.payload.clone());
    } catch (RuntimeException e) {
      failure = e;
    }
    Job<S> job =
        failure == null
            ? Job.of(core.queue.name(), r, state, now)
            : Job.undecodable(core.queue.name(), r, now);
    Tracer tracer = core.queue.tracer;
    JobTracing.Span span = tracer.started(job, r.traceContext, lease.claimedAt, now);
    lease.span = span;
    lease.running(Thread.currentThread(), now);
    ScheduledFuture<?> timer = failure == null ? startTimer(lease) : null;
    try {
      if (failure == null) {
        handler.handle(job, lease);
      }
      return failure;
    } catch (Throwable t) {
      return t;
    } finally {
      if (timer != null) {
        timer.cancel(false);
      }
      lease.ran();
      tracer.detach(span);
    }
  }

  /**
   * Schedules the run's timeout on the worker's executor (its clock: a test's {@link
   * dev.kvmq.testkit.ManualScheduler} runs it when its time comes), or null when the job has none.
   */
  private ScheduledFuture<?> startTimer(Lease<S> lease) {
    long timeout = lease.timeoutMillis();
    if (timeout < 0) {
      return null;
    }
    try {
      return core.executor.schedule(
          WorkerCore.named(
              "the timeout of job " + lease.id + " of queue " + core.queue.name(), lease::timeOut),
          timeout,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      core.reporter.refused(e); // the run goes on without a timeout; the worker is stopping
      return null;
    }
  }
}
