package dev.kvmq.it.held;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Held jobs on Payara Micro 6 with the EclipseStore store, which can't join a JTA transaction: a
 * push in a transaction is held at once and returned; a commit releases it and it runs, a rollback
 * removes it; a push in a transaction marked for rollback is refused and writes nothing. Then a
 * transaction holds a job and stays open while Payara is killed with SIGKILL: after a restart on
 * the same data directory the job is held, and under the default policy ({@code keep}) it does not
 * run while other jobs do, until an operator releases it.
 *
 * <p>Payara is started as a process, so that it can be killed.
 */
@Tag("payara")
class HeldOnPayaraIT {

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void commitRunsRollbackRemovesAndAKillBeforeTheCommitLeavesAHeldJobForTheOperator()
      throws Exception {
    Path work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve("held-" + System.nanoTime()));
    Path war = work.resolve("receipts.war");
    Wars.withKvmq(Wars.testWar("receipts.war"))
        .addClasses(Receipt.class, ReceiptHandler.class, ReceiptServlet.class)
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    Random random = new Random(18);
    String heldJob;

    int port = ServerProcess.freePort();
    try (ServerProcess payara = start(work, war, port, "payara-1.log")) {
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
    try (ServerProcess payara = start(work, war, port2, "payara-2.log")) {
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

      assertThat(get(port2, "op=release&job=" + heldJob)).isEqualTo("released 1");
      Wait.until("the released job ran", Duration.ofMinutes(1), () -> ran(port2).contains("open"));
      assertThat(get(port2, "op=status&job=" + heldJob)).isEqualTo("absent");
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

  private static HttpRequest request(int port, String query) {
    return HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/receipts/receipts?" + query))
        .timeout(Duration.ofSeconds(30))
        .GET()
        .build();
  }

  private static ServerProcess start(Path work, Path war, int port, String log) throws Exception {
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        List.of(
            java,
            "-Djava.io.tmpdir=" + tmp,
            "-Dkvmq.data-dir=" + work.resolve("data"),
            "-jar",
            System.getProperty("payara.microJar"),
            "--deploy",
            war.toString(),
            "--port",
            Integer.toString(port),
            "--nohazelcast");
    return ServerProcess.start(command, work, Map.of(), work.resolve(log));
  }
}
