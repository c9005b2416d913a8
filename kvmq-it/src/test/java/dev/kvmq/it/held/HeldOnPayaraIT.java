package dev.kvmq.it.held;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Held jobs on Payara Micro 6 with the EclipseStore store, which can't join a JTA transaction: a
 * push in a transaction is held at once and returned; a commit releases it and it runs, a rollback
 * removes it; a push in a transaction marked for rollback is refused and writes nothing. Then a
 * transaction holds a job and stays open while Payara is killed with SIGKILL: after a restart on
 * the same data directory the job is held, and under the default policy ({@code keep}) it does not
 * run while other jobs do, until an operator releases it over the admin REST API (listed as held;
 * 403 without the role, 404 for an unknown job, 204), and then it runs.
 *
 * <p>Payara is started as a process, so that it can be killed.
 */
@Tag("payara")
class HeldOnPayaraIT {

  private static final String ADMIN = basic("admin");
  private static final String VIEWER = basic("viewer");

  private final HttpClient http = HttpClient.newHttpClient();

  private static String basic(String user) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void commitRunsRollbackRemovesAndAKillBeforeTheCommitLeavesAHeldJobForTheOperator()
      throws Exception {
    Path work = Payaras.work("held");
    Path war = work.resolve("receipts.war");
    Wars.withKvmq(Wars.testWar("receipts.war"))
        .addClasses(Receipt.class, ReceiptHandler.class, ReceiptServlet.class, TestUsers.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml")
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    Random random = new Random(18);
    String heldJob;

    int port = ServerProcess.freePort();
    try (ServerProcess payara =
        Payaras.start(
            work,
            war,
            port,
            Map.of("kvmq.data-dir", work.resolve("data").toString()),
            "payara-1.log")) {
      awaitPing(payara, port);
      Set<String> committed = new TreeSet<>();
      Map<String, String> rolledBack = new HashMap<>(); // receipt -> job id
      for (int i = 0; i < 20; i++) {
        String id = "r" + i;
        boolean rollback = random.nextInt(3) == 0;
        String answer = get(port, "op=place&id=" + id + "&rollback=" + rollback);
        if (rollback) {
          assertThat(answer).startsWith("rolled-back ");
          rolledBack.put(id, answer.substring("rolled-back ".length()));
        } else {
          assertThat(answer).startsWith("committed ");
          committed.add(id);
        }
      }
      Wait.until(
          "every committed receipt ran", Duration.ofMinutes(1), () -> ran(port).equals(committed));
      for (String job : rolledBack.values()) {
        assertThat(get(port, "op=status&job=" + job)).as("rolled back %s", job).isEqualTo("absent");
      }

      String before = get(port, "op=counts");
      assertThat(get(port, "op=rollback-only&id=doomed"))
          .startsWith("refused: ")
          .contains("marked for rollback", "nothing was pushed");
      assertThat(get(port, "op=counts")).as("nothing written").isEqualTo(before);

      CompletableFuture<HttpResponse<Stream<String>>> open =
          http.sendAsync(request(port, "op=open&id=open"), HttpResponse.BodyHandlers.ofLines());
      String line = open.get().body().findFirst().orElseThrow();
      assertThat(line).startsWith("held ");
      heldJob = line.substring("held ".length()).trim();
      assertThat(get(port, "op=status&job=" + heldJob)).isEqualTo("HELD");
      payara.kill(); // inside the open transaction, between the held write and the commit
    }

    int port2 = ServerProcess.freePort();
    try (ServerProcess payara =
        Payaras.start(
            work,
            war,
            port2,
            Map.of("kvmq.data-dir", work.resolve("data").toString()),
            "payara-2.log")) {
      awaitPing(payara, port2);
      assertThat(get(port2, "op=status&job=" + heldJob)).as("after the restart").isEqualTo("HELD");
      assertThat(get(port2, "op=place&id=after&rollback=false")).startsWith("committed ");
      Wait.until(
          "a job committed after the restart ran",
          Duration.ofMinutes(1),
          () -> ran(port2).contains("after"));
      assertThat(ran(port2)).as("keep: the held job does not run").doesNotContain("open");
      assertThat(get(port2, "op=status&job=" + heldJob)).isEqualTo("HELD");
      assertThat(get(port2, "op=counts")).contains("held=1");

      assertThat(rest(port2, "GET", "/jobs?status=held", ADMIN).body())
          .as("the admin API lists it as held")
          .contains("\"id\":\"" + heldJob + "\"", "\"status\":\"held\"");
      String release = "/jobs/" + heldJob + "/release";
      assertThat(rest(port2, "POST", release, VIEWER).statusCode())
          .as("release without the role")
          .isEqualTo(403);
      assertThat(rest(port2, "POST", "/jobs/01NOTAJOB000000000000000000/release", ADMIN))
          .as("release of an unknown job")
          .extracting(HttpResponse::statusCode)
          .isEqualTo(404);
      assertThat(rest(port2, "POST", release, ADMIN).statusCode())
          .as("the operator releases it over REST")
          .isEqualTo(204);
      Wait.until("the released job ran", Duration.ofMinutes(1), () -> ran(port2).contains("open"));
      assertThat(get(port2, "op=status&job=" + heldJob))
          .as("it ran and is kept as completed")
          .isEqualTo("COMPLETED");
      assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
    }
  }

  private Set<String> ran(int port) throws Exception {
    String body = get(port, "op=ran");
    return body.isEmpty() ? Set.of() : new TreeSet<>(List.of(body.split(",")));
  }

  private String get(int port, String query) throws Exception {
    HttpResponse<String> r = http.send(request(port, query), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s: %s", query, r.body()).isEqualTo(200);
    return r.body().trim();
  }

  private void awaitPing(ServerProcess payara, int port) {
    Wait.until(
        "the application to answer",
        Duration.ofMinutes(2),
        () -> {
          payara.assertAlive();
          try {
            HttpResponse<String> r =
                http.send(request(port, "op=ping"), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 && r.body().equals("ok");
          } catch (java.io.IOException e) {
            return false;
          }
        });
  }

  /** Calls the admin API of queue {@code receipts}. */
  private HttpResponse<String> rest(int port, String method, String path, String authorization)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/receipts/kvmq/queues/receipts" + path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", authorization)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static HttpRequest request(int port, String query) {
    return HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/receipts/receipts?" + query))
        .timeout(Duration.ofSeconds(30))
        .GET()
        .build();
  }
}
