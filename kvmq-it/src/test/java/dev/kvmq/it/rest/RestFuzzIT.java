package dev.kvmq.it.rest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * A seeded fuzz test of the admin REST API on a running Payara Micro: random methods, paths (valid,
 * unknown, traversal, very long, odd unicode and percent-encoding), headers (content types, accept,
 * huge, duplicate) and bodies (huge, deeply nested, wrong types, NaN and infinities, numbers that
 * overflow, odd unicode, empty, not JSON) against every endpoint, as {@code admin} and without
 * credentials, to 127.0.0.1 only.
 *
 * <p>It asserts, for every request: no 5xx; no stack trace or exception class name in the body;
 * {@code application/problem+json} on every 4xx that kvmq answers (an authenticated request whose
 * path the server routes to kvmq's application); and no write from a refused request (the queues'
 * counts, pause state and jobs are the same after it). The queues {@code fuzz} and {@code
 * fuzz-names} have no handler, so only these requests change them.
 *
 * <p>It stops by itself after {@code kvmq.fuzz.count} requests (default 600) or {@code
 * kvmq.fuzz.seconds} (default 120), or after 10 failures, and then lists them. A failure names its
 * seed: run again with {@code -Dkvmq.seed=N} to replay the same requests.
 *
 * <p>On the same deployment: a push with every option of {@code JobOptions} over HTTP and the field
 * each bad one names, and the {@code HEAD} of an event stream (which the fuzz found hanging).
 */
