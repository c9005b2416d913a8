package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.OtlpReceiver;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.traced.TracedApi;
import dev.kvmq.it.support.traced.TracedHandler;
import dev.kvmq.it.support.traced.TracedResource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Tracing and metrics on WildFly, as docs/observability.md enables them: the default {@code
 * standalone.xml} with the OpenTelemetry and MicroProfile Telemetry subsystems added ({@link
 * #ENABLE}, the jboss-cli lines of the docs), the application's {@code otel.sdk.disabled=false},
 * and the exporter pointed at an OTLP receiver in this JVM ({@link OtlpReceiver}). A job pushed
 * from a JAX-RS request that carries a {@code traceparent} runs twice (its handler fails the first
 * attempt): both runs are CONSUMER spans of the request's trace, children of its server span, with
 * kvmq's attributes; the metrics arrive with kvmq's names, units and the queue's attribute.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TelemetryOnWildFlyIT {

  /** The server's part, as docs/observability.md prints it. */
  static final List<String> ENABLE =
      List.of(
          "/extension=org.wildfly.extension.opentelemetry:add",
          "/subsystem=opentelemetry:add",
          "/extension=org.wildfly.extension.microprofile.telemetry:add",
          "/subsystem=microprofile-telemetry:add");

  /** The application's part: MicroProfile Config of the WAR. */
  static String config(String endpoint) {
    return String.join(
        "\n",
        "kvmq.store=memory",
        "otel.sdk.disabled=false",
        "otel.service.name=kvmq-it",
        "otel.exporter.otlp.protocol=http/protobuf",
        "otel.exporter.otlp.endpoint=" + endpoint,
        "otel.exporter.otlp.compression=none",
        "otel.metrics.exporter=otlp",
        "otel.logs.exporter=none",
        "otel.metric.export.interval=500",
        "otel.bsp.schedule.delay=200",
        "");
  }

  private OtlpReceiver receiver;
  private WildFlyServer server;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  void start() throws Exception {
    receiver = new OtlpReceiver();
    WebArchive war =
        KvmqWars.withKvmq(ShrinkWrap.create(WebArchive.class, Wars.NAME))
            .addClasses(TracedApi.class, TracedResource.class, TracedHandler.class)
            .addAsResource(
                new StringAsset(config(receiver.endpoint())),
                "META-INF/microprofile-config.properties");
    server = WildFlyServer.start("telemetry", war, UnaryOperator.identity(), ENABLE, Map.of());
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
    if (receiver != null) {
      receiver.close();
    }
  }

  private String push(String traceId, String parentId) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(server.url() + "/api/jobs"))
            .header("traceparent", "00-" + traceId + "-" + parentId + "-01")
            .header("Content-Type", "text/plain")
            .POST(HttpRequest.BodyPublishers.ofString("hello"))
            .timeout(Duration.ofSeconds(30))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return response.body().trim();
  }

  @Test
  void aJobsRunsAreConsumerSpansInTheTraceOfItsPush() throws Exception {
    String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    String id = push(traceId, "00f067aa0ba902b7");
    List<OtlpReceiver.Span> runs =
        Wait.until(
            "two runs of job " + id + " exported (log: " + server.log() + ")",
            Duration.ofSeconds(60),
            () ->
                receiver.spans().stream()
                    .filter(s -> s.traceId().equals(traceId) && s.kind() == 5)
                    .toList(),
            l -> l.size() >= 2);
    assertThat(receiver.errors()).isEmpty();
    Set<String> serverSpans =
        receiver.spans().stream()
            .filter(s -> s.traceId().equals(traceId) && s.kind() == 2)
            .map(OtlpReceiver.Span::spanId)
            .collect(java.util.stream.Collectors.toSet());
    assertThat(serverSpans).as("the JAX-RS request's span, child of the caller's").isNotEmpty();
    assertThat(runs).hasSize(2);
    for (OtlpReceiver.Span s : runs) {
      assertThat(s.name()).isEqualTo("process traced");
      assertThat(s.parentSpanId()).isIn(serverSpans);
      assertThat(s.attributes())
          .containsEntry("messaging.system", "kvmq")
          .containsEntry("messaging.destination.name", "traced")
          .containsEntry("messaging.message.id", id)
          .containsEntry("messaging.operation.type", "process");
    }
    assertThat(runs)
        .extracting(
            s -> s.attributes().get("kvmq.job.attempt"),
            s -> s.attributes().get("kvmq.job.outcome"))
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(1L, "failed"),
            org.assertj.core.groups.Tuple.tuple(2L, "completed"));
  }

  @Test
  void theMetricsHaveKvmqsNamesAndUnits() throws Exception {
    String id = push("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    Map<String, OtlpReceiver.Metric> metrics =
        Wait.until(
            "kvmq's metrics after job " + id + " (log: " + server.log() + ")",
            Duration.ofSeconds(60),
            receiver::metrics,
            m -> value(m, "kvmq.jobs.completed") >= 1 && value(m, "kvmq.jobs.retried") >= 1);
    assertThat(value(metrics, "kvmq.jobs.started")).isGreaterThanOrEqualTo(2);
    assertThat(metrics.get("kvmq.handler.duration.microseconds").unit()).isEqualTo("us");
    assertThat(metrics.get("kvmq.pickup.latency.milliseconds").unit()).isEqualTo("ms");
    assertThat(metrics.get("kvmq.claim.latency.milliseconds").unit()).isEqualTo("ms");
    assertThat(metrics.get("kvmq.handler.duration.microseconds").points())
        .anySatisfy(
            p -> {
              assertThat(p.attributes()).containsEntry("queue", "traced");
              assertThat(p.count()).isGreaterThanOrEqualTo(2);
            });
    assertThat(metrics.get("kvmq.jobs").points())
        .extracting(p -> p.attributes().get("status"))
        .contains("waiting", "delayed", "processing", "dead", "held");
  }

  /** The sum of a counter's points for the queue {@code traced}; 0 if not exported yet. */
  private static long value(Map<String, OtlpReceiver.Metric> metrics, String name) {
    OtlpReceiver.Metric m = metrics.get(name);
    if (m == null) {
      return 0;
    }
    return m.points().stream()
        .filter(p -> "traced".equals(p.attributes().get("queue")) && p.value() != null)
        .mapToLong(OtlpReceiver.Point::value)
        .sum();
  }
}
