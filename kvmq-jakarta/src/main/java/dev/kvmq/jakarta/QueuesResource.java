package dev.kvmq.jakarta;

import dev.kvmq.Backoff;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.JobProcessingException;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Subscription;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.bind.JsonbException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The admin REST API: queues, jobs, dead letters, pause/resume, and a server-sent event
 * feed per queue. JSON in and out; errors as {@code application/problem+json}. Every
 * endpoint requires the role {@code kvmq-admin}.
 */
@Path("queues")
@RequestScoped
@RolesAllowed(QueuesResource.ROLE)
@Produces(MediaType.APPLICATION_JSON)
public class QueuesResource {

  /** The role every endpoint requires. */
  public static final String ROLE = "kvmq-admin";

  static final int MAX_BODY_BYTES = 1 << 20;
  private static final Set<String> PUSH_FIELDS = Set.of("state", "priority", "delayUntil", "delayMs",
      "repeatCount", "repeatDelayMs", "retryCount", "retryDelayMs");

  @Inject
  KvmqRuntime runtime;

  @Context
  SecurityContext security;

  /** Carries the mark of {@link KvmqRequestFilter}: only kvmq's application serves this. */
  @Context
  HttpServletRequest servletRequest;

  /** Made by CDI. */
  public QueuesResource() {}

  /**
   * Lists the queues this application knows (those with a handler or an injection point).
   *
   * @return {@code [{name, paused, waiting, delayed, processing, dead}]}
   */
  @GET
  public String queues() {
    admin();
    JsonArrayBuilder a = Json.createArrayBuilder();
    runtime.queues().stream().sorted((x, y) -> x.name().compareTo(y.name())).forEach(q -> a.add(summary(q)));
    return a.build().toString();
  }

  /**
   * One queue's summary.
   *
   * @param name the queue
   * @return {@code {name, paused, waiting, delayed, processing, dead}}
   */
  @GET
  @Path("{q}")
  public String queue(@PathParam("q") String name) {
    admin();
    return summary(find(name)).toString();
  }

  /**
   * The queue's jobs in queue order, optionally filtered by status and paged.
   *
   * @param name the queue
   * @param status waiting, delayed or processing (optional)
   * @param offset how many to skip (default 0)
   * @param limit the most to return (default 1000)
   * @return the jobs
   */
  @GET
  @Path("{q}/jobs")
  public String jobs(@PathParam("q") String name, @QueryParam("status") String status,
      @QueryParam("offset") Integer offset, @QueryParam("limit") Integer limit) {
    admin();
    Queue<?> q = find(name);
    JobStatus filter = status == null ? null : parseStatus(status);
    int skip = nonNegative(offset, 0, "offset");
    int max = nonNegative(limit, 1000, "limit");
    JsonArrayBuilder a = Json.createArrayBuilder();
    q.jobs(filter, skip, max).forEach(e -> a.add(job(e.job(), e.place())));
    return a.build().toString();
  }

  /**
   * Pushes a job. Body: {@code {state, priority?, delayUntil? | delayMs?, repeatCount?
   * (number or "forever"), repeatDelayMs?, retryCount?, retryDelayMs?}}.
   *
   * @param name the queue
   * @param body the JSON body, at most 1 MiB
   * @return 201 with the job
   */
  @POST
  @Path("{q}/jobs")
  @Consumes(MediaType.APPLICATION_JSON)
  public Response push(@PathParam("q") String name, InputStream body) {
    admin();
    Queue<Object> q = typed(find(name));
    JsonObject o = readObject(body);
    for (String field : o.keySet()) {
      if (!PUSH_FIELDS.contains(field)) {
        throw Problem.badRequest(field, "unknown field \"" + field + "\"; known: " + PUSH_FIELDS);
      }
    }
    if (!o.containsKey("state") || o.isNull("state")) {
      throw Problem.badRequest("state", "state is required");
    }
    Object state;
    try {
      state = runtime.jsonb().fromJson(o.get("state").toString(), ((JsonbCodec<?>) q.codec()).type());
    } catch (JsonbException e) {
      throw Problem.badRequest("state", "state does not fit the queue's type "
          + ((JsonbCodec<?>) q.codec()).type().getTypeName() + ": " + e.getMessage());
    }
    JobOptions options = JobOptions.defaults();
    if (o.containsKey("priority")) {
      options = options.priority(number(o, "priority"));
    }
    if (o.containsKey("delayUntil") && o.containsKey("delayMs")) {
      throw Problem.badRequest("delayMs", "give delayUntil or delayMs, not both");
    }
    if (o.containsKey("delayUntil")) {
      try {
        options = options.delayUntil(Instant.parse(string(o, "delayUntil")));
      } catch (DateTimeParseException e) {
        throw Problem.badRequest("delayUntil", "delayUntil is not an ISO-8601 instant such as 2026-01-01T00:00:00Z");
      }
    }
    if (o.containsKey("delayMs")) {
      options = options.delay(Duration.ofMillis(count(o, "delayMs")));
    }
    long repeatCount = 0;
    if (o.containsKey("repeatCount")) {
      JsonValue v = o.get("repeatCount");
      if (v instanceof JsonString s && s.getString().equals("forever")) {
        repeatCount = JobOptions.REPEAT_FOREVER;
      } else {
        repeatCount = count(o, "repeatCount");
      }
    }
    long repeatDelay = o.containsKey("repeatDelayMs") ? count(o, "repeatDelayMs") : 0;
    options = options.repeat(repeatCount, Duration.ofMillis(repeatDelay));
    long retries = o.containsKey("retryCount") ? count(o, "retryCount") : 0;
    if (retries > Integer.MAX_VALUE) {
      throw Problem.badRequest("retryCount", "retryCount is too large");
    }
    long retryDelay = o.containsKey("retryDelayMs") ? count(o, "retryDelayMs") : 0;
    options = options.retry((int) retries, Backoff.fixed(Duration.ofMillis(retryDelay)));
    Job<Object> job;
    try {
      job = q.push(state, options);
    } catch (IllegalArgumentException e) {
      throw Problem.badRequest("state", e.getMessage());
    }
    return Response.status(201).entity(job(job, -1).toString()).build();
  }

