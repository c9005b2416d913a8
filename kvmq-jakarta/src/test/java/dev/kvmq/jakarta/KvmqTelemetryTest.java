package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kvmq on the OpenTelemetry SDK (what MicroProfile Telemetry gives an application): a kernel queue
 * with the hook the runtime gives it ({@link JobObservation} over {@link KvmqTelemetry}), driven by
 * the fake clock. The spans and metrics are read from the SDK, as an exporter would get them.
 */
class KvmqTelemetryTest {

  final List<SpanData> spans = new CopyOnWriteArrayList<>();
  final SdkTracerProvider tracers =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(new Into())).build();
  final Reader reader = new Reader();
  final SdkMeterProvider meters = SdkMeterProvider.builder().registerMetricReader(reader).build();
  final OpenTelemetrySdk otel =
      OpenTelemetrySdk.builder()
          .setTracerProvider(tracers)
          .setMeterProvider(meters)
          .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
          .build();
  final KvmqTelemetry telemetry = new KvmqTelemetry(otel);
  final KvmqTelemetry.Meters metrics = telemetry.meters();
  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue =
      Queue.builder(store, "mails", Codecs.utf8())
          .clock(clock)
          .tracing(new JobObservation(telemetry, () -> metrics))
          .build();

  {
    metrics.register(queue);
  }

  @AfterEach
  void close() {
    store.close();
    otel.close();
  }

  /** Collects every ended span. */
  final class Into implements SpanExporter {
    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  /** Reads the metrics on demand, cumulative, as a Prometheus scrape would. */
  static final class Reader implements MetricReader {
    volatile CollectionRegistration registration = CollectionRegistration.noop();

    @Override
    public void register(CollectionRegistration registration) {
      this.registration = registration;
    }

    Map<String, MetricData> collect() {
      return registration.collectAllMetrics().stream()
          .collect(Collectors.toMap(MetricData::getName, m -> m));
    }

    @Override
    public CompletableResultCode forceFlush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType type) {
      return AggregationTemporality.CUMULATIVE;
    }
  }

  static <T> T attr(SpanData s, AttributeKey<T> key) {
    return s.getAttributes().get(key);
  }

  @Test
  void everyAttemptIsAConsumerSpanInTheTraceOfThePushWithQueueIdAttemptAndOutcome() {
    Span request = otel.getTracer("test").spanBuilder("POST /mails").startSpan();
    Job<String> job;
    try (Scope ignored = request.makeCurrent()) {
      job =
          queue.push("hello", JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(5))));
    } finally {
      request.end();
    }
    List<String> currentInHandler = new ArrayList<>();
    queue
        .worker(
            (j, ctx) -> {
              currentInHandler.add(Span.current().getSpanContext().getSpanId());
              if (ctx.attempt() == 1) {
                throw new IllegalStateException("smtp down");
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    scheduler.advance(Duration.ofSeconds(5));

    List<SpanData> runs = spans.stream().filter(s -> s.getKind() == SpanKind.CONSUMER).toList();
    assertThat(runs).hasSize(2);
    for (SpanData s : runs) {
      assertThat(s.getName()).isEqualTo("process mails");
      assertThat(s.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
      assertThat(s.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
      assertThat(attr(s, KvmqTelemetry.SYSTEM)).isEqualTo("kvmq");
      assertThat(attr(s, KvmqTelemetry.DESTINATION)).isEqualTo("mails");
      assertThat(attr(s, KvmqTelemetry.MESSAGE_ID)).isEqualTo(job.id());
      assertThat(attr(s, KvmqTelemetry.OPERATION_TYPE)).isEqualTo("process");
    }
    SpanData failed = runs.get(0);
    assertThat(attr(failed, KvmqTelemetry.ATTEMPT)).isEqualTo(1L);
    assertThat(attr(failed, KvmqTelemetry.OUTCOME)).isEqualTo("failed");
    assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(failed.getEvents()).anyMatch(e -> e.getName().equals("exception"));
    SpanData completed = runs.get(1);
    assertThat(attr(completed, KvmqTelemetry.ATTEMPT)).isEqualTo(2L);
    assertThat(attr(completed, KvmqTelemetry.OUTCOME)).isEqualTo("completed");
    assertThat(completed.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(currentInHandler)
        .as("the run's span is current while its handler runs")
        .containsExactly(failed.getSpanId(), completed.getSpanId());
    assertThat(Span.current().getSpanContext().isValid())
        .as("and no longer current after it")
        .isFalse();
  }

  @Test
  void aPushOutsideATraceStartsNoneAndItsRunIsARootSpan() {
    queue.push("x");
    queue.worker((j, ctx) -> {}, WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(spans)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getParentSpanContext().isValid()).isFalse();
              assertThat(attr(s, KvmqTelemetry.OUTCOME)).isEqualTo("completed");
            });
  }

  @Test
  void theMetricsHaveKvmqsNamesUnitsAndQueueAttribute() {
    queue.push("a", JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(5))));
    queue.push("b");
    queue.push("later", JobOptions.defaults().delay(Duration.ofHours(1)));
    queue.holdAll(java.util.List.of("in an open transaction"), JobOptions.defaults());
    clock.advance(Duration.ofMillis(250)); // both waited 250 ms for a worker
    queue
        .worker(
            (j, ctx) -> {
              if (j.state().equals("a") && ctx.attempt() == 1) {
                throw new IllegalStateException("once");
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    // what the runtime's worker listener and handler wrapper report (KvmqRuntime.fire, timed)
    metrics.completed("mails");
    metrics.failed("mails", false);
    metrics.failed("mails", true);
    metrics.leaseLost("mails");
    metrics.cancelled("mails");
    metrics.cancelled("mails");
    metrics.handled("mails", 1_499);

    Map<String, MetricData> m = reader.collect();
    assertThat(sum(m, QueueMetrics.STARTED)).as("from the hook").isEqualTo(2);
    assertThat(sum(m, QueueMetrics.COMPLETED)).isEqualTo(1);
    assertThat(sum(m, QueueMetrics.RETRIED)).isEqualTo(1);
    assertThat(sum(m, QueueMetrics.DEAD)).isEqualTo(1);
    assertThat(sum(m, QueueMetrics.LEASE_LOST)).isEqualTo(1);
    assertThat(sum(m, QueueMetrics.CANCELLED)).isEqualTo(2);
    assertThat(m.get(QueueMetrics.DURATION).getUnit()).isEqualTo("us");
    assertThat(m.get(QueueMetrics.DURATION).getHistogramData().getPoints())
        .singleElement()
        .satisfies(p -> assertThat(p.getSum()).isEqualTo(1.0));
    assertThat(m.get(QueueMetrics.CLAIM).getUnit()).isEqualTo("ms");
    assertThat(m.get(QueueMetrics.PICKUP).getUnit()).isEqualTo("ms");
    var pickup = m.get(QueueMetrics.PICKUP).getHistogramData().getPoints().iterator().next();
    assertThat(pickup.getCount()).isEqualTo(2);
    assertThat(pickup.getSum()).isEqualTo(500.0);
    assertThat(pickup.getAttributes().get(KvmqTelemetry.QUEUE)).isEqualTo("mails");
    Map<String, Long> depth =
        m.get(QueueMetrics.JOBS).getLongGaugeData().getPoints().stream()
            .collect(
                Collectors.toMap(
                    p -> p.getAttributes().get(KvmqTelemetry.STATUS), LongPointData::getValue));
    assertThat(depth)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("waiting", 0L, "delayed", 2L, "processing", 0L, "dead", 0L, "held", 1L));
  }

  private static long sum(Map<String, MetricData> m, String name) {
    MetricData d = m.get(name);
    assertThat(d).as(name).isNotNull();
    return d.getLongSumData().getPoints().stream()
        .peek(p -> assertThat(p.getAttributes().get(KvmqTelemetry.QUEUE)).isEqualTo("mails"))
        .mapToLong(LongPointData::getValue)
        .sum();
  }
}
