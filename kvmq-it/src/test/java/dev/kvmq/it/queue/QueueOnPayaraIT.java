package dev.kvmq.it.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Backoff;
import dev.kvmq.Job;
import dev.kvmq.JobEntry;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import javax.naming.InitialContext;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * kvmq in a real WAR on Payara Micro 6 with the default store (EclipseStore, under the server's
 * instance directory): four handlers ({@code plain}, {@code ordered}, {@code flaky}, {@code slow}),
 * injected queues, CDI events, JTA, and the admin REST API behind HTTP Basic. One deployment, one
 * Payara start, for every test here.
 */
@OnPayara
class QueueOnPayaraIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-it.war";

  @Deployment
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar(WAR))
        .addClasses(
            Task.class,
            Recorder.class,
            Probe.class,
            EventLog.class,
            TestUsers.class,
            PlainHandler.class,
            OrderedHandler.class,
            FlakyHandler.class,
            SlowHandler.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  @Inject Recorder recorder;

  @Inject
  @QueueName("plain")
  JobQueue<Task> plain;

  @Inject
  @QueueName("ordered")
  JobQueue<Task> ordered;

  @Inject
  @QueueName("flaky")
  JobQueue<Task> flaky;

  @ArquillianResource URL base;

  // ---- inside the server

  @Test
  void handlersRunOnManagedThreadsWithCdiAndJndi() {
    Job<Task> job = plain.push(Task.of("probe")).orElseThrow();

    Recorder.Run run =
        Wait.until("the probe job to run", () -> recorder.succeeded("probe"), r -> !r.isEmpty())
            .get(0);

    assertThat(run.jobId()).isEqualTo(job.id());
    assertThat(run.queue()).isEqualTo("plain");
    assertThat(run.managed()).as("ManageableThread: %s", run.thread()).isTrue();
    assertThat(run.jndi()).as("java:comp lookup inside the handler").isTrue();
    assertThat(run.cdi()).as("@Inject inside the handler").isTrue();
  }

  @Test
  void aHandlersConcurrencyRunsThatManyJobsAtOnce() {
    // Payara Micro's default ManagedScheduledExecutorService runs one task at a time, so
    // kvmq runs workers on its own pool of managed threads: both jobs must run together. Each
    // handler waits for the other to start (Recorder.meet, at most 20 s): run one after the
    // other, the first would wait alone and fail.
    plain.push(Task.of("together-1"));
    plain.push(Task.of("together-2"));

    List<Recorder.Run> runs =
        Wait.until(
            "both jobs to run",
            () -> recorder.runs().stream().filter(r -> r.label().startsWith("together-")).toList(),
            r -> r.size() == 2);

    assertThat(runs)
        .allSatisfy(r -> assertThat(r.succeeded()).as("%s met the other run", r.label()).isTrue());
    assertThat(runs.get(0).thread()).isNotEqualTo(runs.get(1).thread());
    assertThat(runs)
        .allSatisfy(r -> assertThat(r.managed()).as("ManageableThread: %s", r.thread()).isTrue());
  }

  @Test
  void completedAndFailedEventsCarryTheJob() {
    Job<Task> done = plain.push(Task.of("event-done")).orElseThrow();
    Job<Task> retried =
        flaky
            .push(
                new Task("event-retried", 1, 0),
                JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofMillis(10))))
            .orElseThrow();
    Job<Task> dead = plain.push(new Task("event-dead", 1, 0)).orElseThrow();

    Wait.until(
        "sync and async events",
        () -> recorder.events(),
        seen ->
            seen.containsAll(
                List.of(
                    new Recorder.Seen("completed", false, "plain", done.id(), "event-done"),
                    new Recorder.Seen("completed", true, "plain", done.id(), "event-done"),
                    new Recorder.Seen("failed", false, "flaky", retried.id(), "event-retried"),
                    new Recorder.Seen("failed", true, "flaky", retried.id(), "event-retried"),
                    new Recorder.Seen("completed", false, "flaky", retried.id(), "event-retried"),
                    new Recorder.Seen("completed", true, "flaky", retried.id(), "event-retried"),
                    new Recorder.Seen("failed-dead", false, "plain", dead.id(), "event-dead"),
                    new Recorder.Seen("failed-dead", true, "plain", dead.id(), "event-dead"))));
    assertThat(recorder.filteredQueues())
        .as("@OnQueue(\"flaky\") observer")
        .containsExactly("flaky");
  }

  /** A synchronous observer that throws costs the asynchronous ones nothing (it once did). */
  @Test
  void anObserverThatThrowsLeavesTheJobAndTheAsyncEventAlone() {
    Job<Task> job = plain.push(Task.of(EventLog.OBSERVER_THROWS)).orElseThrow();
    Wait.until(
        "the async event after a sync observer threw",
        () -> recorder.events(),
        seen ->
            seen.containsAll(
                List.of(
                    new Recorder.Seen(
                        "completed", false, "plain", job.id(), EventLog.OBSERVER_THROWS),
                    new Recorder.Seen(
                        "completed", true, "plain", job.id(), EventLog.OBSERVER_THROWS))));
    assertThat(plain.queue().job(job.id()).map(Job::status))
        .as("the job completed all the same")
        .contains(JobStatus.COMPLETED);
  }

  @Test
  void higherPriorityRunsFirstAndTheListingShowsPlaceAndStatus() {
    ordered.pause();
    try {
      assertThat(ordered.isPaused()).isTrue();
      push(ordered, "order-a", 0);
      push(ordered, "order-b", 5);
      push(ordered, "order-c", 0);
      push(ordered, "order-d", 10);

      List<JobEntry<Task>> listing = ordered.jobs();
      assertThat(listing)
          .extracting(e -> e.job().state().label())
          .containsExactly("order-d", "order-b", "order-a", "order-c");
      assertThat(listing)
          .as("1-based places of waiting jobs")
          .extracting(JobEntry::place)
          .containsExactly(1, 2, 3, 4);
      assertThat(listing).extracting(JobEntry::status).containsOnly(JobStatus.WAITING);
      assertThat(ordered.counts().waiting()).isEqualTo(4);
    } finally {
      ordered.resume();
    }

    Wait.until("the four ordered jobs", () -> labelsRun("ordered", "order-"), l -> l.size() == 4);
    assertThat(labelsRun("ordered", "order-"))
        .containsExactly("order-d", "order-b", "order-a", "order-c");
  }

  @Test
  void aDelayedJobWaitsAndDoesNotBlockTheOthers() {
    Job<Task> late =
        plain
            .push(Task.of("delay-late"), JobOptions.defaults().delay(Duration.ofMillis(1500)))
            .orElseThrow();
    assertThat(plain.job(late.id())).map(Job::status).contains(JobStatus.DELAYED);
    plain.push(Task.of("delay-early"));

    Recorder.Run lateRun =
        Wait.until("the delayed job", () -> recorder.succeeded("delay-late"), r -> !r.isEmpty())
            .get(0);
    Recorder.Run earlyRun = recorder.succeeded("delay-early").get(0);

    assertThat(lateRun.at()).isAfterOrEqualTo(late.delayUntil());
    assertThat(earlyRun.at()).isBefore(lateRun.at());
  }

  @Test
  void retriesWaitTheirBackoff() {
    flaky.push(
        new Task("retry", 2, 0),
        JobOptions.defaults()
            .retry(3, Backoff.exponential(Duration.ofMillis(300), 2, Duration.ofSeconds(5), 0)));

    Wait.until(
        "the third attempt to succeed", () -> recorder.succeeded("retry"), r -> !r.isEmpty());
    List<Recorder.Run> runs = recorder.runs("retry");

    assertThat(runs).extracting(Recorder.Run::attempt).containsExactly(1, 2, 3);
    assertThat(runs).extracting(Recorder.Run::succeeded).containsExactly(false, false, true);
    assertThat(Duration.between(runs.get(0).at(), runs.get(1).at()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    assertThat(Duration.between(runs.get(1).at(), runs.get(2).at()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(600));
  }

  @Test
  void aJobOutOfRetriesIsADeadLetterThatCanBeReplayed() {
    Job<Task> job =
        flaky
            .push(
                new Task("doomed", 99, 0),
                JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofMillis(10))))
            .orElseThrow();

    Wait.until(
        "the job among the dead letters",
        () -> flaky.deadLetters(),
        dead -> dead.stream().anyMatch(j -> j.id().equals(job.id())));
    assertThat(recorder.runs("doomed")).hasSize(2);
    assertThat(flaky.job(job.id())).map(Job::status).contains(JobStatus.DEAD);

    recorder.heal("doomed");
    assertThat(flaky.replayDead(job.id())).isTrue();

    Wait.until(
        "the replayed job to succeed", () -> recorder.succeeded("doomed"), r -> !r.isEmpty());
    assertThat(flaky.deadLetters()).noneMatch(j -> j.id().equals(job.id()));
  }

  @Test
  void aRepeatingJobRunsAgainAsNewJobs() {
    plain.push(Task.of("repeat"), JobOptions.defaults().repeat(2, Duration.ofMillis(100)));

    List<Recorder.Run> runs =
        Wait.until("three runs", () -> recorder.succeeded("repeat"), r -> r.size() == 3);
    assertThat(runs).extracting(Recorder.Run::jobId).doesNotHaveDuplicates();
  }

  @Test
  void aPausedQueueHoldsItsJobsUntilResumed() {
    plain.pause();
    try {
      plain.push(Task.of("paused"));
      // Another queue's job runs meanwhile: the workers are alive and time has passed.
      ordered.push(Task.of("while-paused"));
      Wait.until(
          "the other queue's job", () -> recorder.succeeded("while-paused"), r -> !r.isEmpty());
      assertThat(recorder.runs("paused")).isEmpty();
      assertThat(plain.jobs())
          .anyMatch(
              e -> e.job().state().label().equals("paused") && e.status() == JobStatus.WAITING);
    } finally {
      plain.resume();
    }
    Wait.until("the job after resume", () -> recorder.succeeded("paused"), r -> !r.isEmpty());
  }

  @Test
  void aPushInARolledBackTransactionLeavesNoJobAndACommittedOneRuns() throws Exception {
    UserTransaction tx = (UserTransaction) new InitialContext().lookup("java:comp/UserTransaction");

    tx.begin();
    Optional<Job<Task>> deferred = plain.push(Task.of("tx-rolled-back"));
    tx.rollback();
    assertThat(deferred).as("a push in a transaction is held and returned at once").isPresent();
    assertThat(deferred.get().status()).isEqualTo(JobStatus.HELD);
    assertThat(plain.job(deferred.get().id())).as("the rollback dropped it").isEmpty();

    tx.begin();
    plain.push(Task.of("tx-committed"));
    assertThat(recorder.runs("tx-committed")).isEmpty();
    tx.commit();

    Wait.until(
        "the committed push to run", () -> recorder.succeeded("tx-committed"), r -> !r.isEmpty());
    plain.push(Task.of("tx-after"));
    Wait.until("a later job", () -> recorder.succeeded("tx-after"), r -> !r.isEmpty());
    assertThat(recorder.runs("tx-rolled-back")).isEmpty();
    assertThat(plain.jobs()).noneMatch(e -> e.job().state().label().equals("tx-rolled-back"));
  }

  // ---- over HTTP: the admin REST API

  @Test
  @RunAsClient
  void restNeedsAUserWithTheRole() throws Exception {
    HttpResponse<String> anonymous = http("GET", "kvmq/queues", null, null);
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(anonymous.headers().firstValue("WWW-Authenticate"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));

    assertThat(http("GET", "kvmq/queues", "admin", "wrong").statusCode()).isEqualTo(401);
    assertThat(http("GET", "kvmq/queues", "viewer", TestUsers.PASSWORD).statusCode())
        .isEqualTo(403);

    HttpResponse<String> admin = http("GET", "kvmq/queues", "admin", TestUsers.PASSWORD);
    assertThat(admin.statusCode()).isEqualTo(200);
    assertThat(admin.body()).contains("\"name\":\"plain\"", "\"name\":\"flaky\"");
  }

  @Test
  @RunAsClient
  void restPushesListsAndAnswersBadRequestsWithProblems() throws Exception {
    HttpResponse<String> pushed =
        admin(
            "POST",
            "kvmq/queues/plain/jobs",
            "{\"state\": {\"label\": \"rest\", \"failAttempts\": 0, \"workMs\": 0}, \"priority\": 3}");
    assertThat(pushed.statusCode()).as(pushed.body()).isEqualTo(201);
    String id = field(pushed.body(), "id");
    assertThat(admin("GET", "kvmq/queues/plain/jobs/" + id, null).statusCode())
        .isIn(200, 404); // may be done already
    assertThat(admin("GET", "kvmq/queues/plain", null).body()).contains("\"name\":\"plain\"");
    assertThat(admin("GET", "kvmq/queues/plain/jobs", null).statusCode()).isEqualTo(200);
    assertThat(admin("GET", "kvmq/queues/plain/dead", null).statusCode()).isEqualTo(200);
    assertThat(admin("GET", "kvmq/queues/plain/dead?offset=0&limit=0", null).body())
        .isEqualTo("[]");

    HttpResponse<String> unknownField =
        admin("POST", "kvmq/queues/plain/jobs", "{\"state\": {\"label\": \"x\"}, \"bogus\": 1}");
    assertProblem(unknownField, 400);
    assertProblem(admin("POST", "kvmq/queues/plain/jobs", "not json"), 400);
    assertProblem(
        admin("POST", "kvmq/queues/plain/jobs", "{\"state\": {\"label\": \"x\"}, \"delayMs\": -1}"),
        400);
    assertProblem(admin("GET", "kvmq/queues/plain/jobs?status=nonsense", null), 400);
    assertProblem(admin("GET", "kvmq/queues/plain/dead?limit=-1", null), 400);
    assertProblem(admin("DELETE", "kvmq/queues/plain/jobs?status=processing", null), 400);

    assertProblem(admin("GET", "kvmq/queues/no-such-queue", null), 404);
    assertProblem(admin("GET", "kvmq/queues/plain/jobs/no-such-job", null), 404);
    assertProblem(admin("DELETE", "kvmq/queues/plain/jobs/no-such-job", null), 404);
  }

  @Test
  @RunAsClient
  void restRefusesToDeleteAJobBeingProcessedAndPausesAndResumes() throws Exception {
    HttpResponse<String> pushed =
        admin(
            "POST",
            "kvmq/queues/slow/jobs",
            "{\"state\": {\"label\": \"busy\", \"failAttempts\": 0, \"workMs\": 4000}}");
    assertThat(pushed.statusCode()).as(pushed.body()).isEqualTo(201);
    String id = field(pushed.body(), "id");

    Wait.until(
        "the slow job to be processing",
        () -> admin("GET", "kvmq/queues/slow/jobs/" + id, null).body(),
        body -> body.contains("\"status\":\"processing\""));
    assertProblem(admin("DELETE", "kvmq/queues/slow/jobs/" + id, null), 409);

    assertThat(admin("POST", "kvmq/queues/slow/pause", null).statusCode()).isEqualTo(204);
    assertThat(admin("GET", "kvmq/queues/slow", null).body()).contains("\"paused\":true");
    assertThat(admin("POST", "kvmq/queues/slow/resume", null).statusCode()).isEqualTo(204);
    assertThat(admin("GET", "kvmq/queues/slow", null).body()).contains("\"paused\":false");
  }

  @Test
  @RunAsClient
  void restStreamsQueueChangesAsServerSentEvents() throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(Wars.root(base, WAR) + "kvmq/queues/flaky/events"))
            .header("Accept", "text/event-stream")
            .header("Authorization", basic("admin", TestUsers.PASSWORD))
            .GET()
            .build();
    HttpResponse<java.util.stream.Stream<String>> response =
        HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofLines());
    assertThat(response.statusCode()).isEqualTo(200);
    List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread reader =
        new Thread(
            () -> {
              try (java.util.stream.Stream<String> body = response.body()) {
                body.forEach(lines::add);
              } catch (RuntimeException closed) {
                // the stream ends when the test closes it
              }
            },
            "sse-reader");
    reader.setDaemon(true);
    reader.start();
    try {
      Wait.until(
          "the first event, at once",
          () ->
              lines.stream()
                  .anyMatch(
                      l ->
                          l.startsWith("data:")
                              && l.contains("\"name\":\"flaky\"")
                              && l.contains("\"paused\":false")));
      assertThat(lines).contains("event: queue");

      assertThat(admin("POST", "kvmq/queues/flaky/pause", null).statusCode()).isEqualTo(204);
      Wait.until(
          "an event after the pause",
          () ->
              lines.stream().anyMatch(l -> l.startsWith("data:") && l.contains("\"paused\":true")));
    } finally {
      admin("POST", "kvmq/queues/flaky/resume", null);
      response.body().close();
    }
  }

  @Test
  @RunAsClient
  void activityAndMicroProfileMetricsCountOutcomesAndHandlerTime() throws Exception {
    long completedBefore = activityNumber("flaky", "completed");
    long retriedBefore = activityNumber("flaky", "retried");
    for (int i = 0; i < 3; i++) {
      assertThat(
              admin(
                      "POST",
                      "kvmq/queues/flaky/jobs",
                      "{\"state\": {\"label\": \"metrics-"
                          + i
                          + "\", \"failAttempts\": 1, \"workMs\": 5}, \"retryCount\": 1, \"retryDelayMs\": 10}")
                  .statusCode())
          .isEqualTo(201);
    }

    Wait.until(
        "three completions in /activity",
        () -> activityNumber("flaky", "completed"),
        n -> n >= completedBefore + 3);
    assertThat(activityNumber("flaky", "retried")).isGreaterThanOrEqualTo(retriedBefore + 3);
    String activity = admin("GET", "kvmq/queues/flaky/activity?seconds=60", null).body();
    assertThat(activity).contains("\"perSecond\":{\"start\":");
    assertProblem(admin("GET", "kvmq/queues/flaky/activity?seconds=0", null), 400);

    // MicroProfile Metrics, in the Prometheus format at the server's /metrics
    URI metrics =
        URI.create(base.getProtocol() + "://" + base.getHost() + ":" + base.getPort() + "/metrics");
    String body =
        Wait.until(
            "kvmq counters at " + metrics,
            () -> get(metrics),
            b -> metric(b, "kvmq_jobs_completed_total", "flaky") >= completedBefore + 3);
    assertThat(metric(body, "kvmq_jobs_retried_total", "flaky"))
        .as(body)
        .isGreaterThanOrEqualTo(retriedBefore + 3);
    assertThat(metric(body, "kvmq_handler_duration_microseconds_count", "flaky"))
        .as("handler timer in %s", body)
        .isGreaterThanOrEqualTo(6);
    assertThat(body)
        .as("queue depth gauges")
        .containsPattern(
            "kvmq_jobs\\{[^}]*queue=\"flaky\"[^}]*status=\"dead\"|"
                + "kvmq_jobs\\{[^}]*status=\"dead\"[^}]*queue=\"flaky\"");
  }

  // ---- helpers

  private long activityNumber(String queue, String field) {
    try {
      String body = admin("GET", "kvmq/queues/" + queue + "/activity", null).body();
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile("\"" + field + "\":(\\d+)").matcher(body);
      assertThat(m.find()).as(body).isTrue();
      return Long.parseLong(m.group(1));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String get(URI uri) {
    try {
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(uri)
                      .header("Accept", "text/plain")
                      .timeout(Duration.ofSeconds(30))
                      .GET()
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return r.body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The value of the Prometheus sample of this name in the application scope whose labels name the
   * queue (the names MicroProfile Metrics 5 gives); -1 if there is none.
   */
  private static double metric(String prometheus, String name, String queue) {
    java.util.regex.Pattern p =
        java.util.regex.Pattern.compile(
            "^" + name + "\\{([^}]*)\\} ([0-9.eE+-]+)", java.util.regex.Pattern.MULTILINE);
    java.util.regex.Matcher m = p.matcher(prometheus);
    while (m.find()) {
      if (m.group(1).contains("queue=\"" + queue + "\"")
          && m.group(1).contains("mp_scope=\"application\"")) {
        return Double.parseDouble(m.group(2));
      }
    }
    return -1;
  }

  private static void push(JobQueue<Task> queue, String label, double priority) {
    queue.push(Task.of(label), JobOptions.defaults().priority(priority));
  }

  private List<String> labelsRun(String queue, String prefix) {
    return recorder.runs().stream()
        .filter(r -> r.queue().equals(queue) && r.label().startsWith(prefix))
        .map(Recorder.Run::label)
        .toList();
  }

  private static void assertProblem(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
  }

  private HttpResponse<String> admin(String method, String path, String json) throws Exception {
    return http(method, path, "admin", TestUsers.PASSWORD, json);
  }

  private HttpResponse<String> http(String method, String path, String user, String password)
      throws Exception {
    return http(method, path, user, password, null);
  }

  private HttpResponse<String> http(
      String method, String path, String user, String password, String json) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(Wars.root(base, WAR) + path))
            .timeout(Duration.ofSeconds(30))
            .method(
                method,
                json == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(json));
    if (json != null) {
      request.header("Content-Type", "application/json");
    }
    if (user != null) {
      request.header("Authorization", basic(user, password));
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  /** A top-level string field of a small JSON object (enough for an id). */
  private static String field(String json, String name) {
    String key = "\"" + name + "\":\"";
    int start = json.indexOf(key);
    assertThat(start).as("field %s in %s", name, json).isNotNegative();
    start += key.length();
    return json.substring(start, json.indexOf('"', start));
  }
}
