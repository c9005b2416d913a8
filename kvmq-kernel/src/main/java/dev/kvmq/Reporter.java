package dev.kvmq;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What a {@link Worker} tells: its {@link JobEvent}s to its listeners, and its outages to the log,
 * one line when one begins and one when it ends (a failing store, an executor that refuses work),
 * never one per pass or per job.
 *
 * <p>Locking: none. Listeners are a copy-on-write list; the outage flags are volatile (two threads
 * seeing an outage begin at once may both log it: a second line, never a lost one).
 *
 * @param <S> the state type
 */
final class Reporter<S> {

  private static final System.Logger LOG = System.getLogger(Worker.class.getName());

  private final Queue<S> queue;
  private final WorkerOptions options;
  private final List<Consumer<? super JobEvent<S>>> listeners = new CopyOnWriteArrayList<>();
  private final BooleanSupplier stopping;
  private volatile boolean storeFailing;
  private volatile boolean executorRefused;

  Reporter(Queue<S> queue, WorkerOptions options, BooleanSupplier stopping) {
    this.stopping = stopping;
    this.queue = queue;
    this.options = options;
  }

  void addListener(Consumer<? super JobEvent<S>> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Tells every listener; what one throws is logged and ignored. */
  void emit(JobEvent<S> event) {
    for (Consumer<? super JobEvent<S>> l : listeners) {
      try {
        l.accept(event);
      } catch (RuntimeException e) {
        LOG.log(
            System.Logger.Level.ERROR,
            "a job listener of queue "
                + queue.name()
                + " failed on job "
                + event.job().id()
                + "; ignored",
            e);
      }
    }
  }

  /**
   * The worker lost its lease on {@code lease}'s job: the lease is marked lost, its handler told,
   * and (the first time only) the loss logged and reported.
   */
  void leaseLost(Lease<S> lease, JobEvent.RefusedOutcome outcome) {
    // read before lose(), which marks an uncancelled lease LEASE_LOST
    boolean cancelled = lease.cancelReason().orElse(null) == JobContext.CancelReason.CANCELLED;
    if (lease.lose()) {
      // an operator's cancel is not an outage: said at DEBUG
      LOG.log(
          cancelled ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
          "lost the lease on job "
              + lease.id
              + " of queue "
              + queue.name()
              + " (token "
              + lease.token
              + "); its "
              + outcome.word()
              + " was refused");
      emit(
          new JobEvent.LeaseLost<>(
              queue.toJob(lease.record(), queue.clock.millis()), outcome, cancelled));
    }
  }

  /** The executor refuses work (it was shut down): said once, not on every wake-up. */
  void refused(RejectedExecutionException e) {
    if (!executorRefused) {
      executorRefused = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "the executor refuses the worker of queue "
              + queue.name()
              + "; it processes nothing until the executor accepts work again (stop the worker before its executor)",
          e);
    }
  }

  /**
   * The executor refused to run a claimed job; it runs again when its lease expires. The outage is
   * said once ({@link #refused}); the job at DEBUG.
   */
  void refusedJob(Lease<S> lease, RejectedExecutionException e) {
    refused(e);
    LOG.log(
        System.Logger.Level.DEBUG,
        () ->
            "executor refused job "
                + lease.id
                + " of queue "
                + queue.name()
                + "; it runs again when its lease expires");
  }

  /**
   * The store failed: said once per outage. While the worker stops it keeps trying nothing, and an
   * application that stops closes its store, under the outcomes of handlers still running: so then
   * an INFO without the stack trace.
   */
  void failing(RuntimeException e) {
    if (!storeFailing) {
      storeFailing = true;
      if (stopping.getAsBoolean()) {
        LOG.log(
            System.Logger.Level.INFO,
            "the store of queue "
                + queue.name()
                + " failed while its worker was stopping ("
                + e
                + "); the jobs whose outcomes it could not record run again when their leases"
                + " expire");
        return;
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "the store of queue "
              + queue.name()
              + " is failing; the worker keeps trying every "
              + options.pollInterval(),
          e);
    }
  }

  /** The store works: ends an outage, if one was logged. */
  void recovered() {
    if (storeFailing) {
      storeFailing = false;
      LOG.log(System.Logger.Level.INFO, "the store of queue " + queue.name() + " works again");
    }
  }

  /** Logs (at DEBUG: it is no outage) a job claimed ahead that could not be given back. */
  void couldNotRelease(Lease<S> lease) {
    LOG.log(
        System.Logger.Level.DEBUG,
        () ->
            "could not put back job "
                + lease.id
                + " of queue "
                + queue.name()
                + "; it runs again when its lease expires");
  }

  /**
   * Logs an outcome that could not be recorded and will be tried again. The first failure of a
   * planning (a bug, or a class that could not be loaded) is a WARNING with its stack trace; a
   * store failure is part of an outage, said once by {@link #failing}, so it and every later try
   * are at DEBUG.
   */
  void tryingAgain(Lease<S> lease, Throwable why, boolean bug, int failures) {
    System.Logger.Level level =
        bug && failures == 1 ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
    if (!LOG.isLoggable(level)) {
      return;
    }
    LOG.log(
        level,
        "could not record the outcome of job "
            + lease.id
            + " of queue "
            + queue.name()
            + " (try "
            + failures
            + "); trying again while its lease lasts",
        why);
  }

  /**
   * Logs an outcome recorded after tries that failed: at INFO when a planning had failed (its
   * WARNING needs an end), else at DEBUG (the outage's end is said by {@link #recovered}).
   */
  void recordedAfter(Lease<S> lease, boolean bug, int tries) {
    System.Logger.Level level = bug ? System.Logger.Level.INFO : System.Logger.Level.DEBUG;
    LOG.log(
        level,
        () ->
            "recorded the outcome of job "
                + lease.id
                + " of queue "
                + queue.name()
                + " at try "
                + tries);
  }

  /**
   * Logs a job the worker could not record or start; it runs again when its lease expires. A bug
   * ({@code error}) is an ERROR with its stack trace; a store failure is part of an outage, said
   * once by {@link #failing}, so the job is at DEBUG.
   */
  void couldNot(String what, Lease<S> lease, Throwable why, boolean error) {
    System.Logger.Level level = error ? System.Logger.Level.ERROR : System.Logger.Level.DEBUG;
    if (!LOG.isLoggable(level)) {
      return;
    }
    LOG.log(
        level,
        "could not "
            + what
            + " job "
            + lease.id
            + " of queue "
            + queue.name()
            + "; it runs again when its lease expires",
        why);
  }
}
