package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.ServerJvm;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * The dashboard in a real headless browser (Debian's chromium, through Selenium and chromedriver)
 * against the demo on Payara Micro, started as the README starts it ({@code run-demo.sh}, on the
 * WAR the build just made). The browser signs in with HTTP Basic as {@code admin} (role {@code
 * kvmq-admin}); a second browser signs in as {@code guest}, who lacks the role. Screenshots of the
 * main views go to {@code target/dashboard-screenshots}.
 *
 * <p>The tests run in order on one server and one browser, each leaving the queue running.
 */
@Tag("payara")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardIT {

  private static final String PASSWORD = "it-dashboard";
  private static final String GUEST_PASSWORD = "it-guest";
  private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");

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
                .resolve("dashboard-" + System.nanoTime()));
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
    env.put("KVMQ_GUEST_PASSWORD", GUEST_PASSWORD);
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

  @Test
  @Order(1)
  void theWelcomePageLinksToTheDashboardWhichListsTheDemoQueue() throws Exception {
    browser.driver.get(base + "/");
    browser.driver.findElement(By.linkText("Open the dashboard")).click();
    Wait.until(
        "the dashboard after the welcome page's link",
        () -> browser.driver.getCurrentUrl(),
        url -> url.equals(base + "/kvmq/dashboard"));
    // the status comes from the browser's network events, which may arrive after the URL changed
    Wait.until(
        "the dashboard's answer to the browser",
        () -> browser.status(base + "/kvmq/dashboard"),
        status -> status != null && status == 200);

    WebElement row =
        Wait.until(
            "the demo queue's row",
            () -> browser.driver.findElement(By.cssSelector("#queues tr[data-queue='demo']")),
            WebElement::isDisplayed);
    assertThat(row.findElement(By.cssSelector("th a")).getText()).isEqualTo("demo");
    Wait.until("the queue shown as running", () -> text(row, "td .badge"), "running"::equals);
    Wait.until(
        "the event stream open",
        () -> browser.driver.findElement(By.id("connection")).getText(),
        "Live"::equals);
    // a job pushed now shows up in the overview's counts, without a reload
    mark();
    String id =
        push(
            "{\"state\": {\"label\": \"overview\", \"workMs\": 0, \"failAttempts\": 0}, \"delayMs\": 600000}");
    Wait.until(
        "the overview's delayed count at 1",
        () -> row.findElements(By.tagName("td")).get(2).getText(),
        "1"::equals);
    assertMarked();
    delete(id);
    browser.screenshot(shots.resolve("overview.png"));
  }

  @Test
  @Order(2)
  void aJobPushedOverRestAppearsWithoutAReload() throws Exception {
    openQueue();
    mark();
    String delayed =
        push(
            "{\"state\": {\"label\": \"later\", \"workMs\": 0, \"failAttempts\": 0}, \"delayMs\": 600000, \"priority\": 5}");
    WebElement row = jobRow(delayed);
    Wait.until(
        "the pushed job shown as delayed", () -> text(row, "td:nth-child(3)"), "delayed"::equals);
    assertThat(text(row, "td:nth-child(4)")).isEqualTo("5");
    assertThat(text(row, "td:nth-child(9)")).contains("\"label\":\"later\"");
    Wait.until(
        "the delayed count",
        () -> browser.driver.findElement(By.id("q-delayed")).getText(),
        "1"::equals);

    browser.screenshot(shots.resolve("queue.png"));
    // a job that runs: gone from the list once done, and counted in the chart. (Not
    // asserted: that it shows as processing while it runs. On Payara the handler and
    // the event feed share the default managed scheduled executor, which has one thread
    // here, so the feed's next event waits for the handler; see docs/dashboard.md.)
    String quick =
        push("{\"state\": {\"label\": \"quick\", \"workMs\": 500, \"failAttempts\": 0}}");
    Wait.until("the quick job done", Duration.ofSeconds(30), () -> doneLabels().contains("quick"));
    Wait.until(
        "the quick job not in the list once done",
        Duration.ofSeconds(30),
        () ->
            browser
                .driver
                .findElements(By.cssSelector("#jobs tr[data-job='" + quick + "']"))
                .isEmpty());
    Wait.until(
        "the chart counting the completion",
        Duration.ofSeconds(30),
        () -> browser.driver.findElement(By.id("q-chart-text")).getText(),
        t -> t.contains(" 1 completed"));
    assertThat(browser.driver.findElements(By.cssSelector("#q-chart polyline"))).hasSize(2);
    assertMarked();
    delete(delayed);
  }

  @Test
  @Order(3)
  void pauseShowsAsPausedStopsProcessingAndTheIdlePageSendsNoRequests() throws Exception {
    openQueue();
    browser.driver.findElement(By.id("q-pause")).click();
    Wait.until(
        "the queue shown as paused",
        () -> browser.driver.findElement(By.id("q-state")).getText(),
        "paused"::equals);
    assertThat(browser.driver.findElement(By.id("q-pause")).getText()).isEqualTo("Resume");
    assertThat(get("/kvmq/queues/demo").body()).contains("\"paused\":true");
    assertThat(browser.driver.findElement(By.id("announcer")).getText()).contains("paused");

    String id = push("{\"state\": {\"label\": \"held\", \"workMs\": 0, \"failAttempts\": 0}}");
    WebElement row = jobRow(id);
    assertThat(text(row, "td:nth-child(3)")).isEqualTo("waiting");
    assertThat(text(row, "td:nth-child(1)")).as("place").isEqualTo("1");
    // Let the page finish what the push's event started (job list, throughput: the last
    // follow-up comes at most ~3 s after the event), then watch: the job must stay
    // waiting through the worker's poll interval (3 s), and the
    // idle page must fetch nothing (it is fed by events, not by a timer).
    Wait.until(
        "the page quiet for 5 s",
        Duration.ofSeconds(40),
        () -> {
          List<Browser.Request> r = browser.requests();
          return r.isEmpty()
              || System.nanoTime() - r.get(r.size() - 1).atNanos() > TimeUnit.SECONDS.toNanos(5);
        });
    int before = browser.requests().size();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
    while (System.nanoTime() < until) {
      assertThat(get("/kvmq/queues/demo/jobs/" + id).body()).contains("\"status\":\"waiting\"");
      assertThat(doneLabels()).doesNotContain("held");
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // between two checks, as Wait does
    }
    assertThat(browser.requests().subList(before, browser.requests().size()))
        .as("requests of the idle page")
        .isEmpty();
    browser.screenshot(shots.resolve("paused.png"));

    browser.driver.findElement(By.id("q-pause")).click();
    Wait.until(
        "the queue shown as running",
        () -> browser.driver.findElement(By.id("q-state")).getText(),
        "running"::equals);
    Wait.until(
        "the held job done after resume",
        Duration.ofSeconds(30),
        () -> doneLabels().contains("held"));
    Wait.until(
        "the held job gone from the page",
        () ->
            browser
                .driver
                .findElements(By.cssSelector("#jobs tr[data-job='" + id + "']"))
                .isEmpty());
  }

  @Test
  @Order(4)
  void aDeadLetterCanBeRetried() throws Exception {
    openQueue();
    new Select(browser.driver.findElement(By.id("f-status"))).selectByValue("dead");
    String id =
        push("{\"state\": {\"label\": \"second-time-lucky\", \"workMs\": 0, \"failAttempts\": 1}}");
    WebElement row = jobRow(id);
    Wait.until("the job shown as dead", () -> text(row, "td:nth-child(3)"), "dead"::equals);
    assertThat(text(row, "td:nth-child(10)")).as("last error").contains("fails on purpose");
    Wait.until(
        "the dead count", () -> browser.driver.findElement(By.id("q-dead")).getText(), "1"::equals);
    browser.screenshot(shots.resolve("dead-letters.png"));

    row.findElement(By.xpath(".//button[text()='Retry']")).click();
    Wait.until(
        "the retried job done",
        Duration.ofSeconds(30),
        () -> doneLabels().contains("second-time-lucky"));
    Wait.until(
        "no dead letter left on the page",
        () ->
            browser
                .driver
                .findElements(By.cssSelector("#jobs tr[data-job='" + id + "']"))
                .isEmpty());
    Wait.until(
        "the dead count at 0",
        () -> browser.driver.findElement(By.id("q-dead")).getText(),
        "0"::equals);
    assertThat(browser.driver.findElement(By.id("announcer")).getText())
        .contains("back in the queue");
  }

  @Test
  @Order(5)
  void pushFromTheFormAndDeleteOnlyAfterConfirmation() throws Exception {
    openQueue();
    new Select(browser.driver.findElement(By.id("f-status"))).selectByValue("");
    browser.driver.findElement(By.cssSelector("#push summary")).click();
    WebElement state = browser.driver.findElement(By.id("push-state"));
    state.clear();
    state.sendKeys("{\"label\": \"from-the-form\", \"workMs\": 0, \"failAttempts\": 0}");
    browser.driver.findElement(By.id("push-delay")).sendKeys("600000");
    browser.driver.findElement(By.id("push-priority")).sendKeys("2");
    browser.driver.findElement(By.cssSelector("#push-form button[type=submit]")).click();
    String result =
        Wait.until(
            "the push's result",
            () -> browser.driver.findElement(By.id("push-result")).getText(),
            t -> t.startsWith("Pushed job "));
    String id = result.substring("Pushed job ".length());
    assertThat(get("/kvmq/queues/demo/jobs/" + id).body())
        .contains("\"priority\":2.0")
        .contains("from-the-form")
        .contains("\"status\":\"delayed\"");
    WebElement row = jobRow(id);

    // bad JSON: refused in the page, nothing pushed
    String countBefore = get("/kvmq/queues/demo").body();
    state.clear();
    state.sendKeys("{not json");
    browser.driver.findElement(By.cssSelector("#push-form button[type=submit]")).click();
    Wait.until(
        "the error shown",
        () -> browser.driver.findElement(By.id("error")).getText(),
        t -> t.contains("not valid JSON"));
    assertThat(state.getDomAttribute("aria-invalid")).isEqualTo("true");
    assertThat(get("/kvmq/queues/demo").body()).isEqualTo(countBefore);

    // delete: cancelled at the confirmation, the job stays; confirmed, it goes
    row.findElement(By.xpath(".//button[text()='Delete…']")).click();
    Alert ask = Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true);
    assertThat(ask.getText()).contains("Delete job " + id).contains("cannot be undone");
    ask.dismiss();
    assertThat(get("/kvmq/queues/demo/jobs/" + id).statusCode()).isEqualTo(200);
    row.findElement(By.xpath(".//button[text()='Delete…']")).click();
    Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true).accept();
    Wait.until(
        "the job deleted", () -> get("/kvmq/queues/demo/jobs/" + id).statusCode(), s -> s == 404);
    Wait.until(
        "the job gone from the page",
        () ->
            browser
                .driver
                .findElements(By.cssSelector("#jobs tr[data-job='" + id + "']"))
                .isEmpty());

    // delete all waiting: two delayed jobs, confirmed
    push(
        "{\"state\": {\"label\": \"bulk-1\", \"workMs\": 0, \"failAttempts\": 0}, \"delayMs\": 600000}");
    push(
        "{\"state\": {\"label\": \"bulk-2\", \"workMs\": 0, \"failAttempts\": 0}, \"delayMs\": 600000}");
    Wait.until(
        "two delayed jobs shown",
        () -> browser.driver.findElement(By.id("q-delayed")).getText(),
        "2"::equals);
    browser.driver.findElement(By.id("q-delete-waiting")).click();
    Alert all = Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true);
    assertThat(all.getText()).contains("Delete all 2 waiting and delayed jobs");
    all.accept();
    Wait.until(
        "no waiting or delayed job left",
        () -> get("/kvmq/queues/demo").body(),
        b -> b.contains("\"waiting\":0") && b.contains("\"delayed\":0"));
    Wait.until(
        "the page showing it",
        () -> browser.driver.findElement(By.id("q-delayed")).getText(),
        "0"::equals);
    assertThat(browser.driver.findElement(By.id("q-delete-waiting")).isEnabled()).isFalse();
  }

  @Test
  @Order(6)
  void aUserWithoutTheRoleIsRefused() throws Exception {
    try (Browser guest =
        new Browser(
            Files.createDirectories(work.resolve("profile-guest")),
            "guest",
            GUEST_PASSWORD,
            work.resolve("chromedriver-guest.log"))) {
      guest.driver.get(base + "/kvmq/dashboard");
      Wait.until(
          "the refusal's status",
          () -> guest.status(base + "/kvmq/dashboard"),
          s -> s != null && s == 403);
      assertThat(guest.driver.findElements(By.id("queues"))).as("the dashboard's table").isEmpty();
      assertThat(guest.requests())
          .as("no asset or API call after the refusal")
          .noneMatch(r -> r.url().contains("/kvmq/dashboard/") || r.url().contains("/kvmq/queues"));
      guest.screenshot(shots.resolve("refused-guest.png"));
      // the assets and the API refuse the guest as well
      assertThat(status("guest", GUEST_PASSWORD, "/kvmq/dashboard/dashboard.js")).isEqualTo(403);
      assertThat(status("guest", GUEST_PASSWORD, "/kvmq/queues")).isEqualTo(403);
    }
    try (Browser nobody =
        new Browser(
            Files.createDirectories(work.resolve("profile-anonymous")),
            null,
            null,
            work.resolve("chromedriver-anonymous.log"))) {
      nobody.driver.get(base + "/kvmq/dashboard");
      // Headless chromium holds a 401 with a Basic challenge for credentials that never come;
      // whether its network log then reports the response (completed, or as authRequired) varies
      // from run to run, so the challenge itself is checked over HTTP, and the browser's part is
      // that it asked for the page and got no dashboard: no table, no asset, no API call.
      Wait.until(
          "the signed-out browser's request for the dashboard",
          () -> nobody.requests().stream().anyMatch(r -> r.url().equals(base + "/kvmq/dashboard")),
          asked -> asked);
      HttpResponse<String> challenge =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/kvmq/dashboard"))
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(challenge.statusCode()).as("the dashboard without credentials").isEqualTo(401);
      assertThat(challenge.headers().firstValue("WWW-Authenticate"))
          .as("its challenge")
          .hasValueSatisfying(v -> assertThat(v).startsWith("Basic realm="));
      assertThat(nobody.driver.findElements(By.id("queues"))).isEmpty();
      assertThat(nobody.requests())
          .as("no asset or API call without credentials")
          .noneMatch(r -> r.url().contains("/kvmq/dashboard/") || r.url().contains("/kvmq/queues"));
    }
    assertThat(status("admin", PASSWORD, "/kvmq/dashboard/dashboard.js")).isEqualTo(200);
    assertThat(status("admin", PASSWORD, "/kvmq/dashboard/..%2F..%2FWEB-INF%2Fweb.xml"))
        .isIn(400, 404);
    assertThat(status("admin", PASSWORD, "/kvmq/dashboard/index.html")).isEqualTo(404);
  }

  // ---- helpers

  private void openQueue() {
    browser.driver.get(base + "/kvmq/dashboard#/queue/demo");
    Wait.until(
        "the queue view with its counts",
        () -> browser.driver.findElement(By.id("q-state")).getText(),
        t -> t.equals("running") || t.equals("paused"));
  }

  /** Marks the page: a reload would lose the mark. */
  private void mark() {
    browser.driver.executeScript("window.kvmqTestMark = 'not reloaded';");
  }

  private void assertMarked() {
    assertThat(browser.driver.executeScript("return window.kvmqTestMark;"))
        .as("the page was not reloaded")
        .isEqualTo("not reloaded");
  }

  private WebElement jobRow(String id) {
    return Wait.until(
        "job " + id + " in the list",
        () -> browser.driver.findElement(By.cssSelector("#jobs tr[data-job='" + id + "']")),
        WebElement::isDisplayed);
  }

  private static String text(WebElement row, String css) {
    return row.findElement(By.cssSelector(css)).getText();
  }

  private String push(String body) throws IOException, InterruptedException {
    HttpResponse<String> r =
        send(
            "admin",
            PASSWORD,
            HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo/jobs"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    Matcher m = ID.matcher(r.body());
    assertThat(m.find()).as(r.body()).isTrue();
    return m.group(1);
  }

  private void delete(String id) throws IOException, InterruptedException {
    HttpResponse<String> r =
        send(
            "admin",
            PASSWORD,
            HttpRequest.newBuilder(URI.create(base + "/kvmq/queues/demo/jobs/" + id)).DELETE());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send("admin", PASSWORD, HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  private int status(String user, String password, String path)
      throws IOException, InterruptedException {
    return send(user, password, HttpRequest.newBuilder(URI.create(base + path)).GET()).statusCode();
  }

  private HttpResponse<String> send(String user, String password, HttpRequest.Builder request)
      throws IOException, InterruptedException {
    String auth =
        Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
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
