package dev.kvmq.jakarta;

import dev.kvmq.Queue;

/**
 * kvmq's metrics, whatever carries them: MicroProfile Metrics ({@link KvmqMetrics}, Payara) or the
 * OpenTelemetry meter ({@link KvmqTelemetry.Meters}, WildFly). The names and units are the same on
 * both, and docs/observability.md lists them; each instrument has the attribute (tag) {@code
 * queue}, the depth also {@code status}.
 */
interface QueueMetrics {

  /** Gauge: the jobs of a queue with a status (waiting, delayed, processing, dead, held). */
  String JOBS = "kvmq.jobs";

  /** Counter: handler runs started. */
  String STARTED = "kvmq.jobs.started";

  /** Counter: completions recorded. */
  String COMPLETED = "kvmq.jobs.completed";

  /** Counter: failures recorded that will be retried. */
  String RETRIED = "kvmq.jobs.retried";

  /** Counter: failures recorded with no retry left (new dead letters). */
  String DEAD = "kvmq.jobs.dead";

  /** Counter: outcomes refused because the lease was lost (expired, taken over), not cancels. */
  String LEASE_LOST = "kvmq.jobs.leaseLost";

  /** Counter: outcomes refused because an operator cancelled the job while it ran. */
  String CANCELLED = "kvmq.jobs.cancelled";

  /** Histogram, whole microseconds: how long handler calls took, whatever their outcome. */
  String DURATION = "kvmq.handler.duration.microseconds";

  /** Histogram, milliseconds: from when a job was due to the start of its handler. */
  String PICKUP = "kvmq.pickup.latency.milliseconds";

  /** Histogram, milliseconds: from when a job was due to its claim by a worker. */
  String CLAIM = "kvmq.claim.latency.milliseconds";

  String JOBS_HELP = "Jobs in a kvmq queue by status, read from the store at each scrape";
  String DURATION_HELP = "Duration of kvmq handler calls in microseconds, whatever their outcome";
  String PICKUP_HELP =
      "Milliseconds from when a kvmq job was due (pushed, or its delay or backoff over) to the start"
          + " of its handler";
  String CLAIM_HELP =
      "Milliseconds from when a kvmq job was due (pushed, or its delay or backoff over) to its claim"
          + " by a worker";

  /** Registers the queue's instruments; a second call for a name does nothing. */
  void register(Queue<?> queue);

  /** A handler run started, that long after the job was due and after it was claimed. */
  void started(String queue, long pickupMillis, long claimMillis);

  void completed(String queue);

  void failed(String queue, boolean dead);

  void leaseLost(String queue);

  /** A running job's outcome was refused because the job was cancelled. */
  void cancelled(String queue);

  /** A handler call took {@code nanos}. */
  void handled(String queue, long nanos);

  /** Removes what was registered: the registry may outlive this application. */
  void close();

  /** Nanoseconds to whole microseconds, rounded to the nearest. */
  static long micros(long nanos) {
    return (nanos + 500) / 1000;
  }
}
