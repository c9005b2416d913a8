package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.rest.AdminWar;
import dev.kvmq.it.support.Wait;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The dashboard's schedule table and buttons in headless chromium ({@link Browser}) on Payara
 * Micro: the queue's page lists its schedule with spec, state, next due and "never" as last run;
 * Pause, Resume, Run now and Delete… do what the admin API then reports (paused, running, a last
 * job whose id the row shows, gone), and Delete… asks first.
 */
@OnPayara
class ScheduleDashboardIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-sched-ui.war";

  @Deployment(testable = false)
  static WebArchive war() {
    return AdminWar.of(WAR).addClasses(Mark.class, ScheduledHandler.class);
  }

  @ArquillianResource URL base;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  @RunAsClient
  void theSchedulesTableShowsAndControlsTheQueuesSchedules() throws Exception {
    String root = "http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR);
    String api = root + "kvmq/queues/" + ScheduledHandler.QUEUE + "/schedules/new-year";
    try (Browser browser = Browser.inWorkDirectory("sched-ui", "admin", TestUsers.PASSWORD)) {
      browser.driver.get(root + "kvmq/dashboard#/queue/" + ScheduledHandler.QUEUE);
      // read in one go: the table may be drawn again between two reads (a stale row)
      java.util.List<String> first =
          Wait.until(
              "the schedule's row, read whole",
              () -> {
                WebElement row = row(browser);
                return java.util.List.of(
                    cell(row, 2),
                    cell(row, 3),
                    cell(row, 4),
                    row.findElement(By.cssSelector("td:nth-child(5) time"))
                        .getAttribute("datetime"),
                    cell(row, 6),
                    cell(row, 7));
              },
              cells -> true);
      assertThat(first.get(0)).isEqualTo("cron 0 0 1 1 * (Europe/Paris)");
      assertThat(first.get(1)).isEqualTo("running");
      assertThat(first.get(2)).isEqualTo("missed: run-once, overlap: allow, lateness: PT1M");
      assertThat(first.get(3)).endsWith("-12-31T23:00:00Z");
      assertThat(first.get(4)).isEqualTo("never");
      assertThat(first.get(5)).isEqualTo("{\"fail\":false,\"text\":\"happy\"}");

      click(browser, "Pause");
      Wait.until("the paused badge", () -> cell(row(browser), 3), "paused"::equals);
      assertThat(get(api)).contains("\"paused\":true").doesNotContain("nextDue");
      Wait.until("no next due time while paused", () -> cell(row(browser), 5), "–"::equals);

      click(browser, "Resume");
      Wait.until("the running badge", () -> cell(row(browser), 3), "running"::equals);
      assertThat(get(api)).contains("\"paused\":false", "nextDue");

      click(browser, "Run now");
      String last =
          Wait.until(
              "the triggered run as the last run",
              () -> cell(row(browser), 6),
              t -> !t.equals("never"));
      String body = get(api);
      String id = body.replaceAll("(?s).*\"lastJobId\":\"([^\"]+)\".*", "$1");
      assertThat(last).endsWith(id);

      click(browser, "Delete…");
      Alert ask =
          Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true);
      assertThat(ask.getText()).contains("Delete schedule new-year", "defined again");
      ask.dismiss();
      assertThat(status(api)).as("dismissed: kept").isEqualTo(200);
      click(browser, "Delete…");
      Wait.until("the confirmation", () -> browser.driver.switchTo().alert(), a -> true).accept();
      Wait.until("the schedule deleted", () -> status(api), s -> s == 404);
      Wait.until(
          "the table empty",
          () -> browser.driver.findElement(By.id("no-schedules")).isDisplayed(),
          shown -> shown);
    }
  }

  private static WebElement row(Browser browser) {
    return Wait.until(
        "the schedule's row",
        () -> browser.driver.findElement(By.cssSelector("#schedules tbody tr[data-schedule]")),
        WebElement::isDisplayed);
  }

  private static String cell(WebElement row, int column) {
    return row.findElement(By.cssSelector(":scope > :nth-child(" + column + ")"))
        .getAttribute("textContent")
        .strip();
  }

  /**
   * Clicks the row's button. The table is drawn again after the queue's events, so a row found a
   * moment ago may be gone (a stale element, and no click happened): find it again and retry.
   */
  private static void click(Browser browser, String text) {
    Wait.until(
        "a click on " + text,
        () -> {
          button(row(browser), text).click();
          return true;
        },
        clicked -> clicked);
  }

  private static WebElement button(WebElement row, String text) {
    return row.findElement(By.xpath(".//button[text()='" + text + "']"));
  }

  private String get(String url) throws Exception {
    HttpResponse<String> r = send(url);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  private int status(String url) throws Exception {
    return send(url).statusCode();
  }

  private HttpResponse<String> send(String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url))
            .header(
                "Authorization",
                "Basic "
                    + Base64.getEncoder()
                        .encodeToString(
                            ("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8)))
            .timeout(Duration.ofSeconds(30))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
