package dev.kvmq;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A tracing hook: how a queue carries its callers' trace context from a push to every run of the
 * job, for a tracer the kernel does not know (kvmq-jakarta fills it in with OpenTelemetry where the
 * server has MicroProfile Telemetry). Given to {@link Queue.Builder#tracing(JobTracing)}; the
 * default, {@link #none()}, stores nothing and costs nothing.
 *
 * <ul>
 *   <li>At each push, on the caller's thread, {@link #pushContext(String)} returns the caller's
 *       context as text, the way a W3C {@code traceparent}/{@code tracestate} carrier holds it; it
 *       is stored with the job and kept through its retries, so every attempt links to the same
 *       push.
 *   <li>Before each handler call, on the handler's thread, {@link #started(Run)} gets the job and
 *       the stored context and returns a {@link Span}. The worker calls {@link Span#detach()} on
 *       the same thread right after the handler returns (or throws), and {@link Span#end} once,
 *       when the outcome is known: after the commit that recorded it, on whatever thread ran that
 *       commit.
 * </ul>
 *
 * <p>A hook must be thread-safe and quick. What it throws is logged once per queue and otherwise
 * ignored: a push still stores its job (with no context), a handler still runs and its outcome is
 * still recorded.
 */
public interface JobTracing {

  /**
   * Returns the caller's trace context, to be stored with the job being pushed.
   *
   * @param queue the queue's name
   * @return the context's fields (such as {@code traceparent}); empty for none
   */
  Map<String, String> pushContext(String queue);

  /**
   * A handler is about to run a job.
   *
   * @param run the job and what the worker knows of this run
   * @return what the worker tells when the handler returns and when the outcome is recorded
   */
  Span started(Run run);

  /**
   * The hook that does nothing: no context is stored, no span made.
   *
   * @return the no-op hook
   */
  static JobTracing none() {
    return Tracer.NoTracing.INSTANCE;
  }

  /**
   * One run of a job's handler, as the worker starts it.
   *
   * @param job the job as claimed (its queue, id, attempt)
   * @param traceContext the context stored by its push; empty if there was none
   * @param claimedAt when this worker claimed the job (its lease began)
   * @param startedAt when the handler is called, from the queue's clock
   */
  record Run(Job<?> job, Map<String, String> traceContext, Instant claimedAt, Instant startedAt) {

    /**
     * Checks and copies the fields.
     *
     * @param job the job as claimed
     * @param traceContext the context stored by its push
     * @param claimedAt when this worker claimed the job
     * @param startedAt when the handler is called
     * @throws NullPointerException if an argument is null
     */
    public Run {
      Objects.requireNonNull(job, "job");
      traceContext = Map.copyOf(traceContext);
      Objects.requireNonNull(claimedAt, "claimedAt");
      Objects.requireNonNull(startedAt, "startedAt");
    }
  }

  /** What a handler run ended with, once recorded. */
  enum Outcome {
    /** The handler returned and the completion was recorded. */
    COMPLETED,
    /** The handler threw; the failure was recorded and the job will run again after its backoff. */
    FAILED,
    /** The handler threw with no retries left: the job is a dead letter now. */
    DEAD,
    /**
     * The outcome was refused: the lease was lost (renewals failed or another worker took the job),
     * so another run decides.
     */
    LEASE_LOST,
    /**
     * Recording the outcome failed (the store failed, or planning it threw) on every try while the
     * lease lasted, or the worker was stopping: the job runs again when its lease expires.
     */
    NOT_RECORDED,
    /**
     * The handler paused the queue's starts ({@link JobContext#pauseQueueStarts}) or its group's
     * ({@link JobContext#pauseGroupStarts}): the job waits, its attempt not counted, until the
     * pause ends.
     */
    DEFERRED,
    /**
     * The handler put its job back for a while ({@link JobContext#snooze}) and the snooze was
     * recorded: it runs again later, without having used a retry.
     */
    SNOOZED
  }

  /** A handler run, as the hook follows it. */
  interface Span {

    /**
     * Called on the handler's thread right after the handler returned or threw: undo what {@link
     * #started} made current on this thread. Does nothing by default.
     */
    default void detach() {}

    /**
     * Called once, when the run's outcome is known.
     *
     * @param outcome what happened
     * @param error what the handler threw, or null if it returned
     */
    void end(Outcome outcome, Throwable error);
  }
}
