package dev.kvmq.jakarta;

import dev.kvmq.JobTracing;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongGauge;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import jakarta.enterprise.inject.spi.BeanManager;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * kvmq on OpenTelemetry, where the server provides it through MicroProfile Telemetry (WildFly with
 * its {@code microprofile-telemetry} subsystem, Payara 7): traces through the kernel's {@link
 * JobTracing} hook, and, where the server has no MicroProfile Metrics (WildFly), kvmq's metrics on
 * the OpenTelemetry {@link Meter}, with the names and units of {@link KvmqMetrics}.
 *
 * <ul>
 *   <li>A push stores the caller's current context (the request's span, for a push from a traced
 *       JAX-RS request) in the server's propagation format (W3C {@code traceparent} and {@code
 *       tracestate} by default).
 *   <li>Each handler run is a span {@code process <queue>} of kind {@code CONSUMER}, a child of the
 *       stored context (so every attempt of a job is in the trace of its push), current on the
 *       handler's thread while the handler runs, with the attributes {@code messaging.system=kvmq},
 *       {@code messaging.destination.name} (the queue), {@code messaging.message.id} (the job id),
 *       {@code messaging.operation.type=process}, {@code kvmq.job.attempt} and, when it ends,
 *       {@code kvmq.job.outcome} (completed, failed, dead, lease_lost, not_recorded); a failed run
 *       has status ERROR and the handler's exception as an event.
 * </ul>
 *
 * <p>Loaded only after {@link #AVAILABLE} said the API is there (no class of it is touched
 * otherwise), so that kvmq deploys on servers without it (Payara 6, WildFly without the subsystem).
 */
final class KvmqTelemetry implements JobTracing {

  private static final System.Logger LOG = System.getLogger(KvmqTelemetry.class.getName());

  /** The class whose presence says the server gives the application OpenTelemetry. */
  static final String API = "io.opentelemetry.api.OpenTelemetry";

  /** The instrumentation scope of kvmq's spans and metrics. */
  static final String SCOPE = "dev.kvmq";

  static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
  static final AttributeKey<String> DESTINATION =
      AttributeKey.stringKey("messaging.destination.name");
  static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
  static final AttributeKey<String> OPERATION_TYPE =
      AttributeKey.stringKey("messaging.operation.type");
  static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("kvmq.job.attempt");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("kvmq.job.outcome");
  static final AttributeKey<String> QUEUE = AttributeKey.stringKey("queue");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("status");

  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  private final OpenTelemetry otel;
  private final Tracer tracer;
  private final TextMapPropagator propagator;

  KvmqTelemetry(OpenTelemetry otel) {
    this.otel = otel;
    this.tracer = otel.getTracer(SCOPE);
    this.propagator = otel.getPropagators().getTextMapPropagator();
  }

