package dev.kvmq.jakarta;

import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.Histogram;
import org.eclipse.microprofile.metrics.Metadata;
import org.eclipse.microprofile.metrics.MetricID;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.MetricUnits;
import org.eclipse.microprofile.metrics.Tag;

/**
 * kvmq's metrics in the application's MicroProfile Metrics registry (Payara 6 and 7 have it; their
 * {@code /metrics} endpoint shows them in the Prometheus format). For each queue, tagged {@code
 * queue=<name>}:
 *
 * <ul>
 *   <li>{@code kvmq.jobs} (gauge, tag {@code status}: waiting, delayed, processing, dead, held):
 *       the queue's depth, read from its indexes at each scrape;
 *   <li>{@code kvmq.jobs.started} (counter): handler runs started; {@code kvmq.jobs.completed},
 *       {@code kvmq.jobs.retried}, {@code kvmq.jobs.dead}, {@code kvmq.jobs.leaseLost}, {@code
 *       kvmq.jobs.cancelled} (counters): outcomes of this application's workers since it started
 *       ({@code retried} and {@code dead} are the two kinds of failed attempt; {@code leaseLost}
 *       counts outcomes refused because the lease ran out or was taken over, {@code cancelled}
 *       those refused because an operator cancelled the running job);
 *   <li>{@code kvmq.handler.duration.microseconds} (histogram, unit none): how long handler calls
 *       took, whatever their outcome, in whole microseconds;
 *   <li>{@code kvmq.pickup.latency.milliseconds} and {@code kvmq.claim.latency.milliseconds}
 *       (histograms, unit none): from when a job was due to the start of its handler, and to its
 *       claim, in milliseconds (the queue's clock).
 * </ul>
 *
 * <p>Why a histogram of microseconds and not a MicroProfile {@code Timer}: Payara's exporter
 * (6.2025.10) prints a timer's {@code _max} and {@code _sum} in seconds but its quantiles
 * unconverted, in nanoseconds, under the same {@code _seconds} name (every Payara timer has the
 * default percentile configuration, whose printing skips the unit conversion). With unit none
 * nothing is converted, so every figure of the histogram (quantiles, max, mean, sum) is in the unit
 * its name says.
 *
 * <p>Loaded only after {@link #available()} said the API is there, so that kvmq deploys on servers
 * without MicroProfile Metrics (WildFly ships Micrometer and OpenTelemetry instead: there, {@link
 * KvmqTelemetry.Meters} has the same metrics on the OpenTelemetry meter).
 */
final class KvmqMetrics implements QueueMetrics {

  private static final System.Logger LOG = System.getLogger(KvmqMetrics.class.getName());

  // Injected: Payara's registry producer needs a real injection point, not a lookup.
  @Inject MetricRegistry registry;

  private final List<MetricID> registered = new ArrayList<>();
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Map<String, Histogram> durations = new ConcurrentHashMap<>();
  private final Map<String, Histogram> pickups = new ConcurrentHashMap<>();
  private final Map<String, Histogram> claims = new ConcurrentHashMap<>();

  /** Made by CDI: {@link KvmqExtension} adds this class as a bean where the API is there. */
  KvmqMetrics() {}

