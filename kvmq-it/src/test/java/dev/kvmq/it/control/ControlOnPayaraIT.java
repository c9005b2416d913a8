package dev.kvmq.it.control;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * Job control and history over the admin REST API, on Payara Micro with the default store
 * (EclipseStore): a running job cancelled over REST (its handler told to stop, the job CANCELLED),
 * a job over its queue's timeout retried and then dead, and the jobs that ended listed by status a
 * page at a time with a cursor. One deployment, one Payara start; every request over HTTP as {@code
 * admin}, and as {@code viewer} (no role) for the refusals.
 */
@OnPayara
@RunAsClient
class ControlOnPayaraIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-control.war";

  @Deployment(testable = false)
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar(WAR))
        .addClasses(
            Chore.class,
            Chores.class,
            ChoreServlet.class,
            StubbornHandler.class,
            OverrunHandler.class,
            KeptHandler.class,
            TestUsers.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\nkvmq.queue.overruns.timeout=PT1S\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  @ArquillianResource URL base;

  @Test
  void aRunningJobCancelledOverRestIsToldToStopAndEndsCancelled() throws Exception {
    String id = push("cancellable", "stubborn");
    Wait.until(
        "the job to be processing",
        () -> job("cancellable", id).getString("status"),
        "processing"::equals);
    Wait.until("the handler to start", () -> steps("stubborn"), s -> s.contains("started 1"));

    assertThat(
            http("POST", "kvmq/queues/cancellable/jobs/" + id + "/cancel", "viewer").statusCode())
        .as("a user without the role")
        .isEqualTo(403);
    HttpResponse<String> cancelled =
        http("POST", "kvmq/queues/cancellable/jobs/" + id + "/cancel", "admin");
    assertThat(cancelled.statusCode()).as(cancelled.body()).isEqualTo(204);

    List<String> steps =
        Wait.until(
            "the handler to be told and return",
            () -> steps("stubborn"),
            s -> s.contains("returned"));
    assertThat(steps).containsExactly("started 1", "told CANCELLED", "returned");
    JsonObject job = job("cancellable", id);
    assertThat(job.getString("status")).isEqualTo("cancelled");
    assertThat(job.containsKey("cancelledAt")).as(job.toString()).isTrue();
    assertThat(job.get("lockUntil")).isEqualTo(JsonValue.NULL);

    assertProblem(http("POST", "kvmq/queues/cancellable/jobs/" + id + "/cancel", "admin"), 409);
    assertProblem(http("POST", "kvmq/queues/cancellable/jobs/01NOSUCHJOB/cancel", "admin"), 404);
    assertThat(listed("cancellable", "cancelled", 10)).contains(id);
  }

  @Test
  void waitingJobsAreCancelledByStatusOverRest() throws Exception {
    assertThat(http("POST", "kvmq/queues/cancellable/pause", "admin").statusCode()).isEqualTo(204);
    try {
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        ids.add(push("cancellable", "bulk-" + i));
      }
      assertProblem(http("POST", "kvmq/queues/cancellable/cancel?status=dead", "admin"), 400);
      assertThat(
              http("POST", "kvmq/queues/cancellable/cancel?status=waiting", "viewer").statusCode())
          .isEqualTo(403);
      HttpResponse<String> r =
          http("POST", "kvmq/queues/cancellable/cancel?status=waiting,delayed", "admin");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(json(r.body()).getInt("cancelled")).isEqualTo(3);
      for (String id : ids) {
        assertThat(job("cancellable", id).getString("status")).isEqualTo("cancelled");
      }
    } finally {
      http("POST", "kvmq/queues/cancellable/resume", "admin");
    }
  }

  @Test
  void aJobOverItsTimeoutIsRetriedThenDead() throws Exception {
    // A push over REST gives its own options (the annotation's retries are for JobQueue.push)
    String id = push("overruns", "slowpoke", ", \"retryCount\": 1, \"retryDelayMs\": 200");

    JsonObject dead =
        Wait.until(
            "the job to be a dead letter after two timed-out attempts",
            Duration.ofSeconds(60),
            () -> job("overruns", id),
            j -> j.getString("status").equals("dead"));

    assertThat(dead.getInt("attempt")).isEqualTo(2);
    assertThat(dead.getJsonObject("lastError").getString("type")).contains("JobTimeoutException");
    assertThat(dead.getJsonArray("attempts")).hasSize(2);
    for (JsonValue a : dead.getJsonArray("attempts")) {
      assertThat(a.asJsonObject().getJsonObject("error").getString("type"))
          .contains("JobTimeoutException");
    }
    assertThat(steps("slowpoke"))
        .as("each run told that it timed out after PT1S, not the annotation's PT1M")
        .startsWith("started 1")
        .containsExactlyInAnyOrder("started 1", "told TIMED_OUT", "started 2", "told TIMED_OUT");
    assertThat(listed("overruns", "dead", 10)).contains(id);
  }

  @Test
  void completedJobsAreKeptAndListedByStatusWithACursor() throws Exception {
    Set<String> ids = new TreeSet<>();
    for (int i = 0; i < 5; i++) {
      ids.add(push("kept", "kept-" + i));
    }
    Wait.until(
        "the five jobs to be completed and kept",
        () -> json(http("GET", "kvmq/queues/kept/count?status=completed", "admin").body()),
        c -> c.getJsonNumber("count").longValue() >= 5);

    List<JsonObject> jobs = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      HttpResponse<String> r =
          http(
              "GET",
              "kvmq/queues/kept/list?status=completed&limit=2"
                  + (cursor == null
                      ? ""
                      : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8)),
              "admin");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonObject page = json(r.body());
      assertThat(page.getJsonArray("jobs").size()).isLessThanOrEqualTo(2);
      page.getJsonArray("jobs").forEach(j -> jobs.add(j.asJsonObject()));
      cursor = page.containsKey("next") ? page.getString("next") : null;
      pages++;
    } while (cursor != null && pages < 10);

    assertThat(pages).as("pages of 2 for 5 jobs").isBetween(3, 4);
    assertThat(jobs).extracting(j -> j.getString("id")).containsExactlyInAnyOrderElementsOf(ids);
    for (JsonObject j : jobs) {
      String label = j.getJsonObject("state").getString("label");
      assertThat(j.getString("status")).isEqualTo("completed");
      assertThat(j.getString("result")).isEqualTo("done " + label);
      assertThat(j.containsKey("finishedAt")).isTrue();
      assertThat(j.getJsonArray("attempts")).hasSize(1);
      assertThat(j.getJsonArray("attempts").getJsonObject(0).getString("node")).isNotBlank();
    }

    assertProblem(
        http("GET", "kvmq/queues/kept/list?status=completed&cursor=nonsense", "admin"), 400);
    assertProblem(http("GET", "kvmq/queues/kept/list?status=finished", "admin"), 400);
    assertThat(http("GET", "kvmq/queues/kept/list?status=completed", "viewer").statusCode())
        .isEqualTo(403);
    assertThat(http("GET", "kvmq/queues/kept/count?status=completed", "viewer").statusCode())
        .isEqualTo(403);
  }

  // ---- helpers

  private String push(String queue, String label) throws Exception {
    return push(queue, label, "");
  }

  private String push(String queue, String label, String options) throws Exception {
    HttpResponse<String> r =
        http(
            "POST",
            "kvmq/queues/" + queue + "/jobs",
            "admin",
            "{\"state\": {\"label\": \"" + label + "\"}" + options + "}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    return json(r.body()).getString("id");
  }

  private JsonObject job(String queue, String id) throws Exception {
    HttpResponse<String> r = http("GET", "kvmq/queues/" + queue + "/jobs/" + id, "admin");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return json(r.body());
  }

  private List<String> listed(String queue, String status, int limit) throws Exception {
    HttpResponse<String> r =
        http("GET", "kvmq/queues/" + queue + "/list?status=" + status + "&limit=" + limit, "admin");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonObject page = json(r.body());
    assertThat(page.getString("status")).isEqualTo(status);
    return page.getJsonArray("jobs").stream().map(j -> j.asJsonObject().getString("id")).toList();
  }

  private List<String> steps(String label) throws Exception {
    HttpResponse<String> r = http("GET", "chores?label=" + label, null);
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body().isEmpty() ? List.of() : List.of(r.body().split(","));
  }

  private static JsonObject json(String body) {
    try (JsonReader r = Json.createReader(new StringReader(body))) {
      return r.readObject();
    }
  }

  private static void assertProblem(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
  }

  private HttpResponse<String> http(String method, String path, String user) throws Exception {
    return http(method, path, user, null);
  }

  private HttpResponse<String> http(String method, String path, String user, String json)
      throws Exception {
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
      request.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString(
                      (user + ":" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8)));
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
