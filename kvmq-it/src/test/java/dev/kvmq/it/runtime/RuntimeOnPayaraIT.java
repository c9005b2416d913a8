package dev.kvmq.it.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * kvmq's runtime as a new user's WAR meets it on Payara Micro 6: a handler with no scope annotation
 * runs, a handler's declared retries apply to a push without options, an observer reads the event's
 * job with its type, a queue with jobs and no handler shows in the readiness check, and every
 * handler-duration figure at {@code /metrics} is in the unit its name says (microseconds; a
 * MicroProfile Timer gave its quantiles in nanoseconds under a {@code _seconds} name, its max in
 * seconds).
 *
 * <p>The WAR has no {@code beans.xml} (bean discovery "annotated"), like the user's.
 */
@OnPayara
class RuntimeOnPayaraIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-runtime.war";

  @Deployment
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar(WAR))
        .addClasses(
            Bill.class,
            Ledger.class,
            UnscopedHandler.class,
            RetryingHandler.class,
            TimedHandler.class,
            TypedObserver.class,
            ObservedHandler.class,
            SlowObserver.class,
            PerEvent.class,
            PushServlet.class);
  }

  @Inject Ledger ledger;

  @Inject
  @QueueName("unscoped")
  JobQueue<Bill> unscoped;

  @Inject
  @QueueName("retrying")
  JobQueue<Bill> retrying;

  @Inject
  @QueueName("observed")
  JobQueue<Bill> observed;

  @ArquillianResource URL base;

  // ---- inside the server

  @Test
  void aHandlerWithoutAScopeAnnotationRunsAndTheObserverReadsTheTypedState() {
    unscoped.push(new Bill("ada", 1250, 0));

    Wait.until(
        "the unscoped handler and the typed observer",
        () -> ledger.lines(),
        l -> l.contains("handled unscoped ada") && l.contains("completed ada 1250"));
  }

  /**
   * A synchronous observer busy for three leases holds up no job's completion: the other job of its
   * queue completes on its first attempt, its lease never lost, and its event comes after the slow
   * one, in order, each in a request context of its own (the observer calls a request-scoped bean).
   * Before, observers ran on the thread that commits the worker's outcomes: the other job's
   * completion waited for the observer, its lease expired, and it ran twice.
   */
  @Test
  void aSlowObserverHoldsUpNoOtherJobsCompletion() {
    observed.push(new Bill("slow", 1, 0));
    Wait.until("the slow observer", () -> ledger.lines(), l -> l.contains("observing slow"));
    Job<Bill> quick = observed.push(new Bill("quick", 1, 0)).orElseThrow();

    Wait.until(
        "quick to complete while the slow observer is busy",
        () -> completed(observed.job(quick.id())) ? ledger.lines() : List.<String>of(),
        l -> l.contains("handled quick attempt 1") && !l.contains("observed slow"));
    // the observer writes "observed quick", then "request N for quick": wait for the last line
    List<String> lines =
        Wait.until(
            "both events observed",
            () -> ledger.lines(),
            l -> l.stream().anyMatch(x -> x.startsWith("request ") && x.endsWith(" for quick")));
    assertThat(lines)
        .filteredOn(l -> l.startsWith("handled quick") || l.startsWith("lease lost"))
        .containsExactly("handled quick attempt 1");
    assertThat(lines.indexOf("observed slow")).isLessThan(lines.indexOf("observed quick"));
    assertThat(observed.job(quick.id()).orElseThrow().attempt()).isEqualTo(1);
    List<String> requests = lines.stream().filter(l -> l.startsWith("request ")).toList();
    assertThat(requests)
        .as("each event observed in a request context of its own")
        .hasSize(2)
        .doesNotHaveDuplicates();
    assertThat(requests.get(0).split(" ")[1]).isNotEqualTo(requests.get(1).split(" ")[1]);
  }

  @Test
  void aPushWithoutOptionsGetsTheRetriesTheHandlerDeclares() {
    assertThat(retrying.defaultOptions().retryCount()).isEqualTo(2);
    Job<Bill> job = retrying.push(new Bill("bob", 1, 2)).orElseThrow();
    assertThat(job.retryLimit()).isEqualTo(2);

    Wait.until("the third attempt", () -> ledger.lines(), l -> l.contains("attempt 3 of bob"));
    Wait.until("the job to complete", () -> completed(retrying.job(job.id())));
    assertThat(ledger.lines())
        .as("an observer asking for the wrong type is told which it is")
        .contains(
            "refused: the jobs of queue \"retrying\" hold "
                + Bill.class.getName()
                + ", not java.lang.String");

    Job<Bill> explicit = retrying.push(new Bill("cy", 1, 0), JobOptions.defaults()).orElseThrow();
    assertThat(explicit.retryLimit()).as("a push's own options replace the defaults").isZero();
  }

  /**
   * Every metric of docs/observability.md's table is at {@code /metrics} under its Prometheus name,
   * tagged with the queue: a job that fails once and then completes was started twice, retried
   * once, completed once, and has two handler durations, pickups and claims.
   */
  @Test
  void kvmqsMetricsAreAtMetricsUnderTheNamesOfTheDocs() throws Exception {
    Job<Bill> job = retrying.push(new Bill("dee", 1, 1)).orElseThrow();
    Wait.until("dee's retry to complete", () -> completed(retrying.job(job.id())));
    String body =
        Wait.until(
            "the completion and retry of queue retrying in /metrics",
            () -> get(server("/metrics")).body(),
            b ->
                sample(b, "kvmq_jobs_completed_total", "retrying", "") >= 1
                    && sample(b, "kvmq_jobs_retried_total", "retrying", "") >= 1);
    String retryingLines =
        body.lines()
            .filter(l -> l.startsWith("kvmq_") && l.contains("queue=\"retrying\""))
            .reduce("", (a, b) -> a + b + "\n");
    for (String counted :
        new String[] {
          "kvmq_jobs_started_total",
          "kvmq_handler_duration_microseconds_count",
          "kvmq_pickup_latency_milliseconds_count",
          "kvmq_claim_latency_milliseconds_count"
        }) {
      assertThat(sample(body, counted, "retrying", ""))
          .as("%s in\n%s", counted, retryingLines)
          .isGreaterThanOrEqualTo(2);
    }
    assertThat(sample(body, "kvmq_jobs_dead_total", "retrying", ""))
        .as("kvmq_jobs_dead_total in\n%s", retryingLines)
        .isGreaterThanOrEqualTo(0);
    assertThat(sample(body, "kvmq_jobs_leaseLost_total", "retrying", ""))
        .as("kvmq_jobs_leaseLost_total in\n%s", retryingLines)
        .isGreaterThanOrEqualTo(0);
    assertThat(sample(body, "kvmq_jobs_cancelled_total", "retrying", ""))
        .as("kvmq_jobs_cancelled_total in\n%s", retryingLines)
        .isGreaterThanOrEqualTo(0);
    for (String status : new String[] {"waiting", "delayed", "processing", "dead", "held"}) {
      assertThat(sample(body, "kvmq_jobs", "retrying", "status=\"" + status + "\""))
          .as("kvmq_jobs{status=%s} in\n%s", status, retryingLines)
          .isGreaterThanOrEqualTo(0);
    }
  }

  // ---- over HTTP: the server's readiness and metrics endpoints

  @Test
  @RunAsClient
  void aQueueWithJobsAndNoHandlerIsAReadinessDetailNotAFailure() throws Exception {
    URI ready = server("/health/ready");
    assertThat(get(ready).body()).doesNotContain("nobody-handles-this");

    push("nobody-handles-this", 2, 0);

    HttpResponse<String> r = get(ready);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body())
        .contains("\"status\":\"UP\"")
        // every queue of the store with jobs and no handler here: the test classes share one
        // store, so other classes' queues are named too
        .containsPattern(
            "\"queuesWithoutHandler\"\\s*:\\s*\"([^\"]*,)?nobody-handles-this(,[^\"]*)?\"");
  }

  @Test
  @RunAsClient
  void handlerDurationsAreInTheUnitTheirNameSays() throws Exception {
    int jobs = 6;
    push("timed", jobs, 120);

    String name = "kvmq_handler_duration_microseconds";
    String body =
        Wait.until(
            "six handler calls in /metrics",
            () -> get(server("/metrics")).body(),
            b -> sample(b, name + "_count", "") >= jobs);

    String timed =
        body.lines()
            .filter(l -> l.contains("queue=\"timed\"") && l.contains("handler_duration"))
            .reduce("", (a, b) -> a + b + "\n");
    double count = sample(body, name + "_count", "");
    double sum = sample(body, name + "_sum", "");
    double max = sample(body, name + "_max", "");
    double median = sample(body, name, "quantile=\"0.5\"");
    double p99 = sample(body, name, "quantile=\"0.99\"");
    // Each call sleeps 120 ms: every figure, in microseconds, lies between 120,000 and a few
    // seconds.
    assertThat(sum / count)
        .as("mean from _sum/_count in\n%s", timed)
        .isBetween(120_000.0, 5_000_000.0);
    assertThat(max).as("_max in\n%s", timed).isBetween(120_000.0, 5_000_000.0);
    assertThat(median).as("median in\n%s", timed).isBetween(120_000.0, 5_000_000.0);
    assertThat(p99).as("p99 in\n%s", timed).isBetween(120_000.0, 5_000_000.0);
    assertThat(median).as("quantiles and max in one unit").isLessThanOrEqualTo(max);
    assertThat(body)
        .as("no figure under a name whose unit it is not in")
        .doesNotContain("kvmq_handler_duration_seconds");
  }

  // ---- helpers

  private void push(String queue, int jobs, int ms) throws Exception {
    HttpResponse<String> r =
        get(
            URI.create(
                Wars.root(base, WAR) + "push?queue=" + queue + "&jobs=" + jobs + "&ms=" + ms));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  private URI server(String path) {
    return URI.create(base.getProtocol() + "://" + base.getHost() + ":" + base.getPort() + path);
  }

  private static HttpResponse<String> get(URI uri) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(uri)
                .header("Accept", "text/plain")
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The value of the application-scope sample of this name for queue "timed" with these labels; -1
   * if none.
   */
  private static double sample(String prometheus, String name, String label) {
    return sample(prometheus, name, "timed", label);
  }

  /**
   * The value of the application-scope sample of this name for this queue with these labels; -1 if
   * none.
   */
  private static double sample(String prometheus, String name, String queue, String label) {
    Matcher m =
        Pattern.compile("^" + name + "\\{([^}]*)\\} ([0-9.eE+-]+|NaN)", Pattern.MULTILINE)
            .matcher(prometheus);
    while (m.find()) {
      String labels = m.group(1);
      if (labels.contains("queue=\"" + queue + "\"")
          && labels.contains("mp_scope=\"application\"")
          && labels.contains(label)) {
        return Double.parseDouble(m.group(2));
      }
    }
    return -1;
  }

  /** A job that ended: kept as completed (the default retention), or gone (keep none). */
  private static boolean completed(java.util.Optional<? extends Job<?>> job) {
    return job.map(j -> j.status() == dev.kvmq.JobStatus.COMPLETED).orElse(true);
  }
}
