package dev.kvmq.it.support.root;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Http;
import dev.kvmq.it.support.Wait;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * The checks of {@link dev.kvmq.it.support.KvmqWars#withRootApp}, the same on every server: kvmq's
 * admin API, asked for by {@code kvmq.rest.enabled=true} but mapped nowhere, takes no path; the
 * application's own resource at {@code /kvmq/mine} answers; kvmq says once in the log that its API
 * is not served and how to map it. Plain HTTP, nothing mocked.
 */
public final class PathChecks {

  /** What kvmq logs when the property asks for the API and nothing maps it. */
  public static final String UNMAPPED_WARNING =
      "kvmq.rest.enabled=true, but the admin API is mapped nowhere";

  private final String base;
  private final Supplier<String> log;

  /**
   * @param base the application's root, e.g. {@code http://127.0.0.1:8080/root}
   * @param log reads the server's log so far
   */
  public PathChecks(String base, Supplier<String> log) {
    this.base = base;
    this.log = log;
  }

  /**
   * Waits until the application's resource answers at {@code /kvmq/mine}.
   *
   * @param timeout the longest wait
   * @param alive fails if the server has ended (run on each poll)
   * @throws AssertionError if it does not answer 200 in time; the last answer names kvmq's if kvmq
   *     took the path
   */
  public void awaitUp(Duration timeout, Runnable alive) {
    Wait.until(
        "the application's own resource at /kvmq/mine",
        timeout,
        () -> {
          alive.run();
          HttpResponse<String> r = get("/kvmq/mine");
          return r.statusCode() + " " + r.body();
        },
        answer -> answer.startsWith("200 "));
  }

  /**
   * The application's resource under {@code /kvmq} answers, and kvmq's paths are the application's
   * 404 (not kvmq's problem JSON).
   */
  public void theApplicationOwnsKvmqsPathWhenItDidNotMapKvmq() {
    HttpResponse<String> mine = get("/kvmq/mine");
    assertThat(mine.statusCode()).as("the application's resource: %s", mine.body()).isEqualTo(200);
    assertThat(mine.body()).isEqualTo("mine");
    for (String path : new String[] {"/kvmq/queues", "/kvmq/dashboard"}) {
      HttpResponse<String> r = get(path);
      assertThat(r.statusCode()).as("%s: %s", path, r.body()).isEqualTo(404);
      assertThat(r.headers().firstValue("Content-Type").orElse(""))
          .as("%s is not kvmq's problem JSON: %s", path, r.body())
          .doesNotContain("problem+json");
      assertThat(r.body()).as(path).doesNotContain("kvmq admin API");
    }
  }

  /** kvmq warned once that the property asks for an API nothing maps, and said what to add. */
  public void theUnmappedApiIsWarnedOfOnce() {
    String text =
        Wait.until(
            "kvmq's warning of the unmapped API in the log",
            log::get,
            t -> t.contains(UNMAPPED_WARNING));
    assertThat(text.split(java.util.regex.Pattern.quote(UNMAPPED_WARNING), -1))
        .as("said once")
        .hasSize(2);
    assertThat(text).contains("dev.kvmq.jakarta.KvmqRestApplication");
  }

  private HttpResponse<String> get(String path) {
    return Http.send("GET", base + path, List.of());
  }
}
