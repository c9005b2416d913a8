package dev.kvmq.it.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jboss.shrinkwrap.api.exporter.ExplodedExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A redeploy on a running Payara Micro drains the running handlers and loses no job.
 *
 * <p>Payara Micro is started as a process with an exploded WAR; touching the WAR's {@code .reload}
 * file makes it undeploy and deploy the application again (Payara Micro's documented redeploy; its
 * Arquillian adapter cannot undeploy without stopping the server). The WAR is kvmq-it-support's
 * lifecycle test application; the server runs with {@code kvmq.shutdown-timeout=PT3S} and {@code
 * kvmq.queue.work.concurrency=1}: the handler runs one job at a time. Two reloads:
 *
 * <ol>
 *   <li>while a cooperative handler runs and another job waits: the handler is told {@code
 *       WORKER_STOPPING}, returns, and its completion is recorded ({@code @Observes JobCompleted});
 *       it does not run again. The waiting job is not claimed while the old deployment stops,
 *       although the handler's slot is free by then: it first runs in the new deployment, with
 *       attempt 1 and token 1 (every claim adds one to both);
 *   <li>while a stubborn handler runs, which works on for 10 s after the signal, longer than the
 *       timeout, however late the reload comes: the undeploy goes on without it (kvmq logs that
 *       handlers are still running), its outcome is never recorded, and in the new deployment its
 *       job runs again once its lease has expired (attempt 2, token 2).
 * </ol>
 */
@Tag("payara")
class RedeployDrainIT {

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aRedeployDrainsRunningHandlersAndLosesNoJob() throws Exception {
    Path work = Payaras.work("redeploy");
    Path app = work.resolve("kvmq-it");
    KvmqWars.withLifecycleApp(Wars.withKvmq(Wars.testWar("kvmq-it.war")))
        .as(ExplodedExporter.class)
        .exportExplodedInto(app.toFile());
    Path journal = work.resolve("journal.txt");
    int port = ServerProcess.freePort();
    Map<String, String> properties =
        Map.of(
            "kvmq.data-dir",
            work.resolve("data").toString(),
            "kvmq.shutdown-timeout",
            "PT3S",
            "kvmq.queue.work.concurrency",
            "1",
            "kvmq.it.journal",
            journal.toString());
    String base = "http://127.0.0.1:" + port + "/kvmq-it/control?";

    try (ServerProcess payara = Payaras.start(work, app, port, properties, "payara.log")) {
      String first =
          Wait.until(
              "the application to answer",
              Duration.ofMinutes(2),
              () -> {
                payara.assertAlive();
                return get(base + "op=ping");
              },
              id -> !id.isEmpty());

      // 1. A cooperative handler runs and a job waits.
      String cooperative = get(base + "op=push&label=cooperative&mode=cooperative");
      Wait.until(
          "the cooperative handler to start",
          () -> Fact.read(journal),
          j -> Fact.has(j, "start", cooperative));
      String waiting = get(base + "op=push&label=waiting&mode=quick");
      assertThat(get(base + "op=job&id=" + waiting))
          .as("the only slot is busy")
          .isEqualTo("WAITING|0|0");

      String second = reload(payara, app, base, first);

      List<Fact> one =
          Wait.until(
              "the waiting job to complete in the new deployment",
              Duration.ofMinutes(2),
              () -> Fact.read(journal),
              j -> Fact.has(j, "completed", waiting));
      assertThat(one)
          .as("the cooperative handler was told, returned, and its outcome was recorded")
          .anyMatch(f -> f.is("cancel", cooperative) && f.detail().equals("WORKER_STOPPING"))
          .anyMatch(f -> f.is("end", cooperative) && f.detail().equals("WORKER_STOPPING"))
          .anyMatch(f -> f.is("completed", cooperative) && f.token() == 1);
      assertThat(one)
          .as("the waiting job was first claimed in the new deployment")
          .filteredOn(f -> f.is("start", waiting))
          .singleElement()
          .satisfies(f -> assertThat(f.attempt()).isEqualTo(1))
          .satisfies(f -> assertThat(f.token()).isEqualTo(1));
      assertThat(payara.log())
          .as("the first undeploy waited for no one")
          .doesNotContain("kvmq: handlers still running after");

      // 2. A stubborn handler runs past kvmq.shutdown-timeout.
      String stubborn = answered(base + "op=push&label=stubborn&mode=stubborn&workMs=10000");
      Wait.until(
          "the stubborn handler to start",
          () -> Fact.read(journal),
          j -> Fact.has(j, "start", stubborn));

      reload(payara, app, base, second);

      List<Fact> two =
          Wait.until(
              "the cut-off job to complete in the new deployment",
              // Payara may notice the reload late (a CI run on 2026-12-06 saw the old deployment
              // stop about 30 s after the touch); then the cut-off job waits out its lease
              Duration.ofMinutes(2),
              () -> Fact.read(journal),
              j -> Fact.has(j, "completed", stubborn));
      assertThat(payara.log())
          .as("the undeploy did not wait for the stubborn handler")
          .contains("kvmq: handlers still running after PT3S");
      assertThat(two)
          .as("the stubborn handler was told too")
          .anyMatch(
              f ->
                  f.is("cancel", stubborn)
                      && f.token() == 1
                      && f.detail().equals("WORKER_STOPPING"));
      assertThat(two)
          .as("the cut-off run's outcome was never recorded")
          .noneMatch(
              f -> (f.is("completed", stubborn) || f.is("failed", stubborn)) && f.token() == 1);
      assertThat(two)
          .as("the cut-off job ran again after its lease expired")
          .filteredOn(f -> f.is("start", stubborn))
          .extracting(Fact::attempt)
          .containsExactly(1, 2);
      assertThat(two)
          .filteredOn(f -> f.is("completed", stubborn))
          .singleElement()
          .satisfies(f -> assertThat(f.token()).isEqualTo(2));

      assertThat(two)
          .as("every job ran to completion once more than it was cut off")
          .filteredOn(f -> f.kind().equals("start"))
          .extracting(Fact::jobId)
          .containsExactly(cooperative, waiting, stubborn, stubborn);
      assertThat(two).as("no outcome was refused").noneMatch(f -> f.kind().equals("lease-lost"));
      assertThat(answered(base + "op=counts"))
          .contains("waiting=0", "delayed=0", "processing=0", "dead=0");
    }
  }