@OnPayara
class RestFuzzIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-fuzz.war";

  private static final String ADMIN =
      "Basic "
          + Base64.getEncoder()
              .encodeToString(("admin:" + TestUsers.PASSWORD).getBytes(StandardCharsets.UTF_8));

  @Deployment(testable = false)
  static WebArchive war() {
    return AdminWar.of(WAR).addClasses(FuzzState.class, FuzzQueues.class);
  }

  /** A stack frame, or a Java class name ending in Exception or Error. */
  private static final Pattern LEAK =
      Pattern.compile(
          "\\bat [a-zA-Z_$][\\w$]*(\\.[\\w$]+)+\\(|\\b[a-z_][\\w$]*(\\.[a-z_][\\w$]*)+\\.[A-Z][\\w$]*(Exception|Error)\\b"
              + "|\\b[A-Z][\\w$]*Exception\\b");

  private static final Pattern JOB_START = Pattern.compile("(?=\\{\"id\":\")");
  private static final Pattern MOVING = Pattern.compile("\"status\":\"[a-z]+\",|\"place\":\\d+,");
  private static final Pattern ID = Pattern.compile("\\{\"id\":\"([0-9A-Z]+)\"");

  /** One or more well-formed media types, as Content-Type and Accept take them. */
  private static final String MEDIA_TYPE =
      "[\\w.+*-]+/[\\w.+*-]+(\\s*;\\s*(q=\\d+(\\.\\d+)?|(?!q=)[\\w.-]+=[\\w.-]+))*";

  private static final Pattern MEDIA_TYPES =
      Pattern.compile(MEDIA_TYPE + "(\\s*,\\s*" + MEDIA_TYPE + ")*");
  private static final String[] QUEUES = {"fuzz", "fuzz-names"};

  @ArquillianResource URL base;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private URI root; // http://127.0.0.1:port/kvmq-fuzz/
  private final List<String> ids = new ArrayList<>();
  private final List<String> failures = new ArrayList<>(); // the first few, then the test stops

  @Test
  @RunAsClient
  void theAdminApiRefusesBadRequestsCleanlyAndWritesNothingForThem() throws Exception {
    long seed = Long.getLong("kvmq.seed", new Random().nextLong());
    int count = Integer.getInteger("kvmq.fuzz.count", 600);
    long deadline =
        System.nanoTime() + Duration.ofSeconds(Long.getLong("kvmq.fuzz.seconds", 120)).toNanos();
    // Arquillian names the machine's address; the server listens on every interface, so
    // the fuzz talks to the loopback address only, on the same port
    root = URI.create("http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR));
    SplittableRandom random = new SplittableRandom(seed);
    System.out.println("RestFuzzIT seed " + seed + " (replay with -Dkvmq.seed=" + seed + ")");

    String state = snapshot();
    int done = 0;
    int refused = 0;
    for (; done < count && failures.size() < 10 && System.nanoTime() - deadline < 0; done++) {
      Fuzzed f = next(random);
      String what =
          "seed " + seed + " (replay with -Dkvmq.seed=" + seed + "), request " + done + ": " + f;
      Answer a = send(f);
      check(f, a, what);
      if (a.status >= 400 || a.status < 0) {
        refused++;
        String after = snapshot();
        if (!after.equals(state)) {
          failures.add(
              "a write from a refused request ("
                  + what
                  + " answered "
                  + a.status
                  + "): before\n"
                  + state
                  + "after\n"
                  + after);
          state = after;
        }
      } else {
        state = snapshot();
        if (ids.size() > 150) { // keep the queues small: a valid, accepted bulk delete
          for (String q : QUEUES) {
            send(
                new Fuzzed(
                    "DELETE", "kvmq/queues/" + q + "/jobs?status=waiting", true, List.of(), null));
          }
          state = snapshot();
        }
      }
    }
    System.out.println(
        "RestFuzzIT seed " + seed + ": " + done + " requests, " + refused + " refused");
    assertThat(failures)
        .as("seed %s (replay with -Dkvmq.seed=%s): %s requests", seed, seed, done)
        .isEmpty();
    assertThat(done)
        .as("requests sent in the time allowed")
        .isGreaterThanOrEqualTo(Math.min(count, 100));
    assertThat(refused)
        .as("refused requests (the fuzz must reach the refusals)")
        .isGreaterThan(done / 4);
  }

  @Test
  @RunAsClient
  void aPushSpeaksJobOptionsAndNamesTheBadField() throws Exception {
    root = URI.create("http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR));
    Answer pushed =
        send(
            post(
                "{\"state\": {\"label\": \"options\", \"n\": 7}, \"priority\": 2.5, "
                    + "\"delay\": \"PT1H\", \"repeatCount\": \"forever\", \"repeatDelay\": \"PT30M\", \"retryCount\": 3, "
                    + "\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 2, "
                    + "\"max\": \"PT1M\", \"jitter\": 0.25}}"));
    assertThat(pushed.status).as(pushed.body).isEqualTo(201);
    assertThat(pushed.body)
        .contains(
            "\"state\":{\"label\":\"options\",\"n\":7}",
            "\"priority\":2.5",
            "\"status\":\"delayed\"",
            "\"repeatCount\":\"forever\"",
            "\"repeatDelay\":\"PT30M\"",
            "\"retryCount\":3",
            "\"retriesLeft\":3",
            "\"retryBackoff\":{\"kind\":\"exponential\",\"initial\":\"PT1S\",\"multiplier\":2.0,"
                + "\"max\":\"PT1M\",\"jitter\":0.25}");
    Matcher id = ID.matcher(pushed.body);
    assertThat(id.find()).isTrue();
    Answer read =
        send(new Fuzzed("GET", "kvmq/queues/fuzz/jobs/" + id.group(1), true, List.of(), null));
    assertThat(read.body)
        .contains("\"retryBackoff\":{\"kind\":\"exponential\"", "\"retriesLeft\":3");
    Answer fixed =
        send(
            post(
                "{\"state\": {\"label\": \"fixed\", \"n\": 1}, \"delayUntil\": \"2099-01-01T00:00:00Z\", "
                    + "\"retryCount\": 1, \"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT10S\"}}"));
    assertThat(fixed.body)
        .contains(
            "\"delayUntil\":\"2099-01-01T00:00:00Z\"",
            "\"retryBackoff\":{\"kind\":\"fixed\",\"delay\":\"PT10S\"}");

    String before = snapshot();
    for (String[] bad :
        new String[][] {
          {"\"retryCount\": -1", "retryCount"},
          {"\"retryBackoff\": {\"kind\": \"linear\"}", "retryBackoff.kind"},
          {
            "\"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT1S\", \"jitter\": 0.5}",
            "retryBackoff.jitter"
          },
          {"\"options\": {\"retryCount\": 1}", "options"},
          {"\"delay\": \"PT1S\", \"delayUntil\": \"2099-01-01T00:00:00Z\"", "delayUntil"},
          {"\"delayMs\": 9223372036854775807", "delayMs"}
        }) {
      Answer a = send(post("{\"state\": {\"label\": \"bad\", \"n\": 1}, " + bad[0] + "}"));
      assertThat(a.status).as("%s: %s", bad[0], a.body).isEqualTo(400);
      assertThat(a.type).startsWith("application/problem+json");
      assertThat(a.body).as(bad[0]).contains("\"field\":\"" + bad[1] + "\"");
    }
    // one object, each field once (a second object was once dropped with a 201)
    for (String body :
        List.of(
            "{\"state\": {\"label\": \"a\", \"n\": 1}}{\"state\": {\"label\": \"b\", \"n\": 1}}",
            "{\"state\": {\"label\": \"a\", \"n\": 1}} trailing",
            "{\"state\": {\"label\": \"a\", \"n\": 1}, \"priority\": 1, \"priority\": 2}",
            "[1, 2]")) {
      Answer a = send(post(body));
      assertThat(a.status).as("%s: %s", body, a.body).isEqualTo(400);
      assertThat(a.type).startsWith("application/problem+json");
    }
    assertThat(snapshot()).as("nothing pushed by the refused pushes").isEqualTo(before);
    // query parameters that are not whole numbers: a 400 naming them, not JAX-RS's bare 404
    for (String[] bad :
        new String[][] {
          {"jobs?limit=abc", "limit"},
          {"jobs?offset=1.5", "offset"},
          {"dead?limit=99999999999", "limit"},
          {"list?status=completed&limit=x", "limit"},
          {"activity?seconds=x", "seconds"}
        }) {
      Answer a = send(new Fuzzed("GET", "kvmq/queues/fuzz/" + bad[0], true, List.of(), null));
      assertThat(a.status).as("%s: %s", bad[0], a.body).isEqualTo(400);
      assertThat(a.type).startsWith("application/problem+json");
      assertThat(a.body)
          .as(bad[0])
          .contains("\"field\":\"" + bad[1] + "\"", "must be a whole number");
    }
  }

  @Test
  @RunAsClient
  void aHeadOfTheEventStreamAnswersAtOnce() throws Exception {
    root = URI.create("http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR));
    // JAX-RS runs a GET method for a HEAD: the event stream then never ended (send waits 20 s)
    Answer head = send(new Fuzzed("HEAD", "kvmq/queues/fuzz/events", true, List.of(), null));
    assertThat(head.status).isEqualTo(200);
    assertThat(head.type).startsWith("text/event-stream");
    assertThat(
            send(new Fuzzed("HEAD", "kvmq/queues/no-such-queue/events", true, List.of(), null))
                .status)
        .isEqualTo(404);
  }

  private static Fuzzed post(String json) {
    return new Fuzzed(
        "POST",
        "kvmq/queues/fuzz/jobs",
        true,
        List.of(new String[][] {{"Content-Type", "application/json"}}),
        json.getBytes(StandardCharsets.UTF_8));
  }

  // ---- one request

  /**
   * A request: method, path below the context root (raw, already encoded), credentials, headers,
   * body.
   */
  record Fuzzed(String method, String path, boolean admin, List<String[]> headers, byte[] body) {
    @Override
    public String toString() {
      StringBuilder s =
          new StringBuilder(method)
              .append(' ')
              .append(abbreviate(path, 300))
              .append(admin ? " as admin" : " without credentials");
      for (String[] h : headers) {
        s.append(", ").append(h[0]).append(": ").append(abbreviate(h[1], 80));
      }
      if (body != null) {
        s.append(", body (")
            .append(body.length)
            .append(" bytes): ")
            .append(abbreviate(new String(body, StandardCharsets.UTF_8), 300));
      }
      return s.toString();
    }
  }

  record Answer(int status, String type, String body) {}

  private Answer send(Fuzzed f) throws InterruptedException {
    URI uri;
    try {
      uri = URI.create(root + f.path);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("the fuzz made a path java.net.URI refuses: " + f.path, e);
    }
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(20))
            .method(
                f.method,
                f.body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(f.body));
    if (f.admin) {
      b.header("Authorization", ADMIN);
    }
    for (String[] h : f.headers) {
      b.header(h[0], h[1]); // the generators make only values java.net.http accepts
    }
    try {
      HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
      String type = r.headers().firstValue("Content-Type").orElse("");
      String body;
      try (InputStream in = r.body()) {
        // an event stream never ends: its first event is enough
        body =
            new String(
                in.readNBytes(type.startsWith("text/event-stream") ? 0 : 4 << 20),
                StandardCharsets.UTF_8);
      }
      return new Answer(r.statusCode(), type, body);
    } catch (HttpTimeoutException e) {
      throw new AssertionError("no answer in 20 s to " + f, e);
    } catch (IOException e) {
      return new Answer(-1, "", ""); // the server closed the connection (a request over its limits)
    }
  }

  private void check(Fuzzed f, Answer a, String what) {
    if (a.status >= 500) {
      failures.add("status " + a.status + " for " + what + ": " + abbreviate(a.body, 1000));
    }
    Matcher leak = LEAK.matcher(a.body);
    if (leak.find()) {
      failures.add(
          "a stack trace or exception class (\""
              + leak.group()
              + "\") in the answer "
              + a.status
              + " to "
              + what
              + ": "
              + abbreviate(a.body, 1000));
    }
    if (a.status >= 400
        && a.status < 500
        && fromKvmq(f)
        && !f.method.equals("HEAD")
        && !(a.type.startsWith("application/problem+json")
            && a.body.contains("\"status\":" + a.status))) {
      failures.add(
          "no problem+json in the "
              + a.status
              + " answer ("
              + a.type
              + ") to "
              + what
              + ": "
              + abbreviate(a.body, 300));
    }
  }

  /**
   * Whether the server routes the request to kvmq's JAX-RS application: authenticated, and no body
   * on a DELETE, headers within the HTTP layer's size limits, one Content-Type, Content-Type and
   * Accept well-formed media types, and a plain path under {@code kvmq/} (no dot segments, encoded
   * slashes, backslashes, NULs, path parameters or broken escapes, which the server's HTTP layer
   * answers itself).
   */
  private static boolean fromKvmq(Fuzzed f) {
    String p = f.path.contains("?") ? f.path.substring(0, f.path.indexOf('?')) : f.path;
    if (!f.admin
        || !p.startsWith("kvmq/")
        || p.length() > 2000
        || f.headers.stream().mapToInt(h -> h[1].length()).sum() > 7000) {
      return false; // or the HTTP layer's limits on the request line and headers answer
    }
    if (f.method.equals("DELETE") && f.body != null) {
      return false; // the server answers a DELETE with a body with an empty 400 of its own
    }
    if (f.headers.stream().filter(h -> h[0].equals("Content-Type")).count() > 1) {
      return false; // Jersey refuses two Content-Types while it reads the request, as below
    }
    for (String[] h : f.headers) {
      if (!h[1].chars().allMatch(c -> c >= 0x20 && c < 0x7f)
          || ((h[0].equals("Content-Type") || h[0].equals("Accept"))
              && !MEDIA_TYPES.matcher(h[1]).matches())) {
        // Jersey refuses a header it can't parse (a media type, a language) while it reads
        // the request, before any resource or exception mapper of kvmq's runs: its 400 is
        // the server's page
        return false;
      }
    }
    String lower = p.toLowerCase();
    return !(lower.contains("/.")
        || lower.contains("%2e")
        || lower.contains("%2f")
        || lower.contains("%5c")
        || lower.contains("%00")
        || lower.contains(";")
        || lower.contains("//")
        || !validEscapes(p));
  }

  private static boolean validEscapes(String p) {
    for (int i = 0; i < p.length(); i++) {
      if (p.charAt(i) == '%') {
        if (i + 2 >= p.length()
            || Character.digit(p.charAt(i + 1), 16) < 0
            || Character.digit(p.charAt(i + 2), 16) < 0) {
          return false;
        }
      }
    }
    // well-formed escapes of bytes that are not UTF-8 are the HTTP layer's too
    byte[] bytes =
        java.net.URLDecoder.decode(p.replace("+", "%2B"), StandardCharsets.ISO_8859_1)
            .getBytes(StandardCharsets.ISO_8859_1);
    try {
      StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes));
      return true;
    } catch (java.nio.charset.CharacterCodingException e) {
      return false;
    }
  }

  // ---- the queues' state, without what moves by itself (a delayed job becoming due)

  private String snapshot() throws InterruptedException {
    StringBuilder s = new StringBuilder();
    ids.clear();
    for (String q : QUEUES) {
      Answer summary = send(new Fuzzed("GET", "kvmq/queues/" + q, true, List.of(), null));
      Answer jobs =
          send(new Fuzzed("GET", "kvmq/queues/" + q + "/jobs?limit=1000", true, List.of(), null));
      Answer dead = send(new Fuzzed("GET", "kvmq/queues/" + q + "/dead", true, List.of(), null));
      assertThat(List.of(summary.status, jobs.status, dead.status))
          .as("reading %s", q)
          .containsOnly(200);
      Matcher c =
          Pattern.compile(
                  "\"paused\":(\\w+),\"waiting\":(\\d+),\"delayed\":(\\d+),\"processing\":(\\d+),"
                      + "\"dead\":(\\d+)")
              .matcher(summary.body);
      assertThat(c.find()).as(summary.body).isTrue();
      s.append(q)
          .append(": paused ")
          .append(c.group(1))
          .append(", queued ")
          .append(Long.parseLong(c.group(2)) + Long.parseLong(c.group(3)))
          .append(", processing ")
          .append(c.group(4))
          .append(", dead ")
          .append(c.group(5))
          .append('\n');
      List<String> list = new ArrayList<>();
      for (String job : JOB_START.split(jobs.body)) {
        if (job.startsWith("{")) {
          list.add(MOVING.matcher(job.replaceAll("[,\\]]+$", "")).replaceAll(""));
        }
      }
      list.sort(null);
      list.forEach(j -> s.append("  ").append(j).append('\n'));
      s.append("  dead: ").append(dead.body).append('\n');
      Matcher id = ID.matcher(jobs.body);
      while (id.find()) {
        ids.add(id.group(1));
      }
    }
    return s.toString();
  }

  // ---- the generators

  private Fuzzed next(SplittableRandom r) {
    String method =
        pick(
            r, "GET", "GET", "POST", "POST", "POST", "DELETE", "DELETE", "PUT", "PATCH", "HEAD",
            "OPTIONS");
    boolean admin = r.nextInt(10) < 8;
    List<String[]> headers = new ArrayList<>();
    byte[] body = null;
    String path = path(r);
    if (!method.equals("GET") && !method.equals("HEAD") && r.nextInt(10) < 8) {
      body = body(r);
      headers.add(
          new String[] {
            "Content-Type",
            pick(
                r,
                "application/json",
                "application/json",
                "application/json; charset=UTF-8",
                "application/json; charset=ISO-8859-1",
                "text/plain",
                "application/xml",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "application/problem+json",
                "*/*",
                "a/b/c",
                "application/json; q=",
                "")
          });
    }
    int extra = r.nextInt(4);
    for (int i = 0; i < extra; i++) {
      switch (r.nextInt(6)) {
        case 0 ->
            headers.add(
                new String[] {
                  "Accept",
                  pick(
                      r,
                      "application/json",
                      "text/html",
                      "application/xml",
                      "text/event-stream",
                      "*/*",
                      "application/problem+json",
                      "nonsense",
                      "text/plain;q=0.5, application/json;q=abc")
                });
        case 1 ->
            headers.add(new String[] {"Content-Type", pick(r, "application/json", "text/plain")});
        case 2 ->
            headers.add(
                new String[] {"X-Fuzz", "v".repeat(r.nextBoolean() ? r.nextInt(1, 4000) : 20_000)});
        case 3 ->
            headers.add(new String[] {"Accept-Charset", pick(r, "utf-8", "latin1", "x-unknown")});
        case 4 ->
            headers.add(
                new String[] {
                  "Accept-Language",
                  r.nextBoolean() ? "en-US, de;q=0.5" : "x-\u00e9\u00ff".repeat(r.nextInt(1, 50))
                });
        default -> headers.add(new String[] {"If-None-Match", "\"" + r.nextLong() + "\""});
      }
    }
    return new Fuzzed(method, path, admin, headers, body);
  }

  private String path(SplittableRandom r) {
    String q = r.nextInt(10) < 7 ? pick(r, QUEUES) : segment(r);
    String id = !ids.isEmpty() && r.nextBoolean() ? ids.get(r.nextInt(ids.size())) : segment(r);
    String p =
        switch (r.nextInt(14)) {
          case 0 -> "kvmq/queues";
          case 1 -> "kvmq/queues/" + q;
          case 2, 3 -> "kvmq/queues/" + q + "/jobs" + query(r);
          case 4 -> "kvmq/queues/" + q + "/jobs/" + id;
          case 5 -> "kvmq/queues/" + q + "/" + pick(r, "pause", "resume");
          case 6 -> "kvmq/queues/" + q + "/dead" + query(r);
          case 7 -> "kvmq/queues/" + q + "/dead/" + id + pick(r, "", "/retry");
          case 8 -> "kvmq/queues/" + q + "/activity" + query(r);
          case 9 -> "kvmq/queues/" + q + "/events";
          case 10 ->
              "kvmq/dashboard"
                  + pick(
                      r,
                      "",
                      "/",
                      "/dashboard.js",
                      "/dashboard.css",
                      "/index.html",
                      "/" + segment(r));
          case 11 -> "kvmq/" + segment(r) + "/" + segment(r);
          case 12 ->
              pick(
                  r,
                  "kvmq/queues/../../kvmq/queues",
                  "kvmq/%2e%2e/%2e%2e/WEB-INF/web.xml",
                  "kvmq/queues/..%2F..%2FWEB-INF%2Fweb.xml",
                  "kvmq/queues/%2e%2e%2fWEB-INF",
                  "kvmq//queues",
                  "kvmq/queues/fuzz/../fuzz-names/jobs",
                  "kvmq/dashboard/..%5c..%5cWEB-INF%5cweb.xml",
                  "kvmq/queues;x=1",
                  "kvmq/queues/fuzz;jsessionid=1/jobs",
                  "kvmq/queues/%C3%28",
                  "kvmq/queues/%00",
                  "WEB-INF/web.xml",
                  "kvmq",
                  "kvmq/");
          default -> "kvmq/queues/" + q + "/" + segment(r) + pick(r, "", "/" + segment(r));
        };
    return r.nextInt(20) == 0 ? p + "/" : p;
  }

  private String query(SplittableRandom r) {
    if (r.nextInt(3) == 0) {
      return "";
    }
    StringBuilder s = new StringBuilder("?");
    int n = r.nextInt(1, 4);
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        s.append('&');
      }
      s.append(pick(r, "status", "offset", "limit", "seconds", "status", "x", "limit"))
          .append('=')
          .append(
              pick(
                  r,
                  "waiting",
                  "delayed",
                  "processing",
                  "dead",
                  "WAITING",
                  "",
                  "0",
                  "1",
                  "-1",
                  "50",
                  "2147483648",
                  "99999999999999999999",
                  "1e3",
                  "NaN",
                  "abc",
                  "%F0%9F%98%80",
                  "%00",
                  "901",
                  "0x10",
                  "%2B5",
                  "1.5",
                  "300"));
    }
    return s.toString();
  }

  /** A path segment, percent-encoded as a URI needs it, often odd. */
  private String segment(SplittableRandom r) {
    String raw =
        switch (r.nextInt(12)) {
          case 0 -> "no-such-" + r.nextInt(1000);
          case 1 -> "01JZZZZZZZZZZZZZZZZZZZZZZZ";
          case 2 -> "x".repeat(r.nextInt(200, 9000));
          case 3 -> "ü😀\u202e\u0000\uFFFF";
          case 4 -> "<script>alert(1)</script>";
          case 5 -> "\"'`${1}{{x}}";
          case 6 -> " ";
          case 7 -> "%";
          case 8 -> "a/b";
          case 9 -> "\\..\\";
          case 10 -> "\uD800"; // a lone surrogate: URLEncoder writes '?'
          default -> "fuzz";
        };
    return URLEncoder.encode(raw, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private byte[] body(SplittableRandom r) {
    String s =
        switch (r.nextInt(24)) {
          case 0 -> "";
          case 1 -> "not json";
          case 2 -> "{";
          case 3 -> "[".repeat(r.nextInt(1, 200_000));
          case 4 -> "{\"state\": " + "[".repeat(5000) + "]".repeat(5000) + "}";
          case 5 -> "{\"state\": " + "{\"a\":".repeat(3000) + "1" + "}".repeat(3000) + "}";
          case 6 ->
              "{\"state\": {\"label\": \""
                  + "x".repeat(r.nextInt(900_000, 1_100_000))
                  + "\", \"n\": 1}}";
          case 7 -> " ".repeat((1 << 20) + 1);
          case 8 ->
              "{\"state\": {\"label\": \"a\", \"n\": "
                  + pick(
                      r,
                      "NaN",
                      "Infinity",
                      "-Infinity",
                      "1e400",
                      "2147483648",
                      "9223372036854775808",
                      "-9223372036854775809",
                      "1e-400",
                      "0.5",
                      "\"1\"",
                      "null",
                      "true",
                      "[]",
                      "{}",
                      "1e2000",
                      "123456789012345678901234567890")
                  + "}}";
          case 9 ->
              "{\"state\": "
                  + pick(r, "1", "\"s\"", "[]", "true", "null", "{}", "[\"a\", 1]")
                  + "}";
          case 10 ->
              "{\"state\": {\"label\": \""
                  + pick(
                      r,
                      "\\ud800",
                      "\\u0000",
                      "\\uffff",
                      "ü😀\u202e",
                      "</script><img src=x onerror=alert(1)>",
                      "\\\"quoted\\\"")
                  + "\", \"n\": 1}}";
          case 11 -> "{\"state\": {\"label\": \"a\", \"n\": 1}, " + option(r) + "}";
          case 12, 13, 14 -> validPush(r);
          case 15 ->
              "{\"state\": {\"label\": \"a\", \"n\": 1}, \"retryBackoff\": {\"kind\": "
                  + pick(
                      r,
                      "\"linear\"",
                      "1",
                      "null",
                      "\"FIXED\"",
                      "\"fixed\", \"delay\": \"PT1S\", \"extra\": 1",
                      "\"exponential\", \"initial\": \"PT1S\", \"multiplier\": 1e400, \"max\": \"PT1M\"",
                      "\"exponential\", \"initial\": \"PT1S\", \"multiplier\": 2, \"max\": \"PT1M\", \"jitter\": NaN")
                  + "}}";
          case 16 ->
              "{\"state\": {\"label\": \"a\", \"n\": 1}, \"state\": {\"label\": \"b\", \"n\": 2}}";
          case 17 -> "{\"state\": [[\"a\"]], \"priority\": 1}";
          case 18 -> "{\"state\": [\"a\", \"b\"]}"; // a valid state of fuzz-names, not of fuzz
          case 19 -> "\uFEFF{\"state\": {\"label\": \"bom\", \"n\": 1}}";
          case 20 ->
              "{\"state\": {\"label\": \"a\", \"n\": 1}, \"priority\": "
                  + pick(r, "1e308", "-1e308", "4.9e-324", "-0", "1e309")
                  + "}";
          case 21 -> "{\"a\":".repeat(r.nextInt(1, 100_000)) + "1";
          case 22 -> null;
          default -> "{\"state\": {\"label\": \"a\", \"n\": 1}, \"unknown\": 1}";
        };
    if (s == null) {
      byte[] b = new byte[r.nextInt(1, 200)];
      for (int i = 0; i < b.length; i++) {
        b[i] = (byte) r.nextInt(256);
      }
      return b;
    }
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String option(SplittableRandom r) {
    return pick(
        r,
        "\"retryCount\": -1",
        "\"retryCount\": 2147483648",
        "\"retryCount\": 1.5",
        "\"retryCount\": \"3\"",
        "\"repeatCount\": -2",
        "\"repeatCount\": \"always\"",
        "\"priority\": NaN",
        "\"priority\": \"high\"",
        "\"priority\": 1e400",
        "\"delay\": \"PT-1S\"",
        "\"delay\": 5",
        "\"delay\": \"PT999999999999999S\"",
        "\"delayMs\": 9223372036854775807",
        "\"delayMs\": -1",
        "\"delayUntil\": \"+999999999-12-31T23:59:59Z\"",
        "\"delayUntil\": \"yesterday\"",
        "\"delay\": \"PT1S\", \"delayMs\": 1",
        "\"delay\": \"PT1S\", \"delayUntil\": \"2030-01-01T00:00:00Z\"",
        "\"repeatDelay\": \"P1000000D\"",
        "\"retryDelayMs\": 1e3",
        "\"retryBackoff\": []",
        "\"retryBackoff\": {}",
        "\"retries\": 1",
        "\"options\": {}",
        "\"group\": \"\"",
        "\"group\": 7",
        "\"unique\": \"k\"",
        "\"unique\": {\"key\": \"\", \"scope\": \"waiting\"}",
        "\"unique\": {\"key\": \"k\", \"scope\": \"always\"}",
        "\"unique\": {\"key\": \"k\", \"scope\": \"period\", \"period\": \"PT0S\"}",
        "\"\": 1");
  }

  private static String validPush(SplittableRandom r) {
    StringBuilder s =
        new StringBuilder("{\"state\": {\"label\": \"ok-")
            .append(r.nextInt(1000))
            .append("\", \"n\": ")
            .append(r.nextInt())
            .append('}');
    if (r.nextBoolean()) {
      s.append(", \"priority\": ").append(r.nextInt(-5, 5));
    }
    switch (r.nextInt(4)) {
      case 0 -> s.append(", \"delay\": \"PT").append(r.nextInt(0, 10)).append("S\"");
      case 1 -> s.append(", \"delayUntil\": \"2099-01-01T00:00:00Z\"");
      case 2 -> s.append(", \"delayMs\": ").append(r.nextInt(0, 100_000));
      default -> {}
    }
    if (r.nextBoolean()) {
      s.append(", \"retryCount\": ")
          .append(r.nextInt(0, 5))
          .append(", \"retryBackoff\": ")
          .append(
              pick(
                  r,
                  "{\"kind\": \"none\"}",
                  "{\"kind\": \"fixed\", \"delay\": \"PT1S\"}",
                  "{\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 2, \"max\": \"PT1M\", "
                      + "\"jitter\": 0.1}"));
    }
    if (r.nextBoolean()) {
      s.append(", \"repeatCount\": ")
          .append(pick(r, "0", "2", "\"forever\""))
          .append(", \"repeatDelay\": \"PT1M\"");
    }
    return s.append('}').toString();
  }

  @SafeVarargs
  private static <T> T pick(SplittableRandom r, T... choices) {
    return choices[r.nextInt(choices.length)];
  }

  private static String abbreviate(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max) + "… (" + s.length() + " chars)";
  }
}