  /**
   * One job.
   *
   * @param name the queue
   * @param id the job
   * @return the job, or 404
   */
  @GET
  @Path("{q}/jobs/{id}")
  public String job(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    Job<?> job = find(name).job(id).orElseThrow(() -> Problem.notFound("no job " + id + " in queue " + name));
    return job(job, -1).toString();
  }

  /**
   * Deletes a job: 204; 404 if unknown; 409 while it is being processed.
   *
   * @param name the queue
   * @param id the job
   * @return 204
   */
  @DELETE
  @Path("{q}/jobs/{id}")
  public Response delete(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    try {
      if (!find(name).delete(id)) {
        throw Problem.notFound("no job " + id + " in queue " + name);
      }
    } catch (JobProcessingException e) {
      throw Problem.conflict(e.getMessage());
    }
    return Response.noContent().build();
  }

  /**
   * Deletes every waiting (and delayed) job in one atomic operation.
   *
   * @param name the queue
   * @param status must be {@code waiting}
   * @return {@code {"deleted": n}}
   */
  @DELETE
  @Path("{q}/jobs")
  public String deleteWaiting(@PathParam("q") String name, @QueryParam("status") String status) {
    admin();
    if (!"waiting".equals(status)) {
      throw Problem.badRequest("status", "only status=waiting can be deleted in bulk");
    }
    int n = find(name).deleteWaiting();
    return Json.createObjectBuilder().add("deleted", n).build().toString();
  }

  /**
   * Pauses the queue.
   *
   * @param name the queue
   * @return 204
   */
  @POST
  @Path("{q}/pause")
  public Response pause(@PathParam("q") String name) {
    admin();
    find(name).pause();
    return Response.noContent().build();
  }

  /**
   * Resumes the queue.
   *
   * @param name the queue
   * @return 204
   */
  @POST
  @Path("{q}/resume")
  public Response resume(@PathParam("q") String name) {
    admin();
    find(name).resume();
    return Response.noContent().build();
  }

  /**
   * The dead letters with their last errors, paged.
   *
   * @param name the queue
   * @param offset how many to skip (default 0)
   * @param limit the most to return (default 1000)
   * @return the dead jobs, oldest failure first
   */
  @GET
  @Path("{q}/dead")
  public String dead(@PathParam("q") String name, @QueryParam("offset") Integer offset,
      @QueryParam("limit") Integer limit) {
    admin();
    Queue<?> q = find(name);
    int skip = nonNegative(offset, 0, "offset");
    int max = nonNegative(limit, 1000, "limit");
    JsonArrayBuilder a = Json.createArrayBuilder();
    q.deadLetters(skip, max).forEach(j -> a.add(job(j, -1)));
    return a.build().toString();
  }

  /**
   * What this application's workers did on the queue since it started, and per second over
   * the last {@code seconds} seconds (for the dashboard's chart). Counted in memory by this
   * application: a restart, or another node sharing the queue, is not in it.
   *
   * @param name the queue
   * @param seconds how many seconds of per-second counts, 1 to 900 (default 300)
   * @return {@code {queue, completed, failed, retried, dead, leaseLost, handler: {count,
   *     meanMs, maxMs}, perSecond: {start, completed: [...], failed: [...]}}}, oldest second
   *     first; {@code start} is the epoch second of the first count
   */
  @GET
  @Path("{q}/activity")
  public String activity(@PathParam("q") String name, @QueryParam("seconds") Integer seconds) {
    admin();
    find(name);
    int n = seconds == null ? 300 : seconds;
    if (n < 1 || n > QueueActivity.WINDOW_SECONDS) {
      throw Problem.badRequest("seconds", "seconds must be 1 to " + QueueActivity.WINDOW_SECONDS);
    }
    return activityJson(runtime.activity(name).snapshot(n, System.currentTimeMillis())).toString();
  }

