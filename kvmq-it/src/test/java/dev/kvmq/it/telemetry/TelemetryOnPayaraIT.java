package dev.kvmq.it.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.OtlpReceiver;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.traced.TracedApi;
import dev.kvmq.it.support.traced.TracedHandler;
import dev.kvmq.it.support.traced.TracedResource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.assertj.core.groups.Tuple;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Tracing on Payara Micro (6 by default, 7 with {@code -Ppayara7}), as docs/observability.md
 * enables it: the application's {@code otel.sdk.disabled=false} and its OTLP exporter pointed at an
 * OTLP receiver in the test JVM. A job pushed from a JAX-RS request that carries a {@code
 * traceparent} runs twice (its handler fails the first attempt): both runs are CONSUMER spans of
 * the request's trace, children of its server span, with kvmq's attributes and outcomes. The same
 * test as kvmq-it-wildfly's {@code TelemetryOnWildFlyIT}; metrics stay in MicroProfile Metrics on
 * Payara ({@code RuntimeOnPayaraIT}).
 */
@OnPayara
class TelemetryOnPayaraIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-traced.war";

  static final OtlpReceiver RECEIVER = receiver();

  private static OtlpReceiver receiver() {
    try {
      return new OtlpReceiver();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Deployment(testable = false)
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar(WAR))
        .addClasses(TracedApi.class, TracedResource.class, TracedHandler.class)
        .addAsResource(
            new StringAsset(
                String.join(
                    "\n",
                    "kvmq.store=memory",
                    "otel.sdk.disabled=false",
                    "otel.service.name=kvmq-it",
                    "otel.traces.exporter=otlp",
                    "otel.metrics.exporter=none",
                    "otel.logs.exporter=none",
                    "otel.exporter.otlp.protocol=http/protobuf",
                    "otel.exporter.otlp.endpoint=" + RECEIVER.endpoint(),
                    "otel.bsp.schedule.delay=200",
                    "")),
            "META-INF/microprofile-config.properties");
  }

  @ArquillianResource URL base;

  @AfterAll
  static void stop() {
    RECEIVER.close();
  }

  @Test
  @RunAsClient
  void aJobsRunsAreConsumerSpansInTheTraceOfItsPush() throws Exception {
    String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(Wars.root(base, WAR) + "api/jobs"))
                    .header("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01")
                    .header("Content-Type", "text/plain")
                    .POST(HttpRequest.BodyPublishers.ofString("hello"))
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    String id = response.body().trim();
    List<OtlpReceiver.Span> runs =
        Wait.until(
            "two runs of job " + id + " exported",
            Duration.ofSeconds(60),
            () ->
                RECEIVER.spans().stream()
                    .filter(s -> s.traceId().equals(traceId) && s.kind() == 5)
                    .toList(),
            l -> l.size() >= 2);
    assertThat(RECEIVER.errors()).isEmpty();
    Set<String> serverSpans =
        RECEIVER.spans().stream()
            .filter(s -> s.traceId().equals(traceId) && s.kind() == 2)
            .map(OtlpReceiver.Span::spanId)
            .collect(Collectors.toSet());
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
        .containsExactlyInAnyOrder(Tuple.tuple(1L, "failed"), Tuple.tuple(2L, "completed"));
  }
}