  /** True if the application sees the OpenTelemetry API. Touches no class of it. */
  static boolean available() {
    try {
      Class.forName(API, false, KvmqTelemetry.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * The server's OpenTelemetry (a CDI bean of MicroProfile Telemetry), or null if there is none.
   * Call only when {@link #available()}.
   */
  static KvmqTelemetry open(BeanManager beans) {
    try {
      var instance = beans.createInstance().select(OpenTelemetry.class);
      if (!instance.isResolvable()) {
        LOG.log(System.Logger.Level.DEBUG, "kvmq: no OpenTelemetry bean; jobs are not traced");
        return null;
      }
      return new KvmqTelemetry(instance.get());
    } catch (RuntimeException | LinkageError e) {
      LOG.log(
          System.Logger.Level.INFO,
          "kvmq: OpenTelemetry unusable; jobs are not traced (" + e + ")");
      return null;
    }
  }

  @Override
  public Map<String, String> pushContext(String queue) {
    Map<String, String> carrier = new HashMap<>();
    propagator.inject(Context.current(), carrier, Map::put);
    return carrier;
  }

  @Override
  public JobTracing.Span started(Run run) {
    Context parent = propagator.extract(Context.root(), run.traceContext(), GETTER);
    String queue = run.job().queue();
    // fully qualified: JobTracing.Span, inherited, hides the imported name
    io.opentelemetry.api.trace.Span span =
        tracer
            .spanBuilder("process " + queue)
            .setSpanKind(SpanKind.CONSUMER)
            .setParent(parent)
            .setAttribute(SYSTEM, "kvmq")
            .setAttribute(DESTINATION, queue)
            .setAttribute(MESSAGE_ID, run.job().id())
            .setAttribute(OPERATION_TYPE, "process")
            .setAttribute(ATTEMPT, (long) run.job().attempt())
            .startSpan();
    Scope scope = span.makeCurrent();
    return new JobTracing.Span() {
      @Override
      public void detach() {
        scope.close();
      }

      @Override
      public void end(Outcome outcome, Throwable error) {
        span.setAttribute(OUTCOME, outcome.name().toLowerCase(Locale.ROOT));
        if (error != null) {
          span.recordException(error);
        }
        if (outcome == Outcome.FAILED || outcome == Outcome.DEAD) {
          span.setStatus(StatusCode.ERROR, String.valueOf(error));
        }
        span.end();
      }
    };
  }

  /** kvmq's metrics on this OpenTelemetry's meter: see {@link Meters}. */
  Meters meters() {
    return new Meters(otel.getMeter(SCOPE));
  }

  /**
   * kvmq's metrics on an OpenTelemetry {@link Meter}: the instruments of {@link KvmqMetrics}, with
   * the same names and units, for servers without MicroProfile Metrics (WildFly). The queue and
   * status are attributes.
   */
  static final class Meters implements QueueMetrics {

    private final Map<String, Queue<?>> queues = new ConcurrentHashMap<>();
    private final Map<String, Attributes> attributes = new ConcurrentHashMap<>();
    private final LongCounter started;
    private final LongCounter completed;
    private final LongCounter retried;
    private final LongCounter dead;
    private final LongCounter leaseLost;
    private final LongCounter cancelled;
    private final LongHistogram duration;
    private final LongHistogram pickup;
    private final LongHistogram claim;
    private final ObservableLongGauge depth;

    Meters(Meter meter) {
      started = counter(meter, QueueMetrics.STARTED, "started");
      completed = counter(meter, QueueMetrics.COMPLETED, "completed");
      retried = counter(meter, QueueMetrics.RETRIED, "retried");
      dead = counter(meter, QueueMetrics.DEAD, "dead");
      leaseLost = counter(meter, QueueMetrics.LEASE_LOST, "leaseLost");
      cancelled = counter(meter, QueueMetrics.CANCELLED, "cancelled");
      duration =
          meter
              .histogramBuilder(QueueMetrics.DURATION)
              .ofLongs()
              .setUnit("us")
              .setDescription(QueueMetrics.DURATION_HELP)
              .build();
      pickup =
          meter
              .histogramBuilder(QueueMetrics.PICKUP)
              .ofLongs()
              .setUnit("ms")
              .setDescription(QueueMetrics.PICKUP_HELP)
              .build();
      claim =
          meter
              .histogramBuilder(QueueMetrics.CLAIM)
              .ofLongs()
              .setUnit("ms")
              .setDescription(QueueMetrics.CLAIM_HELP)
              .build();
      depth =
          meter
              .gaugeBuilder(QueueMetrics.JOBS)
              .ofLongs()
              .setDescription(QueueMetrics.JOBS_HELP)
              .buildWithCallback(
                  m -> {
                    for (Queue<?> q : queues.values()) {
                      QueueCounts c;
                      try {
                        c = q.counts();
                      } catch (RuntimeException e) {
                        continue; // the store is closed or away: the readiness check says why
                      }
                      for (var s : STATUSES.entrySet()) {
                        m.record(
                            s.getValue().applyAsLong(c),
                            Attributes.of(QUEUE, q.name(), STATUS, s.getKey()));
                      }
                    }
                  });
    }

    private static final Map<String, ToLongFunction<QueueCounts>> STATUSES =
        Map.of(
            "waiting", QueueCounts::waiting,
            "delayed", QueueCounts::delayed,
            "processing", QueueCounts::processing,
            "dead", QueueCounts::dead,
            "held", QueueCounts::held);

    private static LongCounter counter(Meter meter, String name, String outcome) {
      return meter
          .counterBuilder(name)
          .setDescription(
              "kvmq jobs " + outcome + " by this application's workers since it started")
          .build();
    }

    private Attributes of(String queue) {
      return attributes.computeIfAbsent(queue, q -> Attributes.of(QUEUE, q));
    }

    @Override
    public void register(Queue<?> queue) {
      queues.putIfAbsent(queue.name(), queue);
    }

    @Override
    public void started(String queue, long pickupMillis, long claimMillis) {
      Attributes a = of(queue);
      started.add(1, a);
      pickup.record(pickupMillis, a);
      claim.record(claimMillis, a);
    }

    @Override
    public void completed(String queue) {
      completed.add(1, of(queue));
    }

    @Override
    public void failed(String queue, boolean isDead) {
      (isDead ? dead : retried).add(1, of(queue));
    }

    @Override
    public void leaseLost(String queue) {
      leaseLost.add(1, of(queue));
    }

    @Override
    public void cancelled(String queue) {
      cancelled.add(1, of(queue));
    }

    @Override
    public void handled(String queue, long nanos) {
      duration.record(QueueMetrics.micros(nanos), of(queue));
    }

    @Override
    public void close() {
      queues.clear();
      try {
        depth.close();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "closing the kvmq.jobs gauge failed", e);
      }
    }

    /** The names of the counters, for the docs' table and the tests. */
    static List<String> counters() {
      return List.of(
          QueueMetrics.STARTED,
          QueueMetrics.COMPLETED,
          QueueMetrics.RETRIED,
          QueueMetrics.DEAD,
          QueueMetrics.LEASE_LOST);
    }
  }
}
