package dev.kvmq.it.flow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobStatus;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * Flow control (issue 16) in a real WAR on Payara Micro: a group limit from MicroProfile Config
 * ({@code kvmq.queue.grouped.group-limit=1}) holds across jobs as the handler sees them, and a
 * duplicate push over the admin REST API answers with the job that holds the unique key; a queue
 * whose handler takes handoffs ({@code handoff = true}) gets a job pushed while its worker is idle
 * leased in the push's own commit. One deployment for all.
 */
@OnPayara
class FlowOnPayaraIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-flow.war";

  @Deployment
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar(WAR))
        .addClasses(
            Call.class,
            Gates.class,
            GroupedHandler.class,
            UniqueHandler.class,
            HandedHandler.class,
            TestUsers.class)
        .addAsResource(
            new StringAsset(
                "kvmq.rest.enabled=true\n"
                    + "kvmq.queue.grouped.group-limit=1\n"
                    + "kvmq.queue.grouped.group.wide.limit=unlimited\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  @Inject Gates gates;

  @Inject
  @QueueName("grouped")
  JobQueue<Call> grouped;

  @Inject
  @QueueName("handed")
  JobQueue<Call> handed;

  @Inject HandedHandler handedHandler;

  @ArquillianResource URL base;

  /**
   * Handoff on a real server, with the worker on the container's executor: a push outside a
   * transaction while the worker has its slot idle comes back processing under token 1, and the
   * handler runs it under that token, with no claim in between; a job of a group is pushed as usual
   * (waiting) and runs after. The first push may find the worker busy with its first look at the
   * queue, so pushes are made until one is handed off (each of them runs).
   */
  @Test
  void aJobPushedWhileTheWorkerIsIdleIsLeasedInThePushsCommit() {
    int[] pushed = {0};
    Job<Call> job =
        Wait.until(
            "a push handed off to the idle worker",
            () -> {
              Job<Call> j = handed.push(new Call("h" + pushed[0]++)).orElseThrow();
              if (j.status() != JobStatus.PROCESSING) {
                String label = j.state().label();
                Wait.until(
                    label + " to run", () -> handedHandler.ran(), r -> r.contains(label + "@1"));
              }
              return j;
            },
            j -> j.status() == JobStatus.PROCESSING);
    assertThat(job.token()).isEqualTo(1);
    String label = job.state().label();
    Wait.until(
        "the handed-off job to run", () -> handedHandler.ran(), r -> r.contains(label + "@1"));
    Job<Call> grouped =
        handed.push(new Call("g"), handed.defaultOptions().group("x")).orElseThrow();
    assertThat(grouped.status())
        .as("a job of a group is not handed off")
        .isEqualTo(JobStatus.WAITING);
    Wait.until("the grouped job to run", () -> handedHandler.ran(), r -> r.contains("g@1"));
    assertThat(handedHandler.ran()).hasSize(pushed[0] + 1);
  }

  @Test
  void aGroupLimitOfOneRunsTheGroupsJobsOneAtATimeWhileOthersRun() {
    for (String label : List.of("a1", "a2", "a3")) {
      grouped.push(new Call(label), grouped.defaultOptions().group("a"));
    }
    grouped.push(new Call("b1"), grouped.defaultOptions().group("b"));
    grouped.push(new Call("w1"), grouped.defaultOptions().group("wide"));
    grouped.push(new Call("w2"), grouped.defaultOptions().group("wide"));
    grouped.push(new Call("n1"));

    // Concurrency 5: b1, w1, w2 (its group is unlimited), n1 (no group) and one job of a run.
    Wait.until(
        "b1, w1, w2, n1 and a job of group a in the handler",
        () -> gates.started(),
        s -> s.containsAll(List.of("b1", "w1", "w2", "n1")) && s.stream().anyMatch(this::ofA));
    assertThat(gates.running("a")).as("jobs of group a in the handler").isEqualTo(1);
    assertThat(gates.mostOfAll()).as("jobs in the handler at once").isEqualTo(5);
    assertThat(gates.most("wide")).as("the unlimited group's jobs ran together").isEqualTo(2);

    for (String label : List.of("b1", "w1", "w2", "n1")) {
      gates.open(label);
    }
    for (int i = 1; i <= 3; i++) {
      int n = i;
      List<String> started =
          Wait.until(
              n + " job(s) of group a started",
              () -> gates.started().stream().filter(this::ofA).toList(),
              s -> s.size() >= n);
      assertThat(started).as("jobs of group a started").hasSize(n);
      assertThat(gates.running("a")).as("jobs of group a in the handler").isEqualTo(1);
      gates.open(started.get(n - 1));
    }
    Wait.until("every job to finish", () -> gates.finished(), f -> f.size() == 7);
    assertThat(gates.most("a")).as("the most jobs of group a in the handler at once").isEqualTo(1);
    assertThat(gates.started().stream().filter(this::ofA).sorted().toList())
        .containsExactly("a1", "a2", "a3");
  }

  private boolean ofA(String label) {
    return label.startsWith("a");
  }

  @Test
  @RunAsClient
  void aDuplicatePushOverRestAnswersTheJobThatHoldsTheKey() throws Exception {
    String body =
        "{\"state\": {\"label\": \"%s\"}, \"delay\": \"PT1H\", \"group\": \"g-1\","
            + " \"unique\": {\"key\": \"sync-42\", \"scope\": \"waiting\"}}";

    HttpResponse<String> first = admin("POST", "kvmq/queues/unique/jobs", body.formatted("first"));
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    JsonObject created = json(first.body());
    assertThat(created.getString("outcome")).isEqualTo("created");
    assertThat(created.getString("group")).isEqualTo("g-1");
    assertThat(created.getJsonObject("unique").getString("key")).isEqualTo("sync-42");
    assertThat(created.getJsonObject("unique").getString("scope")).isEqualTo("waiting");
    assertThat(created.getBoolean("holdsUniqueKey")).isTrue();

    HttpResponse<String> again = admin("POST", "kvmq/queues/unique/jobs", body.formatted("again"));
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    JsonObject duplicate = json(again.body());
    assertThat(duplicate.getString("outcome")).isEqualTo("duplicate");
    assertThat(duplicate.getString("id")).isEqualTo(created.getString("id"));
    assertThat(duplicate.getJsonObject("state").getString("label"))
        .as("the job that holds the key, unchanged")
        .isEqualTo("first");

    HttpResponse<String> listed = admin("GET", "kvmq/queues/unique/jobs", null);
    assertThat(listed.statusCode()).isEqualTo(200);
    assertThat(Json.createReader(new StringReader(listed.body())).readArray())
        .as("one job for the key")
        .hasSize(1);

    HttpResponse<String> empty =
        admin(
            "POST",
            "kvmq/queues/unique/jobs",
            "{\"state\": {\"label\": \"x\"}, \"unique\": {\"key\": \"\", \"scope\": \"waiting\"}}");
    assertThat(empty.statusCode()).as(empty.body()).isEqualTo(400);
    assertThat(json(empty.body()).getString("field")).isEqualTo("unique.key");
    HttpResponse<String> badGroup =
        admin("POST", "kvmq/queues/unique/jobs", "{\"state\": {\"label\": \"x\"}, \"group\": 7}");
    assertThat(badGroup.statusCode()).as(badGroup.body()).isEqualTo(400);
    assertThat(json(badGroup.body()).getString("field")).isEqualTo("group");
  }

  private static JsonObject json(String s) {
    try (JsonReader r = Json.createReader(new StringReader(s))) {
      return r.readObject();
    }
  }

  private HttpResponse<String> admin(String method, String path, String json) throws Exception {
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
    request.header(
        "Authorization",
        "Basic "
            + Base64.getEncoder()
                .encodeToString(("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8)));
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