  static JsonObject activityJson(QueueActivity.Snapshot s) {
    JsonArrayBuilder ok = Json.createArrayBuilder();
    JsonArrayBuilder failed = Json.createArrayBuilder();
    for (int i = 0; i < s.completedPerSecond().length; i++) {
      ok.add(s.completedPerSecond()[i]);
      failed.add(s.failedPerSecond()[i]);
    }
    return Json.createObjectBuilder()
        .add("queue", s.queue())
        .add("completed", s.completed())
        .add("failed", s.failed())
        .add("retried", s.retried())
        .add("dead", s.dead())
        .add("leaseLost", s.leaseLost())
        .add("handler", Json.createObjectBuilder()
            .add("count", s.handlerCalls())
            .add("meanMs", s.handlerMeanMillis())
            .add("maxMs", s.handlerMaxMillis()))
        .add("perSecond", Json.createObjectBuilder()
            .add("start", s.startSecond())
            .add("completed", ok)
            .add("failed", failed))
        .build();
  }

  /**
   * Puts a dead letter back in the queue.
   *
   * @param name the queue
   * @param id the dead job
   * @return 204, or 404
   */
  @POST
  @Path("{q}/dead/{id}/retry")
  public Response retryDead(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    if (!find(name).replayDead(id)) {
      throw Problem.notFound("no dead job " + id + " in queue " + name);
    }
    return Response.noContent().build();
  }

  /**
   * Deletes a dead letter.
   *
   * @param name the queue
   * @param id the dead job
   * @return 204, or 404
   */
  @DELETE
  @Path("{q}/dead/{id}")
  public Response deleteDead(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    if (!find(name).deleteDead(id)) {
      throw Problem.notFound("no dead job " + id + " in queue " + name);
    }
    return Response.noContent().build();
  }

  /**
   * A server-sent event per change of the queue: event {@code queue} with the summary
   * ({@code {name, paused, waiting, delayed, processing, dead}}), first at once, then after
   * each change (changes that come close together are reported once).
   *
   * @param name the queue
   * @param sink the client's event stream
   * @param sse the SSE factory
   */
  @GET
  @Path("{q}/events")
  @Produces(MediaType.SERVER_SENT_EVENTS)
  public void events(@PathParam("q") String name, @Context SseEventSink sink, @Context Sse sse) {
    admin();
    Queue<?> q = find(name);
    AtomicInteger pending = new AtomicInteger();
    Subscription[] sub = new Subscription[1];
    Runnable send = new Runnable() {
      @Override
      public void run() {
        int seen;
        do {
          seen = pending.get();
          if (sink.isClosed()) {
            if (sub[0] != null) {
              sub[0].close();
            }
            return;
          }
          try {
            sink.send(sse.newEventBuilder().name("queue").mediaType(MediaType.APPLICATION_JSON_TYPE)
                .data(String.class, summary(q).toString()).build());
          } catch (RuntimeException e) {
            if (sub[0] != null) {
              sub[0].close();
            }
            sink.close();
            return;
          }
        } while (pending.addAndGet(-seen) != 0);
      }
    };
    Runnable request = () -> {
      if (pending.getAndIncrement() == 0) {
        runtime.executor().execute(send);
      }
    };
    if (q.store().notifiesChanges()) {
      sub[0] = q.onChange(request);
    } else {
      sub[0] = pollEvery(Duration.ofSeconds(3), request);
    }
    request.run();
  }

