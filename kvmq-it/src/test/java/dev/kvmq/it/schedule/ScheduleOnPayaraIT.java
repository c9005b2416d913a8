package dev.kvmq.it.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An annotated schedule on Payara Micro 6, over a restart of the server: {@link TickHandler}'s
 * schedule every second runs each slot once (one job per slot, consecutive slots); the admin REST
 * API lists, pauses, resumes, triggers and deletes schedules, with 404 problems for unknown names
 * and 403 without the role; after a graceful restart on the same data directory the every-second
 * schedule is unchanged (no "created" or "replaced" line), the deleted yearly one is declared
 * again, and the slots missed while the server was down each got a job (missed runs RUN_EACH, limit
 * 100): no slot twice and none missing from the first slot to seconds after the restart.
 */
@Tag("payara")
class ScheduleOnPayaraIT {

  private static final String ADMIN =
      "Basic "
          + Base64.getEncoder()
              .encodeToString(("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));
  private static final String VIEWER =
      "Basic "
          + Base64.getEncoder()
              .encodeToString(("viewer:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));

  private final HttpClient http = HttpClient.newHttpClient();
  private int port;

  @Test
  void runsEachSlotOnceOverARestartAndAnswersTheAdminApi() throws Exception {
    Path work = Payaras.work("schedule");
    Path war = work.resolve("sched.war");
    Wars.withKvmq(Wars.testWar("sched.war"))
        .addClasses(Tick.class, TickHandler.class, TestUsers.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml")
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    Path ticks = work.resolve("ticks.txt");
    Map<String, String> props =
        Map.of("kvmq.data-dir", work.resolve("data").toString(), "kvmq.it.ticks", ticks.toString());
    port = ServerProcess.freePort();

    Instant firstStop;
    try (ServerProcess payara = Payaras.start(work, war, port, props, "first.log")) {
      assertThat(payara.log()).doesNotContain("Exception while loading the app");
      Runs runs =
          Wait.until(
              "three slots of every-second in " + ticks,
              Duration.ofSeconds(30),
              () -> Runs.read(ticks),
              r -> r.jobsBySlot("every-second").size() >= 3);
      assertThat(runs.all()).allSatisfy(r -> assertThat(r.label()).isEqualTo("tick"));
      assertThat(payara.log())
          .contains("kvmq: schedule \"every-second\" of queue \"ticks\" created")
          .contains("kvmq: schedule \"yearly\" of queue \"ticks\" created");

      rest(ticks);

      assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
      firstStop = Instant.now();
    }

    Instant restarted;
    try (ServerProcess payara = Payaras.start(work, war, port, props, "second.log")) {
      restarted = Instant.now();
      assertThat(payara.log()).doesNotContain("Exception while loading the app");
      Wait.until(
          "slots of every-second after the restart",
          Duration.ofSeconds(60),
          () -> Runs.read(ticks),
          r -> r.reached("every-second", restarted.plusSeconds(8)));
      String log = payara.log();
      assertThat(log)
          .as("the same definition again writes nothing and says nothing")
          .doesNotContain("\"every-second\" of queue \"ticks\" created")
          .doesNotContain("\"every-second\" of queue \"ticks\" replaced");
      assertThat(log)
          .as("the yearly schedule deleted over REST is declared again")
          .contains("kvmq: schedule \"yearly\" of queue \"ticks\" created");
      assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
    }

    Map<Instant, Set<String>> slots = Runs.read(ticks).jobsBySlot("every-second");
    Instant first = slots.keySet().iterator().next();
    Instant end = restarted.plusSeconds(5).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    assertThat(Duration.between(firstStop, restarted))
        .as("the server was down for some slots")
        .isGreaterThan(Duration.ofSeconds(2));
    for (Instant t = first; !t.isAfter(end); t = t.plusSeconds(1)) {
      assertThat(slots.get(t))
          .as("the jobs of slot %s (first %s, down %s to %s)", t, first, firstStop, restarted)
          .isNotNull()
          .hasSize(1);
    }
    assertThat(slots.values()).as("no slot has two jobs").allSatisfy(j -> assertThat(j).hasSize(1));
  }

  /** The admin API's schedule endpoints, on the running server. */
  private void rest(Path ticks) throws Exception {
    String base = "/sched/kvmq/queues/ticks/schedules";
    HttpResponse<String> list = send("GET", base, ADMIN);
    assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
    JsonArray all = json(list.body()).asJsonArray();
    assertThat(all).hasSize(2);
    JsonObject every = all.getJsonObject(0);
    assertThat(every.getString("name")).isEqualTo("every-second");
    assertThat(every.getString("every")).isEqualTo("PT1S");
    assertThat(every.getString("anchor")).isEqualTo("1970-01-01T00:00:00Z");
    assertThat(every.getString("missed")).isEqualTo("run-each");
    assertThat(every.getInt("missedLimit")).isEqualTo(100);
    assertThat(every.getString("overlap")).isEqualTo("allow");
    assertThat(every.getBoolean("paused")).isFalse();
    assertThat(every.getJsonObject("state").getString("label")).isEqualTo("tick");
    assertThat(Instant.parse(every.getString("nextDue"))).isAfter(Instant.now().minusSeconds(5));
    assertThat(every.containsKey("lastSlot")).isTrue();
    assertThat(every.containsKey("lastJobId")).isTrue();
    JsonObject yearly = all.getJsonObject(1);
    assertThat(yearly.getString("name")).isEqualTo("yearly");
    assertThat(yearly.getString("cron")).isEqualTo("0 0 1 1 *");
    assertThat(yearly.getString("zone")).isEqualTo("Europe/Paris");
    assertThat(yearly.containsKey("lastSlot")).as("never ran").isFalse();

    assertThat(send("POST", base + "/yearly/pause", ADMIN).statusCode()).isEqualTo(204);
    JsonObject paused = json(send("GET", base + "/yearly", ADMIN).body()).asJsonObject();
    assertThat(paused.getBoolean("paused")).isTrue();
    assertThat(paused.containsKey("nextDue")).as("a paused schedule is not due").isFalse();
    assertThat(send("POST", base + "/yearly/resume", ADMIN).statusCode()).isEqualTo(204);
    JsonObject resumed = json(send("GET", base + "/yearly", ADMIN).body()).asJsonObject();
    assertThat(resumed.getBoolean("paused")).isFalse();
    assertThat(Instant.parse(resumed.getString("nextDue"))).isAfter(Instant.now());

    HttpResponse<String> trigger = send("POST", base + "/yearly/trigger", ADMIN);
    assertThat(trigger.statusCode()).as(trigger.body()).isEqualTo(201);
    JsonObject job = json(trigger.body()).asJsonObject();
    assertThat(job.getString("schedule")).isEqualTo("yearly");
    assertThat(job.getJsonObject("state").getString("label")).isEqualTo("new year");
    Instant slot = Instant.parse(job.getString("slot"));
    assertThat(slot).isBetween(Instant.now().minusSeconds(60), Instant.now().plusSeconds(1));
    Wait.until(
        "the triggered job to run",
        () -> Runs.read(ticks).all(),
        runs ->
            runs.stream()
                .anyMatch(
                    r -> r.jobId().equals(job.getString("id")) && r.label().equals("new_year")));
    JsonObject afterTrigger = json(send("GET", base + "/yearly", ADMIN).body()).asJsonObject();
    assertThat(afterTrigger.getString("lastJobId")).isEqualTo(job.getString("id"));

    assertThat(send("DELETE", base + "/yearly", ADMIN).statusCode()).isEqualTo(204);
    problem(send("GET", base + "/yearly", ADMIN), 404, "no schedule \"yearly\"");
    problem(send("POST", base + "/yearly/trigger", ADMIN), 404, "no schedule \"yearly\"");
    problem(send("POST", base + "/nope/pause", ADMIN), 404, "no schedule \"nope\"");
    problem(send("DELETE", base + "/yearly", ADMIN), 404, "no schedule \"yearly\"");
    problem(send("GET", "/sched/kvmq/queues/nope/schedules", ADMIN), 404, "no queue named");
    // the security constraint of web.xml refuses a user without the role, as for every endpoint
    assertThat(send("POST", base + "/every-second/pause", VIEWER).statusCode()).isEqualTo(403);
    assertThat(
            json(send("GET", base + "/every-second", ADMIN).body())
                .asJsonObject()
                .getBoolean("paused"))
        .as("the refused pause did nothing")
        .isFalse();
    assertThat(json(send("GET", base, ADMIN).body()).asJsonArray())
        .extracting(v -> v.asJsonObject().getString("name"))
        .containsExactly("every-second");
  }

  private void problem(HttpResponse<String> r, int status, String detail) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(json(r.body()).asJsonObject().getString("detail")).contains(detail);
  }

  private HttpResponse<String> send(String method, String path, String auth) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
            .header("Authorization", auth)
            .header("Accept", "application/json")
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonValue json(String body) {
    return Json.createReader(new StringReader(body)).readValue();
  }
}
