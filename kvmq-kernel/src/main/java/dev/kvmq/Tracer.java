package dev.kvmq;

import java.time.Instant;
import java.util.Map;

/**
 * A queue's {@link JobTracing} hook, guarded: what the hook throws is logged once per queue (the
 * first time) and otherwise ignored, so a broken tracer never loses a push or fails a job.
 *
 * <p>Locking: none; the logged flag is volatile (two threads failing at once may both log: a second
 * line, never a lost one).
 */
final class Tracer {

  private static final System.Logger LOG = System.getLogger(JobTracing.class.getName());

  private final String queue;
  private final JobTracing hook;
  private final boolean none;
  private volatile boolean failed;

  /** The hook, for a copy of the queue on another store. */
  JobTracing hook() {
    return hook;
  }

  Tracer(String queue, JobTracing hook) {
    this.queue = queue;
    this.hook = hook;
    this.none = hook == NoTracing.INSTANCE;
  }

  /** The caller's context for a push; empty when there is none or the hook failed. */
  Map<String, String> pushContext() {
    if (none) {
      return Map.of();
    }
    try {
      Map<String, String> context = hook.pushContext(queue);
      return context == null ? Map.of() : Map.copyOf(context);
    } catch (RuntimeException e) {
      failed("pushContext", e);
      return Map.of();
    }
  }

  /** The span of a handler run; a no-op one when there is no hook or it failed. */
  JobTracing.Span started(Job<?> job, Map<String, String> context, long claimedAt, long now) {
    if (none) {
      return NoTracing.SPAN;
    }
    try {
      JobTracing.Span span =
          hook.started(
              new JobTracing.Run(
                  job, context, Instant.ofEpochMilli(claimedAt), Instant.ofEpochMilli(now)));
      return span == null ? NoTracing.SPAN : span;
    } catch (RuntimeException e) {
      failed("started", e);
      return NoTracing.SPAN;
    }
  }

  /** Tells the span the handler returned; ignores what it throws (after logging it once). */
  void detach(JobTracing.Span span) {
    if (span == NoTracing.SPAN) {
      return;
    }
    try {
      span.detach();
    } catch (RuntimeException e) {
      failed("detach", e);
    }
  }

  /** Ends the span; ignores what it throws (after logging it once). */
  void end(JobTracing.Span span, JobTracing.Outcome outcome, Throwable error) {
    if (span == NoTracing.SPAN) {
      return;
    }
    try {
      span.end(outcome, error);
    } catch (RuntimeException e) {
      failed("end", e);
    }
  }

  private void failed(String call, RuntimeException e) {
    if (!failed) {
      failed = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "the tracing hook of queue "
              + queue
              + " failed in "
              + call
              + " and is ignored (jobs go on; further failures of it are not logged): "
              + e,
          e);
    }
  }

  /** The hook that does nothing, and its span. */
  static final class NoTracing implements JobTracing {

    static final NoTracing INSTANCE = new NoTracing();

    static final JobTracing.Span SPAN = (outcome, error) -> {};

    private NoTracing() {}

    @Override
    public Map<String, String> pushContext(String queue) {
      return Map.of();
    }

    @Override
    public JobTracing.Span started(JobTracing.Run run) {
      return SPAN;
    }

    @Override
    public String toString() {
      return "JobTracing.none()";
    }
  }
}
