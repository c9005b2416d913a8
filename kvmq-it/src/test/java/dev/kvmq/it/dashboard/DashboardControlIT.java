package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.ServerJvm;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * Job control and history from the dashboard, in a real headless browser (Debian's chromium,
 * through Selenium and chromedriver) against the demo on Payara Micro, started as the README starts
 * it ({@code run-demo.sh}, on the WAR the build just made), as {@code admin}: cancel two running
 * jobs with the Cancel… button and see their handlers stop, then page through the completed jobs
 * with the server's cursor ("Next page", "Previous page"). Screenshots go to {@code
 * target/dashboard-screenshots}.
 *
 * <p>The tests run in order on one server and one browser. The demo's queue runs two jobs at once;
 * its handler sleeps for the job's {@code workMs}.
 */
@Tag("payara")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardControlIT {

  private static final String PASSWORD = "it-dashboard-control";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private Path work;
  private Path journal;
  private Path shots;
  private String base;
  private ServerProcess demo;
  private Browser browser;

  @BeforeAll
  void startDemoAndBrowser() throws Exception {
    Path root = Path.of(System.getProperty("kvmq.it.root", "..")).toAbsolutePath().normalize();
    Path war = root.resolve("kvmq-demo/target/kvmq-demo.war");
    assertThat(war)
        .as("the demo WAR, built by the reactor before kvmq-it (mvn verify at the root)")
        .exists();
    work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve("dashboard-control-" + System.nanoTime()));
    shots =
        Path.of(System.getProperty("kvmq.it.screenshots", "target/dashboard-screenshots"))
            .toAbsolutePath();
    Path data = work.resolve("data");
    journal = data.resolve("journal.log");
    int port = ServerProcess.freePort();
    base = "http://localhost:" + port;

    Map<String, String> env = new HashMap<>();
    env.put("KVMQ_DEMO_PORT", Integer.toString(port));
    env.put("KVMQ_DATA_DIR", data.toString());
    env.put("KVMQ_ADMIN_PASSWORD", PASSWORD);
    env.put("KVMQ_GUEST_PASSWORD", "it-guest-control");
    env.put("KVMQ_DEMO_SKIP_BUILD", "1");
    env.put(
        "JAVA_OPTS",
        "-Djava.io.tmpdir="
            + Files.createDirectories(work.resolve("tmp"))
            + " "
            + ServerJvm.line());
    demo =
        ServerProcess.start(
            List.of("bash", root.resolve("run-demo.sh").toString()),
            root,
            env,
            work.resolve("demo.log"));
    Wait.until(
        "the demo page at " + base + " (log: " + demo.logFile() + ")",
        Duration.ofMinutes(3),
        () -> {
          demo.assertAlive();
          return http.send(
                  HttpRequest.newBuilder(URI.create(base + "/")).GET().build(),
                  HttpResponse.BodyHandlers.ofString())
              .statusCode();
        },
        code -> code == 200);
    browser =
        new Browser(
            Files.createDirectories(work.resolve("profile-admin")),
            "admin",
            PASSWORD,
            work.resolve("chromedriver-admin.log"));
  }

  @AfterAll
  void stop() {
    try {
      if (browser != null) {
        browser.close();
      }
    } finally {
      if (demo != null) {
        demo.close();
      }
    }
  }

  /**
   * Two jobs that would each sleep for ten minutes fill the queue's two slots; the Cancel… button
   * of each, confirmed, cancels it: the dashboard and the API show it cancelled, and its handler
   * stops (the job asks for its thread to be interrupted), so a third job pushed afterwards gets a
   * slot and runs within seconds. Had a handler gone on sleeping, the third job would wait ten
   * minutes.
   */
  @Test
  @Order(1)
  void cancellingRunningJobsFromTheDashboardStopsTheirHandlers() throws Exception {
    openQueue();
    List<String> running = new ArrayList<>();
    for (String label : List.of("cancel-me-1", "cancel-me-2")) {
      running.add(
          push(
              "{\"state\": {\"label\": \""
                  + label
                  + "\", \"workMs\": 600000, \"failAttempts\": 0}, \"interruptOnCancel\": true}"));
    }
    for (String id : running) {
      Wait.until(
          "job " + id + " running",
          Duration.ofSeconds(30),
          () -> job(id).getString("status"),
          "processing"::equals);
    }
    browser.screenshot(shots.resolve("control-running.png"));

    for (String id : running) {
      Wait.until("job " + id + " shown as processing", () -> cell(id, 3), "processing"::equals);
      // the dismissed confirmation changes nothing
      clickCancel(id);
      Alert ask =
          Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true);
      assertThat(ask.getText())
          .contains("Cancel processing job " + id)
          .contains("its handler is told to stop");
      ask.dismiss();
      assertThat(job(id).getString("status")).isEqualTo("processing");

      clickCancel(id);
      Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true).accept();
      Wait.until(
          "job " + id + " cancelled", () -> job(id).getString("status"), "cancelled"::equals);
      Wait.until(
          "job " + id + " gone from the waiting and running jobs",
          () ->
              browser
                  .driver
                  .findElements(By.cssSelector("#jobs tr[data-job='" + id + "']"))
                  .isEmpty());
      assertThat(browser.driver.findElement(By.id("announcer")).getText())
          .contains("Cancelled job " + id);
    }
    for (String id : running) {
      JsonObject j = job(id);
      assertThat(j.containsKey("cancelledAt")).as(j.toString()).isTrue();
      assertThat(j.getBoolean("interruptOnCancel")).isTrue();
    }

    String after =
        push("{\"state\": {\"label\": \"after-cancel\", \"workMs\": 0, \"failAttempts\": 0}}");
    Wait.until(
        "a job pushed after the cancels run (the cancelled handlers freed their slots)",
        Duration.ofSeconds(30),
        () -> doneLabels().contains("after-cancel"));
    Wait.until(
        "job " + after + " completed", () -> job(after).getString("status"), "completed"::equals);
    assertThat(doneLabels())
        .as("a cancelled job's handler never finishes its work")
        .doesNotContain("cancel-me-1", "cancel-me-2");

    new Select(browser.driver.findElement(By.id("f-status"))).selectByValue("cancelled");
    for (String id : running) {
      Wait.until("job " + id + " shown as cancelled", () -> cell(id, 3), "cancelled"::equals);
      Wait.until("when job " + id + " ended", () -> cell(id, 13), t -> !t.equals("–"));
    }
    browser.screenshot(shots.resolve("control-cancelled.png"));
    assertThat(listIds("cancelled")).containsExactlyInAnyOrderElementsOf(running);
  }

  /**
   * 30 more completed jobs (31 with the one above), 25 a page: the first page shows the 25 oldest
   * completions, "Next page" the other 6 through the server's cursor, and "Previous page" the first
   * again; together the pages are every completed job, each once.
   */
  @Test
  @Order(2)
  void theCompletedJobsArePagedWithTheCursor() throws Exception {
    for (int i = 0; i < 30; i++) {
      push("{\"state\": {\"label\": \"done-" + i + "\", \"workMs\": 0, \"failAttempts\": 0}}");
    }
    Wait.until("31 completed jobs", Duration.ofSeconds(60), () -> count("completed"), n -> n == 31);
    List<String> completed = listIds("completed");
    assertThat(completed).hasSize(31).doesNotHaveDuplicates();

    openQueue();
    new Select(browser.driver.findElement(By.id("f-limit"))).selectByVisibleText("25");
    new Select(browser.driver.findElement(By.id("f-status"))).selectByValue("completed");
    Wait.until(
        "the first page of completed jobs",
        () -> browser.driver.findElement(By.id("page-info")).getText(),
        "Jobs 1–25 of 31"::equals);
    List<String> first = Wait.until("25 rows", this::shownIds, ids -> ids.size() == 25);
    assertThat(first).containsExactlyElementsOf(completed.subList(0, 25));
    assertThat(browser.driver.findElement(By.id("page-prev")).isEnabled()).isFalse();
    browser.screenshot(shots.resolve("completed-page-1.png"));

    WebElement next = browser.driver.findElement(By.id("page-next"));
    assertThat(next.isEnabled()).isTrue();
    next.click();
    Wait.until(
        "the second page of completed jobs",
        () -> browser.driver.findElement(By.id("page-info")).getText(),
        "Jobs 26–31 of 31"::equals);
    List<String> second = Wait.until("6 rows", this::shownIds, ids -> ids.size() == 6);
    assertThat(second).containsExactlyElementsOf(completed.subList(25, 31));
    assertThat(browser.driver.findElement(By.id("page-next")).isEnabled())
        .as("the last page has no next")
        .isFalse();
    assertThat(browser.requests())
        .as("the page asked the server for the next page by its cursor")
        .anyMatch(r -> r.url().contains("/kvmq/queues/demo/list?") && r.url().contains("cursor="));
    browser.screenshot(shots.resolve("completed-page-2.png"));

    browser.driver.findElement(By.id("page-prev")).click();
    Wait.until(
        "the first page again",
        () -> browser.driver.findElement(By.id("page-info")).getText(),
        "Jobs 1–25 of 31"::equals);
    assertThat(Wait.until("25 rows", this::shownIds, ids -> ids.size() == 25))
        .containsExactlyElementsOf(first);
    Set<String> union = new TreeSet<>(first);
    union.addAll(second);
    assertThat(union).hasSize(31).containsExactlyInAnyOrderElementsOf(completed);
  }

  // ---- helpers

  private void openQueue() {
    browser.driver.get(base + "/kvmq/dashboard#/queue/demo");
    Wait.until(
        "the queue view with its counts",
        () -> browser.driver.findElement(By.id("q-state")).getText(),
        t -> t.equals("running") || t.equals("paused"));
  }

  /**
   * The text of column {@code n} of the job's row, read from the page as it is now (the list is
   * redrawn after events, so no element is kept).
   */
  private String cell(String id, int n) {
    return browser
        .driver
        .findElement(By.cssSelector("#jobs tr[data-job='" + id + "'] td:nth-child(" + n + ")"))
        .getText();
  }

  /**
   * Clicks the Cancel… button of the job's row, found again at each try (the list is redrawn after
   * events, which can make a button found a moment ago stale).
   */
  private void clickCancel(String id) {
    Wait.until(
        "a click on the Cancel… button of job " + id,
        () -> {
          browser
              .driver
              .findElement(
                  By.cssSelector(
                      "#jobs tr[data-job='" + id + "'] button[aria-label='Cancel job " + id + "']"))
              .click();
          return true;
        },
        clicked -> clicked);
  }

  /** The ids of the rows the page shows, top to bottom. */
  private List<String> shownIds() {
    return browser.driver.findElements(By.cssSelector("#jobs tbody tr[data-job]")).stream()
        .map(r -> r.getDomAttribute("data-job"))
        .toList();
  }

  private String push(String body) throws IOException, InterruptedException {
    HttpResponse<String> r =
        send(
            HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo/jobs"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    return json(r.body()).getString("id");
  }

  private JsonObject job(String id) throws IOException, InterruptedException {
    HttpResponse<String> r = get("/kvmq/queues/demo/jobs/" + id);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return json(r.body());
  }

  private long count(String status) throws IOException, InterruptedException {
    HttpResponse<String> r = get("/kvmq/queues/demo/count?status=" + status);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return json(r.body()).getJsonNumber("count").longValue();
  }

  /** Every job of a status, in its index's order, from the REST listing (one page of 1,000). */
  private List<String> listIds(String status) throws IOException, InterruptedException {
    HttpResponse<String> r = get("/kvmq/queues/demo/list?status=" + status + "&limit=1000");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonObject page = json(r.body());
    assertThat(page.containsKey("next")).as("one page holds them all").isFalse();
    return page.getJsonArray("jobs").stream()
        .map(JsonValue::asJsonObject)
        .map(j -> j.getString("id"))
        .toList();
  }

  private static JsonObject json(String body) {
    try (JsonReader reader = Json.createReader(new StringReader(body))) {
      return reader.readObject();
    }
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  private HttpResponse<String> send(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    String auth =
        Base64.getEncoder().encodeToString(("admin:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
    return http.send(
        request.header("Authorization", "Basic " + auth).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The labels in the demo's journal; each line is {@code <label> <jobId> <attempt>}. */
  private Set<String> doneLabels() throws IOException {
    if (!Files.exists(journal)) {
      return Set.of();
    }
    return Files.readAllLines(journal).stream()
        .filter(l -> !l.isBlank())
        .map(l -> l.split(" ")[0])
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
