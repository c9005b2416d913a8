package dev.kvmq.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.queue.TestUsers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * Calls of kvmq's admin REST API as the test user {@code admin} ({@link TestUsers}), JSON bodies.
 */
public final class AdminApi {

  /** The {@code Authorization} header of {@code admin}. */
  public static final String ADMIN =
      "Basic "
          + Base64.getEncoder()
              .encodeToString(("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * Sends a request and returns the answer, whatever its status.
   *
   * @param method the HTTP method
   * @param uri where
   * @param body a JSON body, or null for none
   * @return the answer
   * @throws UncheckedIOException if the request fails
   * @throws IllegalStateException if interrupted
   */
  public HttpResponse<String> send(String method, URI uri, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", ADMIN)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    try {
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + uri + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * Sends a request that must answer {@code expected}.
   *
   * @param method the HTTP method
   * @param uri where
   * @param body a JSON body, or null for none
   * @param expected the status it must answer
   * @return the answer's body
   * @throws AssertionError if it answers another status
   */
  public String send(String method, URI uri, String body, int expected) {
    HttpResponse<String> r = send(method, uri, body);
    assertThat(r.statusCode()).as(method + " " + uri + ": " + r.body()).isEqualTo(expected);
    return r.body();
  }
}