  /**
   * Touches the exploded WAR's {@code .reload} and waits until a new deployment answers.
   *
   * <p>Payara's reloader compares the file's time with the time at which it first noted the
   * application, which can come after the test's first touch on a loaded machine; so the file is
   * touched again (every 2 s) for as long as the old deployment still answers.
   */
  private String reload(ServerProcess payara, Path app, String base, String before)
      throws IOException {
    Path reload = app.resolve(".reload");
    Long[] touched = {null};
    return Wait.until(
        "a new deployment to answer",
        Duration.ofMinutes(2),
        () -> {
          payara.assertAlive();
          String id = get(base + "op=ping");
          if (id.equals(before)
              && (touched[0] == null || System.nanoTime() - touched[0] > 2_000_000_000L)) {
            Files.writeString(reload, "");
            Files.setLastModifiedTime(reload, FileTime.from(Instant.now()));
            touched[0] = System.nanoTime();
          }
          return id;
        },
        id -> !id.equals(before));
  }

  /**
   * {@link #get} once the application answers: a touch of {@code .reload} that Payara noticed late
   * can redeploy it once more after {@link #reload} saw the new deployment (a CI run got a 404
   * here), and a request that gets a 404 never reached the application.
   */
  private String answered(String url) {
    return Wait.until(
        "the application to answer " + url, Duration.ofMinutes(1), () -> get(url), s -> true);
  }

  private String get(String url) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException(url + " answered " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }
}
