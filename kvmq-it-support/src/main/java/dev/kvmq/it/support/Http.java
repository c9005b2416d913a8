package dev.kvmq.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/** Plain HTTP requests of the checks that every server's ITs share, with no body. */
public final class Http {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  private Http() {}

  /**
   * Sends a request without a body and reads the answer as text; 30 s at most.
   *
   * @param method the method
   * @param url the URL
   * @param headers headers, name and value in turn
   * @return the answer
   * @throws UncheckedIOException if the request fails
   * @throws AssertionError if the thread is interrupted (its interrupt flag set again)
   */
  public static HttpResponse<String> send(String method, String url, List<String> headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.size(); i += 2) {
      b.header(headers.get(i), headers.get(i + 1));
    }
    try {
      return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + url, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