  /** True if the server has the MicroProfile Metrics API. Touches no class of it. */
  static boolean available() {
    try {
      Class.forName(
          "org.eclipse.microprofile.metrics.MetricRegistry",
          false,
          KvmqMetrics.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * kvmq's metrics in the application's registry, or null if the server has the API but no
   * registry. Call only when {@link #available()}.
   */
  static KvmqMetrics open(BeanManager beans) {
    try {
      var metrics = beans.createInstance().select(KvmqMetrics.class);
      if (!metrics.isResolvable()) {
        LOG.log(
            System.Logger.Level.INFO,
            "kvmq: no MetricRegistry bean; metrics are only in the admin API");
        return null;
      }
      return metrics.get();
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.INFO,
          "kvmq: MicroProfile Metrics unusable; metrics are only in the admin API",
          e);
      return null;
    }
  }

  /**
   * Registers the queue's gauges, counters and histogram; a second call for a name does nothing.
   */
  @Override
  public synchronized void register(Queue<?> queue) {
    String name = queue.name();
    if (durations.containsKey(name)) {
      return;
    }
    Tag q = new Tag("queue", name);
    gauge(queue, q, "waiting", QueueCounts::waiting);
    gauge(queue, q, "delayed", QueueCounts::delayed);
    gauge(queue, q, "processing", QueueCounts::processing);
    gauge(queue, q, "dead", QueueCounts::dead);
    gauge(queue, q, "held", QueueCounts::held);
    for (String outcome :
        List.of("started", "completed", "retried", "dead", "leaseLost", "cancelled")) {
      String metric = "kvmq.jobs." + outcome;
      registered.add(new MetricID(metric, q));
      counters.put(
          name + '\0' + outcome,
          registry.counter(
              Metadata.builder()
                  .withName(metric)
                  .withDescription(
                      "kvmq jobs " + outcome + " by this application's workers since it started")
                  .withUnit(MetricUnits.NONE)
                  .build(),
              q));
    }
    durations.put(name, histogram(q, DURATION, DURATION_HELP));
    pickups.put(name, histogram(q, PICKUP, PICKUP_HELP));
    claims.put(name, histogram(q, CLAIM, CLAIM_HELP));
  }

  private Histogram histogram(Tag q, String metric, String help) {
    registered.add(new MetricID(metric, q));
    return registry.histogram(
        Metadata.builder()
            .withName(metric)
            .withDescription(help)
            .withUnit(MetricUnits.NONE)
            .build(),
        q);
  }

  private void gauge(Queue<?> queue, Tag q, String status, ToLongFunction<QueueCounts> count) {
    Tag s = new Tag("status", status);
    registered.add(new MetricID(JOBS, q, s));
    registry.gauge(
        Metadata.builder()
            .withName(JOBS)
            .withDescription(JOBS_HELP)
            .withUnit(MetricUnits.NONE)
            .build(),
        queue,
        qu -> depth(qu, count),
        q,
        s);
  }

  private static Double depth(Queue<?> queue, ToLongFunction<QueueCounts> count) {
    try {
      return (double) count.applyAsLong(queue.counts());
    } catch (RuntimeException e) {
      return Double.NaN; // the store is closed or away: the readiness check says why
    }
  }

  private void inc(String queue, String outcome) {
    Counter c = counters.get(queue + '\0' + outcome);
    if (c != null) {
      c.inc();
    }
  }

  @Override
  public void started(String queue, long pickupMillis, long claimMillis) {
    inc(queue, "started");
    update(pickups, queue, pickupMillis);
    update(claims, queue, claimMillis);
  }

  @Override
  public void completed(String queue) {
    inc(queue, "completed");
  }

  @Override
  public void failed(String queue, boolean dead) {
    inc(queue, dead ? "dead" : "retried");
  }

  @Override
  public void leaseLost(String queue) {
    inc(queue, "leaseLost");
  }

  @Override
  public void cancelled(String queue) {
    inc(queue, "cancelled");
  }

  @Override
  public void handled(String queue, long nanos) {
    update(durations, queue, QueueMetrics.micros(nanos));
  }

  private static void update(Map<String, Histogram> histograms, String queue, long value) {
    Histogram h = histograms.get(queue);
    if (h != null) {
      h.update(value);
    }
  }

  /** Removes what {@link #register} added: the registry may outlive this application. */
  @Override
  public synchronized void close() {
    for (MetricID id : registered) {
      try {
        registry.remove(id);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "removing " + id + " failed", e);
      }
    }
    registered.clear();
    counters.clear();
    durations.clear();
    pickups.clear();
    claims.clear();
  }
}
