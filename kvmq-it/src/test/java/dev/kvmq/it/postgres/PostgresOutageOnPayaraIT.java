package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.AdminApi;
import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import dev.kvmq.store.postgres.PostgresKvStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * kvmq on PostgreSQL on Payara Micro while the database is down, with the pool settings that
 * docs/jakarta.md gives for Payara ({@code fish.payara.is-connection-validation-required}, {@code
 * connection-validation-method=auto-commit}, {@code fail-all-connections}): PostgreSQL is stopped
 * under the running application and started again on the same data directory and port.
 *
 * <p>During the outage the admin API answers 503 {@code application/problem+json} with the store's
 * message and no stack trace, a push included, and readiness is DOWN; kvmq logs the outage once for
 * each part that meets it (the store's calls, its change listener, the worker's pass), not once per
 * request. After it, readiness comes back UP, the API answers, a job that came due during the
 * outage runs, and a new push runs: every job pushed completed after one attempt, none is left.
 *
 * <p>Payara is started as a process, so that its log can be read; the database is the test's own
 * (not {@code PgServer}'s, which the other ITs share).
 */
@Tag("payara")
class PostgresOutageOnPayaraIT {

  /** A log record at WARNING (900) or SEVERE (1000) of a kvmq logger, as Payara prints it. */
  private static final Pattern KVMQ_WARNING_OR_WORSE =
      Pattern.compile(
          "\\[(dev\\.kvmq[\\w.$]*)\\S*\\] \\[tid: [^\\]]*\\] \\[timeMillis: \\d+\\]"
              + " \\[levelValue: (900|1000)\\]");

  /** The logger of a worker's outage warning ({@code Reporter.failing}). */
  private static final String WORKER_LOGGER = "dev.kvmq.Worker";

  private final AdminApi api = new AdminApi();

  @Test
  void theApiAnswers503DuringAnOutageAndEveryJobRunsAfterIt() throws Exception {
    Path work = Payaras.work("pg-outage");
    Path data = work.resolve("pgdata");
    int pgPort = ServerProcess.freePort();
    EmbeddedPostgres postgres = startOn(data, pgPort);
    try {
      Path war = work.resolve("kvmq-pg-outage.war");
      war(postgres.getJdbcUrl("postgres", "postgres")).as(ZipExporter.class).exportTo(war.toFile());
      int port = ServerProcess.freePort();
      URI root = URI.create("http://127.0.0.1:" + port + "/kvmq-pg-outage/");
      URI ready = URI.create("http://127.0.0.1:" + port + "/health/ready");
      try (ServerProcess payara = Payaras.start(work, war, port, Map.of(), "payara.log")) {
        Wait.until(
            "the admin API to answer",
            Duration.ofMinutes(2),
            () -> {
              payara.assertAlive();
              return send("GET", root.resolve("kvmq/queues"), null).statusCode() == 200;
            });
        String now = pushed(root, "{\"state\":{\"label\":\"now\"}}");
        awaitCompleted(root, 1);
        // due during the outage: it must run once the database is back
        String due = pushed(root, "{\"state\":{\"label\":\"due\"},\"delay\":\"PT2S\"}");
        int logBefore = payara.log().length();

        postgres.close();
        postgres = null;

        HttpResponse<String> listed =
            Wait.until(
                "GET /kvmq/queues to fail with the store",
                Duration.ofMinutes(1),
                () -> send("GET", root.resolve("kvmq/queues"), null),
                r -> r.statusCode() != 200);
        assertStoreProblem(listed);
        for (int i = 0; i < 10; i++) {
          assertStoreProblem(send("GET", root.resolve("kvmq/queues/notes"), null));
        }
        HttpResponse<String> push =
            send(
                "POST",
                root.resolve("kvmq/queues/notes/jobs"),
                "{\"state\":{\"label\":\"refused\"}}");
        assertStoreProblem(push);
        // the push's commit failed: the problem names the job it would have stored
        String refused = object(push).getJsonArray("jobIds").getString(0);
        HttpResponse<String> down =
            Wait.until(
                "readiness DOWN",
                Duration.ofMinutes(1),
                () -> send("GET", ready, null),
                r -> r.statusCode() == 503);
        assertThat(down.body()).contains("kvmq");

        // The outage, once for each part that met it, not once per request (12 failed): the
        // store's calls and its change listener; and the worker, when a pass ran during the
        // outage (the listener's failure asks for one; the due job's wake is 2 s after its push).
        List<String> warned = kvmqWarnings(payara.log().substring(logBefore));
        assertThat(warned)
            .as("kvmq's warnings during the outage (12 failed requests)")
            .allMatch(
                logger ->
                    logger.startsWith("dev.kvmq.store.postgres.") || logger.equals(WORKER_LOGGER));
        assertThat(warned.stream().filter(logger -> logger.startsWith("dev.kvmq.store.postgres.")))
            .as("the store's warnings: the outage of its calls and of its listener, once each")
            .hasSizeLessThanOrEqualTo(2);
        assertThat(warned.stream().filter(WORKER_LOGGER::equals))
            .as("the worker's warnings: the outage, once if a pass met it")
            .hasSizeLessThanOrEqualTo(1);

        postgres = startOn(data, pgPort);
        long restarted = System.nanoTime();

        Wait.until(
            "readiness UP after the restart",
            Duration.ofMinutes(1),
            () -> send("GET", ready, null).statusCode() == 200);
        System.out.printf(
            "pg outage test: readiness UP %d ms after PostgreSQL started again; kvmq's warnings"
                + " during the outage: %s%n",
            Duration.ofNanos(System.nanoTime() - restarted).toMillis(), warned);
        assertThat(
                send("GET", root.resolve("kvmq/queues/notes/jobs/" + refused), null).statusCode())
            .as("the refused push's job, looked up after the restart: never stored")
            .isEqualTo(404);
        String after = pushed(root, "{\"state\":{\"label\":\"after\"}}");
        JsonObject activity = awaitCompleted(root, 3);
        assertThat(activity.getInt("dead")).as(activity.toString()).isZero();
        JsonObject queue = object(send("GET", root.resolve("kvmq/queues/notes"), null));
        assertThat(queue.getInt("waiting") + queue.getInt("delayed") + queue.getInt("processing"))
            .as("jobs left: " + queue)
            .isZero();
        for (String id : List.of(now, due, after)) {
          JsonObject job = object(send("GET", root.resolve("kvmq/queues/notes/jobs/" + id), null));
          assertThat(job.getString("status")).as(job.toString()).isEqualTo("completed");
          assertThat(job.getJsonArray("attempts")).as("ran once: " + job).hasSize(1);
        }
        assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
      }
    } finally {
      if (postgres != null) {
        postgres.close();
      }
    }
  }

  private static org.jboss.shrinkwrap.api.spec.WebArchive war(String url) {
    // The DataSource as docs/jakarta.md recommends on Payara: connections validated before use,
    // and all of them dropped when one is found dead.
    String dataSource =
        """
          <data-source>
            <name>java:app/jdbc/kvmq</name>
            <class-name>org.postgresql.ds.PGSimpleDataSource</class-name>
            <url>%s</url>
            <user>postgres</user>
            <password>postgres</password>
            <transactional>false</transactional>
            <property>
              <name>fish.payara.is-connection-validation-required</name>
              <value>true</value>
            </property>
            <property>
              <name>fish.payara.connection-validation-method</name>
              <value>auto-commit</value>
            </property>
            <property>
              <name>fish.payara.fail-all-connections</name>
              <value>true</value>
            </property>
          </data-source>
        """
            .formatted(url);
    return Wars.withKvmq(Wars.testWar("kvmq-pg-outage.war"))
        .addAsLibraries(Wars.jarOf(PostgresKvStore.class), Wars.jarOf(org.postgresql.Driver.class))
        .addClasses(TestUsers.class, Note.class, NoteHandler.class, Notes.class)
        .addAsResource(
            new StringAsset(
                "kvmq.rest.enabled=true\n"
                    + "kvmq.store=postgres\n"
                    + "kvmq.postgres.datasource=java:app/jdbc/kvmq\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(
            new StringAsset(
                KvmqWars.SECURE_WEB_XML.replace("</web-app>", dataSource + "</web-app>")),
            "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  private static EmbeddedPostgres startOn(Path data, int port) {
    try {
      return EmbeddedPostgres.builder()
          .setDataDirectory(data)
          .setCleanDataDirectory(false)
          .setPort(port)
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start on " + data, e);
    }
  }

  /** A 503 problem with the store's message: no stack trace, no exception's class name. */
  private static void assertStoreProblem(HttpResponse<String> r) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    JsonObject problem = object(r);
    assertThat(problem.getInt("status")).isEqualTo(503);
    assertThat(problem.getString("detail"))
        .as(r.body())
        .contains("the store is failing")
        .doesNotContain("Exception", "\tat ");
  }

  private String pushed(URI root, String body) {
    HttpResponse<String> r = send("POST", root.resolve("kvmq/queues/notes/jobs"), body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    return object(r).getString("id");
  }

  private JsonObject awaitCompleted(URI root, int completed) {
    return Wait.until(
        completed + " jobs completed",
        Duration.ofMinutes(1),
        () -> object(send("GET", root.resolve("kvmq/queues/notes/activity"), null)),
        a -> a.getInt("completed") >= completed);
  }

  /** The loggers of kvmq's records at WARNING or SEVERE in a piece of Payara's log. */
  private static List<String> kvmqWarnings(String log) {
    Matcher m = KVMQ_WARNING_OR_WORSE.matcher(log.replaceAll("\u001B\\[[0-9;]*m", ""));
    List<String> loggers = new java.util.ArrayList<>();
    while (m.find()) {
      loggers.add(m.group(1));
    }
    return loggers;
  }

  private HttpResponse<String> send(String method, URI uri, String body) {
    return api.send(method, uri, body);
  }

  private static JsonObject object(HttpResponse<String> r) {
    try (JsonReader reader = Json.createReader(new StringReader(r.body()))) {
      return reader.readObject();
    }
  }
}
