package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.rest.AdminWar;
import dev.kvmq.it.support.Wait;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * Server data that looks like markup shows as text in the dashboard, never as markup: a queue whose
 * name is HTML with quotes and an event handler ({@link MarkupHandler#QUEUE}), job states with
 * {@code <img onerror>}, {@code </script>} and attribute-breaking quotes, and dead letters whose
 * error messages are the same, and schedules whose names and states are markup. In Debian's
 * headless chromium ({@link Browser}) against a test WAR on Payara Micro: the page's text is
 * exactly the data, no element or attribute was injected, no injected script ran ({@code
 * window.kvmqPwned} stays unset), and the page hit no Content-Security-Policy violation (recorded
 * by a listener installed before the page's own script).
 */
@OnPayara
class DashboardEscapingIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-escaping.war";

  private static final String QUEUE = MarkupHandler.QUEUE;

  /** Each sets window.kvmqPwned if it runs; the quotes break out of an attribute if unescaped. */
  private static final List<String> MARKUP =
      List.of(
          "<img src=x onerror=window.kvmqPwned=2>",
          "</script><script>window.kvmqPwned=3</script>",
          "\" onmouseover=\"window.kvmqPwned=4\" data-x=\"",
          "' autofocus onfocus='window.kvmqPwned=5' x='",
          "<svg><script>window.kvmqPwned=6</script></svg>",
          "&lt;b&gt;&amp;&#x3c;");

  /**
   * Records CSP violations from the first moment of each page (CDP runs it before the page's
   * scripts).
   */
  private static final String WATCH =
      "window.kvmqViolations = [];"
          + "document.addEventListener('securitypolicyviolation', e => window.kvmqViolations.push("
          + "e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));";

  @Deployment(testable = false)
  static WebArchive war() {
    return AdminWar.of(WAR).addClasses(Mark.class, MarkupHandler.class);
  }

  @ArquillianResource URL base;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  @RunAsClient
  void markupInQueueNamesStatesAndErrorsShowsAsText() throws Exception {
    String root = "http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR);
    for (String text : MARKUP) {
      push(root, "{\"state\": {\"text\": " + json(text) + ", \"fail\": true}}");
      push(
          root,
          "{\"state\": {\"text\": " + json(text) + ", \"fail\": false}, \"delay\": \"PT1H\"}");
    }
    Wait.until(
        "the failing jobs to be dead letters",
        () -> get(root + "kvmq/queues/" + encode(QUEUE)),
        b -> b.contains("\"dead\":" + MARKUP.size()));

    try (Browser browser = Browser.inWorkDirectory("escaping", "admin", TestUsers.PASSWORD)) {
      browser.driver.executeCdpCommand(
          "Page.addScriptToEvaluateOnNewDocument", Map.of("source", WATCH));

      // the overview: the queue's name in its row, link, aria-label and data attribute (the
      // store may hold other queues: those of the other tests' applications, listed unopened)
      browser.driver.get(root + "kvmq/dashboard");
      WebElement row =
          Wait.until(
              "the queue's row",
              () ->
                  browser.driver.findElements(By.cssSelector("#queues tbody tr")).stream()
                      .filter(r -> QUEUE.equals(r.getAttribute("data-queue")))
                      .findFirst()
                      .orElseThrow(),
              WebElement::isDisplayed);
      WebElement link = row.findElement(By.cssSelector("th a"));
      assertThat(link.getText()).isEqualTo(QUEUE.strip());
      assertThat(link.getAttribute("textContent")).isEqualTo(QUEUE);
      assertThat(row.findElement(By.cssSelector("button")).getAttribute("aria-label"))
          .endsWith(QUEUE);
      assertNothingInjected(browser);

      // one queue: its name, and the delayed jobs' states
      link.click();
      Wait.until(
          "the queue's page",
          () -> browser.driver.findElement(By.id("q-name")).getAttribute("textContent"),
          QUEUE::equals);
      assertThat(browser.driver.getTitle()).startsWith(QUEUE);
      List<String> payloads =
          Wait.until(
              "the delayed jobs",
              () -> texts(browser, "#jobs tbody td code"),
              t -> t.size() == MARKUP.size());
      assertThat(payloads)
          .containsExactlyInAnyOrderElementsOf(
              MARKUP.stream().map(t -> "{\"fail\":false,\"text\":" + json(t) + "}").toList());
      assertNothingInjected(browser);

      // the schedules: names, specs and states
      List<String> names =
          Wait.until(
              "the schedules", () -> texts(browser, "#schedules tbody th"), t -> t.size() == 2);
      assertThat(names).containsExactly(MarkupHandler.RATE_SCHEDULE, MarkupHandler.CRON_SCHEDULE);
      assertThat(texts(browser, "#schedules tbody td:nth-child(7) code"))
          .containsExactly(
              "{\"fail\":false,\"text\":\"' autofocus onfocus='window.kvmqPwned=10' x='\"}",
              "{\"fail\":false,\"text\":\"</script><script>window.kvmqPwned=8</script>\"}");
      assertThat(
              browser
                  .driver
                  .findElement(By.cssSelector("#schedules tbody tr"))
                  .getAttribute("data-schedule"))
          .isEqualTo(MarkupHandler.RATE_SCHEDULE);
      assertNothingInjected(browser);

      // the dead letters: their error messages
      new Select(browser.driver.findElement(By.id("f-status"))).selectByValue("dead");
      List<String> errors =
          Wait.until(
              "the dead letters",
              () -> texts(browser, "#jobs tbody tr[data-status='dead'] td:nth-child(10) span"),
              t -> t.size() == MARKUP.size());
      assertThat(errors)
          .containsExactlyInAnyOrderElementsOf(
              MARKUP.stream().map(t -> "java.lang.IllegalStateException: " + t).toList());
      assertNothingInjected(browser);
      browser.screenshot(
          Path.of(System.getProperty("kvmq.it.screenshots", "target/dashboard-screenshots"))
              .toAbsolutePath()
              .resolve("escaping-dead-letters.png"));
    }
  }

  private static void assertNothingInjected(Browser browser) {
    Object pwned =
        browser.driver.executeScript(
            "return window.kvmqPwned === undefined ? null : window.kvmqPwned;");
    assertThat(pwned).as("an injected script ran").isNull();
    Object injected =
        browser.driver.executeScript(
            "return Array.from(document.querySelectorAll("
                + "'img, svg script, script:not([src]), [onerror], [onmouseover], [onfocus], [autofocus], [data-x], [x]'))"
                + ".map(e => e.outerHTML);");
    assertThat((List<?>) injected).as("elements or attributes made from server data").isEmpty();
    Object scripts =
        browser.driver.executeScript("return Array.from(document.scripts).map(s => s.src);");
    assertThat((List<?>) scripts)
        .as("the page's only script")
        .hasSize(1)
        .allSatisfy(src -> assertThat((String) src).endsWith("/kvmq/dashboard/dashboard.js"));
    Object violations = browser.driver.executeScript("return window.kvmqViolations;");
    assertThat((List<?>) violations).as("Content-Security-Policy violations").isEmpty();
  }

  @SuppressWarnings("unchecked")
  private static List<String> texts(Browser browser, String css) {
    return (List<String>)
        browser.driver.executeScript(
            "return Array.from(document.querySelectorAll(arguments[0]))"
                + ".map(e => e.textContent);",
            css);
  }

  private void push(String root, String body) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(root + "kvmq/queues/" + encode(QUEUE) + "/jobs"))
                .header("Authorization", admin())
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
  }

  private String get(String url) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", admin())
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  private static String admin() {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString(("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A JSON string literal, as JSON.stringify writes it (these texts need only quotes escaped). */
  private static String json(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
