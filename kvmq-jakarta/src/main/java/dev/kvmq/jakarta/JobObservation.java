package dev.kvmq.jakarta;

import dev.kvmq.JobTracing;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The kernel's {@link JobTracing} hook of one application's queues: the server's tracing ({@link
 * KvmqTelemetry}, where there is one) and the start of each run for the metrics (the counter of
 * started runs, the pickup and claim latencies).
 */
final class JobObservation implements JobTracing {

  private final JobTracing tracing;
  private final Supplier<QueueMetrics> metrics;

  /**
   * @param tracing the server's tracing, or {@link JobTracing#none()}
   * @param metrics the metrics now (null where the server has none, or after shutdown)
   */
  JobObservation(JobTracing tracing, Supplier<QueueMetrics> metrics) {
    this.tracing = tracing;
    this.metrics = metrics;
  }

  @Override
  public Map<String, String> pushContext(String queue) {
    return tracing.pushContext(queue);
  }

  @Override
  public Span started(Run run) {
    QueueMetrics m = metrics.get();
    if (m != null) {
      long due = run.job().delayUntil().toEpochMilli();
      m.started(
          run.job().queue(),
          Math.max(0, run.startedAt().toEpochMilli() - due),
          Math.max(0, run.claimedAt().toEpochMilli() - due));
    }
    return tracing.started(run);
  }

  @Override
  public String toString() {
    return "JobObservation[" + tracing + "]";
  }
}