  private Subscription pollEvery(Duration interval, Runnable request) {
    var f = runtime.executor().scheduleAtFixedRate(request, interval.toMillis(), interval.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
    return () -> f.cancel(false);
  }

  // ---- helpers

  private void admin() {
    KvmqRequestFilter.requireKvmqApplication(servletRequest);
    if (!runtime.config().restEnabled()) {
      throw new WebApplicationException(Problem.response(404, "Not Found",
          "the kvmq admin API is off; set kvmq.rest.enabled=true", null));
    }
    if (security == null || security.getUserPrincipal() == null) {
      throw new WebApplicationException(Response.fromResponse(Problem.response(401, "Unauthorized",
          "sign in with a user that has the role " + ROLE, null)).header("WWW-Authenticate", "Basic realm=\"kvmq\"").build());
    }
    if (!security.isUserInRole(ROLE)) {
      throw new WebApplicationException(Problem.response(403, "Forbidden", "the role " + ROLE + " is required", null));
    }
  }

  private Queue<?> find(String name) {
    return runtime.queue(name).orElseThrow(() -> Problem.notFound("no queue named \"" + name + "\""));
  }

  @SuppressWarnings("unchecked")
  private static Queue<Object> typed(Queue<?> q) {
    return (Queue<Object>) q;
  }

  private static JobStatus parseStatus(String s) {
    try {
      JobStatus st = JobStatus.valueOf(s.toUpperCase(Locale.ROOT));
      if (st == JobStatus.DEAD) {
        throw new IllegalArgumentException();
      }
      return st;
    } catch (IllegalArgumentException e) {
      throw Problem.badRequest("status", "status is waiting, delayed or processing (dead letters: GET .../dead)");
    }
  }

  private static int nonNegative(Integer v, int otherwise, String field) {
    if (v == null) {
      return otherwise;
    }
    if (v < 0) {
      throw Problem.badRequest(field, field + " must not be negative");
    }
    return v;
  }

  private JsonObject summary(Queue<?> q) {
    QueueCounts c = q.counts();
    return Json.createObjectBuilder()
        .add("name", q.name())
        .add("paused", q.isPaused())
        .add("waiting", c.waiting())
        .add("delayed", c.delayed())
        .add("processing", c.processing())
        .add("dead", c.dead())
        .build();
  }

  private JsonObject job(Job<?> j, int place) {
    JsonObjectBuilder b = Json.createObjectBuilder()
        .add("id", j.id())
        .add("priority", j.priority())
        .add("state", toJson(j.state()))
        .add("status", j.status().name().toLowerCase(Locale.ROOT));
    if (place >= 0) {
      b.add("place", place);
    }
    b.add("delayUntil", j.delayUntil().toString());
    if (j.leaseUntil().isPresent()) {
      b.add("lockUntil", j.leaseUntil().get().toString());
    } else {
      b.addNull("lockUntil");
    }
    if (j.repeatCount() == JobOptions.REPEAT_FOREVER) {
      b.add("repeatCount", "forever");
    } else {
      b.add("repeatCount", j.repeatCount());
    }
    b.add("repeatDelayMs", j.repeatDelay().toMillis())
        .add("retryCount", j.retriesLeft())
        .add("retryDelayMs", j.retryBackoff().initial().toMillis())
        .add("attempt", j.attempt())
        .add("createdAt", j.createdAt().toString());
    j.lastError().ifPresent(e -> b.add("lastError", Json.createObjectBuilder()
        .add("type", e.type()).add("message", e.message()).add("failedAt", e.failedAt().toString())));
    return b.build();
  }

  private JsonValue toJson(Object state) {
    if (state == null) {
      return JsonValue.NULL;
    }
    try (JsonReader r = Json.createReader(new StringReader(runtime.jsonb().toJson(state)))) {
      return r.readValue();
    }
  }

  private static JsonObject readObject(InputStream body) {
    byte[] bytes;
    try {
      bytes = body.readNBytes(MAX_BODY_BYTES + 1);
    } catch (IOException e) {
      throw Problem.badRequest(null, "could not read the request body");
    }
    if (bytes.length > MAX_BODY_BYTES) {
      throw Problem.badRequest(null, "the body is over " + MAX_BODY_BYTES + " bytes");
    }
    try (JsonReader r = Json.createReader(new StringReader(new String(bytes, StandardCharsets.UTF_8)))) {
      JsonValue v = r.readValue();
      if (!(v instanceof JsonObject o)) {
        throw Problem.badRequest(null, "the body must be a JSON object");
      }
      return o;
    } catch (JsonException e) {
      throw Problem.badRequest(null, "the body is not valid JSON: " + e.getMessage());
    }
  }

  private static double number(JsonObject o, String field) {
    if (!(o.get(field) instanceof JsonNumber n)) {
      throw Problem.badRequest(field, field + " must be a number");
    }
    double d = n.doubleValue();
    if (!Double.isFinite(d)) {
      throw Problem.badRequest(field, field + " must be a finite number");
    }
    return d;
  }

  private static long count(JsonObject o, String field) {
    if (!(o.get(field) instanceof JsonNumber n) || !n.isIntegral()) {
      throw Problem.badRequest(field, field + " must be a whole number");
    }
    long v;
    try {
      v = n.longValueExact();
    } catch (ArithmeticException e) {
      throw Problem.badRequest(field, field + " is too large");
    }
    if (v < 0) {
      throw Problem.badRequest(field, field + " must not be negative");
    }
    return v;
  }

  private static String string(JsonObject o, String field) {
    if (!(o.get(field) instanceof JsonString s)) {
      throw Problem.badRequest(field, field + " must be a string");
    }
    return s.getString();
  }

}
