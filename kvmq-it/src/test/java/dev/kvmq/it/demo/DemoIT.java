package dev.kvmq.it.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The demo as the README starts it: {@code ./run-demo.sh} with a free port, a fresh data directory
 * and a set password. Fifty jobs are pushed over REST, the server is killed with SIGKILL while they
 * run, and started again on the same data directory: every label reaches the journal (at least
 * once). Then a graceful stop lets a running job finish.
 */
@Tag("payara")
class DemoIT {

  private static final String PASSWORD = "it-secret";
  private static final int JOBS = 50;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void jobsSurviveAKilledServer() throws Exception {
    Path root = Path.of(System.getProperty("kvmq.it.root", "..")).toAbsolutePath().normalize();
    Path work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve("demo-" + System.nanoTime()));
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    Path data = work.resolve("data");
    Path journal = data.resolve("journal.log");
    int port = ServerProcess.freePort();
    String base = "http://localhost:" + port;

    Map<String, String> env = new HashMap<>();
    env.put("KVMQ_DEMO_PORT", Integer.toString(port));
    env.put("KVMQ_DATA_DIR", data.toString());
    env.put("KVMQ_ADMIN_PASSWORD", PASSWORD);
    env.put("JAVA_OPTS", "-Djava.io.tmpdir=" + tmp);
    List<String> command = List.of("bash", root.resolve("run-demo.sh").toString());

    Set<String> labels =
        IntStream.rangeClosed(1, JOBS)
            .mapToObj(i -> "job-" + i)
            .collect(Collectors.toCollection(TreeSet::new));

    // 1. Start as the README says (this builds the demo), push, kill mid-work.
    try (ServerProcess first = ServerProcess.start(command, root, env, work.resolve("first.log"))) {
      awaitHomePage(first, base, Duration.ofMinutes(5));
      assertThat(first.log()).contains("password:  " + PASSWORD);

      for (String label : labels) {
        HttpResponse<String> pushed =
            send(
                HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo/jobs"))
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"state\": {\"label\": \""
                                + label
                                + "\", \"workMs\": 300, \"failAttempts\": 0}}")));
        assertThat(pushed.statusCode()).as(pushed.body()).isEqualTo(201);
      }
      Wait.until(
          "a few jobs done before the kill",
          Duration.ofSeconds(60),
          () -> doneLabels(journal).size(),
          n -> n >= 5);

      long javaPid = first.handle().pid(); // run-demo.sh exec's the JVM: same process
      first.kill();
      assertThat(ProcessHandle.of(javaPid).filter(ProcessHandle::isAlive))
          .as("Payara's JVM")
          .isEmpty();
      assertThat(doneLabels(journal)).as("killed mid-work").hasSizeLessThan(JOBS);
    }

    // 2. Start again on the same data directory, without rebuilding: the rest get done.
    env.put("KVMQ_DEMO_SKIP_BUILD", "1");
    try (ServerProcess second =
        ServerProcess.start(command, root, env, work.resolve("second.log"))) {
      awaitHomePage(second, base, Duration.ofMinutes(2));
      Wait.until(
          "every label in the journal after the restart",
          Duration.ofSeconds(120),
          () -> doneLabels(journal),
          done -> done.containsAll(labels));

      // A malformed Authorization header is refused like a wrong password: 401, no stack trace.
      int logged = second.log().length();
      for (String header : List.of("Basic %%%", "Basic", "Basic bm8tY29sb24=")) {
        HttpResponse<String> refused =
            http.send(
                HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo"))
                    .header("Authorization", header)
                    .timeout(Duration.ofSeconds(30))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).as("Authorization: %s", header).isEqualTo(401);
      }
      assertThat(second.log().substring(logged))
          .as("the log while malformed headers came")
          .doesNotContain("\tat ", "JASPIC", "Exception");

      // 3. A graceful stop (SIGTERM) waits for the running handler.
      HttpResponse<String> slow =
          send(
              HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo/jobs"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"state\": {\"label\": \"slow\", \"workMs\": 3000, \"failAttempts\": 0}}")));
      assertThat(slow.statusCode()).isEqualTo(201);
      Wait.until(
          "the slow job to be processing",
          Duration.ofSeconds(30),
          () -> send(HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo")).GET()).body(),
          body -> body.contains("\"processing\":1"));
      assertThat(second.stop(Duration.ofSeconds(60))).as("stopped within 60 s").isTrue();
      assertThat(doneLabels(journal))
          .as("the running job finished before the server stopped")
          .contains("slow");
    }
  }

  private void awaitHomePage(ServerProcess server, String base, Duration timeout) {
    Wait.until(
        "the demo page at " + base + " (log: " + server.logFile() + ")",
        timeout,
        () -> {
          server.assertAlive();
          return http.send(
                  HttpRequest.newBuilder(URI.create(base + "/")).GET().build(),
                  HttpResponse.BodyHandlers.ofString())
              .statusCode();
        },
        code -> code == 200);
  }

  private HttpResponse<String> send(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    String auth =
        Base64.getEncoder().encodeToString(("admin:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
    return http.send(
        request.header("Authorization", "Basic " + auth).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The labels in the journal; each line is {@code <label> <jobId> <attempt>}. */
  private static Set<String> doneLabels(Path journal) throws IOException {
    if (!Files.exists(journal)) {
      return Set.of();
    }
    return Files.readAllLines(journal).stream()
        .filter(l -> !l.isBlank())
        .map(l -> l.split(" ")[0])
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
