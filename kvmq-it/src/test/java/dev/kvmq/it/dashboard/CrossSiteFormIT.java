package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.kvmq.it.security.SecurePayara;
import dev.kvmq.it.support.SecurityChecks;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.secure.SecureUsers;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Cross-site request forgery, in a real browser: the admin's headless chromium, which sends the
 * admin's Basic credentials with every request, opens a page of another site ({@code
 * http://127.0.0.2:PORT}, a JDK HTTP server of the test's) whose form posts to kvmq's {@code
 * .../pause} on {@code http://127.0.0.1} by itself, as an attacker's page would. kvmq refuses it
 * (403) and the queue stays running. The server is Payara Micro with the secured test application
 * ({@link SecurePayara}).
 */
@Tag("payara")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossSiteFormIT {

  private SecurePayara payara;
  private HttpServer evil;
  private Browser browser;

  @BeforeAll
  void start() throws Exception {
    payara = SecurePayara.start("cross-site");
    evil = HttpServer.create(new InetSocketAddress("127.0.0.2", 0), 0);
    evil.start();
    Path work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve("cross-site-browser-" + System.nanoTime()));
    browser =
        new Browser(
            work.resolve("profile"),
            "admin",
            SecureUsers.ADMIN_PASSWORD,
            work.resolve("chromedriver.log"));
  }

  @AfterAll
  void stop() {
    try {
      if (browser != null) {
        browser.close();
      }
    } finally {
      if (evil != null) {
        evil.stop(0);
      }
      if (payara != null) {
        payara.close();
      }
    }
  }

  @Test
  void aFormOfAnotherSiteCannotPauseAQueue() {
    SecurityChecks kvmq = payara.checks();
    assertThat(kvmq.paused()).as("before").isFalse();
    String[] enctypes = {"application/x-www-form-urlencoded", "text/plain", "multipart/form-data"};
    for (int i = 0; i < enctypes.length; i++) {
      String enctype = enctypes[i];
      // A query of its own per form, so that each round waits for its own answer.
      String pause = payara.url() + "/kvmq/queues/guarded/pause?round=" + i;
      String page = "/attack-" + enctype.replace('/', '-');
      serve(
          page,
          "<!doctype html><html><body><form method=\"post\" action=\""
              + pause
              + "\" enctype=\""
              + enctype
              + "\"><input name=\"go\" value=\"1\"></form>"
              + "<script>document.forms[0].submit()</script></body></html>");
      String attack = "http://127.0.0.2:" + evil.getAddress().getPort() + page;
      browser.driver.get(attack);

      Integer status =
          Wait.until(
              "the browser to post the form (" + enctype + ") to kvmq",
              Duration.ofSeconds(30),
              () -> browser.status(pause),
              s -> s != null);
      assertThat(status).as("kvmq's answer to the cross-site form (%s)", enctype).isEqualTo(403);
      assertThat(browser.requests())
          .as("the form was posted by the browser, from the other site's page")
          .anyMatch(r -> r.method().equals("POST") && r.url().equals(pause));
      assertThat(browser.driver.getPageSource()).contains("cross-origin request refused");
      assertThat(kvmq.paused()).as("the queue after the cross-site form (%s)", enctype).isFalse();
    }
  }

  private void serve(String path, String html) {
    evil.createContext(
        path,
        exchange -> {
          byte[] body = html.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
  }
}
