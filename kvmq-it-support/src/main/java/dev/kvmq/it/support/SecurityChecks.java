package dev.kvmq.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.root.PathChecks;
import dev.kvmq.it.support.secure.SecureUsers;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * The security checks of the secured test application ({@link KvmqWars#withSecureApp}), the same on
 * every server: each server's IT deploys that WAR with the server's part of the recipe and runs
 * these. Plain HTTP, nothing mocked.
 */
public final class SecurityChecks {

  private final String base;
  private final String api;
  private final Supplier<String> log;

  /**
   * Checks of the WAR {@link KvmqWars#withSecureApp(WebArchive)}, its API at {@code /kvmq}.
   *
   * @param base the application's root, e.g. {@code http://127.0.0.1:8080/secure}
   * @param log reads the server's log so far
   */
  public SecurityChecks(String base, Supplier<String> log) {
    this(base, KvmqWars.API, log);
  }

  /**
   * Checks of the WAR {@link KvmqWars#withSecureApp(WebArchive, String)}.
   *
   * @param base the application's root, e.g. {@code http://127.0.0.1:8080/secure}
   * @param api where the WAR maps kvmq's API below its root, e.g. {@code /ops/jobs}
   * @param log reads the server's log so far
   */
  public SecurityChecks(String base, String api, Supplier<String> log) {
    this.base = base;
    this.api = api;
    this.log = log;
  }

  /**
   * Waits until the application answers.
   *
   * @param timeout the longest wait
   * @param alive fails if the server has ended (run on each poll)
   * @throws AssertionError if it does not answer in time
   */
  public void awaitUp(Duration timeout, Runnable alive) {
    Wait.until(
        "the secured application to answer",
        timeout,
        () -> {
          alive.run();
          return send("GET", "/api/user/hello", null, List.of()).statusCode();
        },
        s -> s == 200);
  }

  /**
   * The user's application at {@code /api}, which relies on scanning, keeps its own errors and
   * paths: its resource's exception is not kvmq's problem JSON nor logged as kvmq's, and kvmq's
   * resources do not answer under {@code /api}, even for the admin, nor at {@code /kvmq} when the
   * WAR maps them elsewhere; they answer where the WAR maps them.
   */
  public void theUsersApplicationKeepsItsErrorsAndPaths() {
    resume();
    int before = log.get().length();
    HttpResponse<String> boom = send("GET", "/api/user/boom", admin(), List.of());
    assertThat(boom.statusCode()).as("the user's failing resource").isEqualTo(500);
    assertThat(boom.headers().firstValue("Content-Type").orElse(""))
        .as("the user's error is the server's, not kvmq's problem JSON: " + boom.body())
        .doesNotContain("problem+json");
    assertThat(boom.body()).doesNotContain("kvmq");
    mark();
    assertThat(log.get().substring(before))
        .as("the server log after the user's failure")
        .doesNotContain("kvmq admin API");

    for (String path : List.of("/api/queues", "/api/queues/guarded", "/api/dashboard")) {
      assertThat(send("GET", path, admin(), List.of()).statusCode())
          .as("GET %s as admin", path)
          .isEqualTo(404);
      // not the container's role check either (it once answered 401 with the application's
      // challenge, or 403, before kvmq's 404)
      assertThat(send("GET", path, null, List.of()).statusCode())
          .as("GET %s without credentials", path)
          .isEqualTo(404);
      assertThat(
              send("GET", path, basic("guest", SecureUsers.GUEST_PASSWORD), List.of()).statusCode())
          .as("GET %s as guest (no role)", path)
          .isEqualTo(404);
    }
    assertThat(send("POST", "/api/queues/guarded/pause", admin(), List.of()).statusCode())
        .as("POST /api/queues/guarded/pause as admin")
        .isIn(404, 405);
    assertThat(paused()).as("the queue after the POST under /api").isFalse();

    HttpResponse<String> queues = send("GET", api + "/queues", admin(), List.of());
    assertThat(queues.statusCode())
        .as("GET " + api + "/queues as admin: " + queues.body())
        .isEqualTo(200);
    assertThat(queues.body()).contains("\"name\":\"guarded\"");
    if (!api.equals(KvmqWars.API)) {
      for (String path : List.of("/kvmq/queues", "/kvmq/dashboard")) {
        HttpResponse<String> r = send("GET", path, admin(), List.of());
        assertThat(r.statusCode())
            .as("GET %s, kvmq mapped at %s: %s", path, api, r.body())
            .isEqualTo(404);
        assertThat(r.body()).as(path).doesNotContain("kvmq admin API");
      }
    }
  }

  /**
   * The dashboard's page names its assets and the API by where the WAR maps kvmq (the page takes
   * its base from the request), and they answer there: the stylesheet, the script, the icon, and
   * the API the script calls; kvmq did not warn that its API is mapped nowhere.
   */
  public void theDashboardFollowsItsMapping() {
    HttpResponse<String> page = send("GET", api + "/dashboard", admin(), List.of());
    assertThat(page.statusCode()).as("GET %s/dashboard: %s", api, page.body()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
    String root = URI.create(base).getRawPath() + api + "/";
    assertThat(page.body())
        .contains(
            "data-api=\"" + root + "\"",
            "href=\"" + root + "dashboard/dashboard.css\"",
            "src=\"" + root + "dashboard/dashboard.js\"",
            "href=\"" + root + "dashboard/favicon.svg\"");
    for (String asset : List.of("dashboard.css", "dashboard.js", "favicon.svg")) {
      HttpResponse<String> r = send("GET", api + "/dashboard/" + asset, admin(), List.of());
      assertThat(r.statusCode()).as("GET %s/dashboard/%s", api, asset).isEqualTo(200);
    }
    assertThat(send("GET", api + "/queues", admin(), List.of()).body())
        .contains("\"name\":\"guarded\"");
    assertThat(log.get())
        .as("kvmq's startup check found the mapping")
        .doesNotContain(PathChecks.UNMAPPED_WARNING);
  }

  /**
   * No or wrong credentials: 401 with a Basic challenge; a user without the role: 403; the admin:
   * 200.
   */
  public void credentialsDecide() {
    resume();
    for (String path : List.of(api + "/queues", api + "/queues/guarded", api + "/dashboard")) {
      HttpResponse<String> none = send("GET", path, null, List.of());
      assertThat(none.statusCode()).as("GET %s without credentials", path).isEqualTo(401);
      assertThat(none.headers().firstValue("WWW-Authenticate").orElse(""))
          .startsWith("Basic realm=");
      assertThat(send("GET", path, basic("admin", "wrong"), List.of()).statusCode())
          .as("GET %s with a wrong password", path)
          .isEqualTo(401);
      assertThat(
              send("GET", path, basic("nobody", SecureUsers.ADMIN_PASSWORD), List.of())
                  .statusCode())
          .as("GET %s as an unknown user", path)
          .isEqualTo(401);
      assertThat(
              send("GET", path, basic("guest", SecureUsers.GUEST_PASSWORD), List.of()).statusCode())
          .as("GET %s as guest (no role)", path)
          .isEqualTo(403);
      assertThat(send("GET", path, admin(), List.of()).statusCode())
          .as("GET %s as admin", path)
          .isEqualTo(200);
    }
    assertThat(
            send(
                    "POST",
                    api + "/queues/guarded/pause",
                    basic("guest", SecureUsers.GUEST_PASSWORD),
                    List.of())
                .statusCode())
        .as("guest pauses")
        .isEqualTo(403);
    assertThat(paused()).isFalse();
  }

  /**
   * A malformed {@code Authorization} header (not base64, no colon, not UTF-8, empty) answers 401
   * like a wrong password, and the server logs no stack trace or warning for it.
   */
  public void aMalformedAuthorizationHeaderIs401AndLogsNothing() {
    int before = log.get().length();
    List<String> malformed =
        List.of(
            "Basic %%%",
            "Basic",
            "Basic ",
            "Basic ====",
            "Basic "
                + Base64.getEncoder().encodeToString("no-colon".getBytes(StandardCharsets.UTF_8)),
            "Basic " + Base64.getEncoder().encodeToString(new byte[] {(byte) 0xff, ':', 'x'}),
            "Basic a b c");
    for (String header : malformed) {
      for (String path : List.of(api + "/queues", api + "/dashboard")) {
        HttpResponse<String> r = send("GET", path, header, List.of());
        assertThat(r.statusCode())
            .as("GET %s with Authorization: %s; body %s", path, header, r.body())
            .isEqualTo(401);
      }
    }
    mark();
    String added = log.get().substring(before);
    assertThat(added)
        .as("the server log while malformed headers were sent")
        .doesNotContain("\tat ", "Exception", "WARN", "SEVERE", "ERROR");
  }

  /**
   * A state change from another origin is refused with 403 and problem JSON saying why, and changes
   * nothing, whatever its content type; one of the same origin, or from a client that is not a
   * browser (no {@code Origin}, no {@code Sec-Fetch-Site}), goes through.
   */
  public void crossOriginStateChangesAreRefused() {
    resume();
    String form = "application/x-www-form-urlencoded";
    List<List<String>> foreign =
        List.of(
            List.of("Origin", "http://evil.example", "Content-Type", form),
            List.of("Origin", "null", "Content-Type", form),
            List.of("Origin", "http://evil.example", "Content-Type", "text/plain"),
            List.of(
                "Sec-Fetch-Site",
                "cross-site",
                "Origin",
                "http://evil.example",
                "Content-Type",
                form),
            List.of("Sec-Fetch-Site", "same-site", "Content-Type", form),
            List.of("Sec-Fetch-Site", "cross-site"));
    for (List<String> headers : foreign) {
      for (String path :
          List.of(api + "/queues/guarded/pause", api + "/queues/guarded/dead/x/retry")) {
        HttpResponse<String> r = send("POST", path, admin(), headers);
        assertThat(r.statusCode()).as("POST %s with %s", path, headers).isEqualTo(403);
        assertThat(r.headers().firstValue("Content-Type").orElse(""))
            .contains("application/problem+json");
        assertThat(r.body()).contains("cross-origin request refused");
      }
      HttpResponse<String> delete =
          send("DELETE", api + "/queues/guarded/jobs?status=waiting", admin(), headers);
      assertThat(delete.statusCode()).as("DELETE with %s", headers).isEqualTo(403);
      assertThat(paused()).as("the queue after a refused pause with %s", headers).isFalse();
    }

    String own = URI.create(base).getScheme() + "://" + URI.create(base).getRawAuthority();
    assertThat(
            send("POST", api + "/queues/guarded/pause", admin(), List.of("Origin", own))
                .statusCode())
        .as("pause with Origin %s", own)
        .isEqualTo(204);
    assertThat(paused()).isTrue();
    assertThat(
            send(
                    "POST",
                    api + "/queues/guarded/resume",
                    admin(),
                    List.of("Sec-Fetch-Site", "same-origin", "Origin", own))
                .statusCode())
        .as("resume, same-origin")
        .isEqualTo(204);
    assertThat(paused()).isFalse();
    assertThat(send("POST", api + "/queues/guarded/pause", admin(), List.of()).statusCode())
        .as("pause without Origin (curl)")
        .isEqualTo(204);
    assertThat(paused()).isTrue();
    assertThat(send("POST", api + "/queues/guarded/resume", admin(), List.of()).statusCode())
        .isEqualTo(204);
    assertThat(paused()).isFalse();
    assertThat(
            send(
                    "GET",
                    api + "/queues/guarded",
                    admin(),
                    List.of("Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"))
                .statusCode())
        .as("a read from another origin (the browser keeps the answer)")
        .isEqualTo(200);
  }

  /**
   * @return whether the queue {@code guarded} is paused, read as the admin
   */
  public boolean paused() {
    HttpResponse<String> r = send("GET", api + "/queues/guarded", admin(), List.of());
    assertThat(r.statusCode()).as("GET " + api + "/queues/guarded: " + r.body()).isEqualTo(200);
    return r.body().contains("\"paused\":true");
  }

  /**
   * Sends a request.
   *
   * @param method the method
   * @param path below the application's root
   * @param authorization the {@code Authorization} header, or null
   * @param headers more headers, name and value in turn
   * @return the answer
   * @throws UncheckedIOException if the request fails
   */
  public HttpResponse<String> send(
      String method, String path, String authorization, List<String> headers) {
    List<String> all = new ArrayList<>(headers);
    if (authorization != null) {
      all.addAll(List.of("Authorization", authorization));
    }
    return Http.send(method, base + path, all);
  }

  /**
   * @return the admin's Basic header
   */
  public static String admin() {
    return basic("admin", SecureUsers.ADMIN_PASSWORD);
  }

  /**
   * @param user the user
   * @param password the password
   * @return a Basic {@code Authorization} value
   */
  public static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  /** Resumes the queue {@code guarded}, whatever an earlier check left it in. */
  private void resume() {
    assertThat(send("POST", api + "/queues/guarded/resume", admin(), List.of()).statusCode())
        .isEqualTo(204);
    assertThat(paused()).isFalse();
  }

  /** Makes the application log a marker line and waits until the log shows it. */
  private void mark() {
    String id = UUID.randomUUID().toString();
    assertThat(send("GET", "/api/user/mark?id=" + id, null, List.of()).statusCode()).isEqualTo(200);
    Wait.until(
        "the server log to show the marker " + id,
        Duration.ofSeconds(30),
        () -> log.get().contains("kvmq-it mark " + id));
  }
}
