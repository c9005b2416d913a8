package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.JobProcessingException;
import dev.kvmq.JobStatus;
import dev.kvmq.PushResult;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Schedule;
import dev.kvmq.ScheduleEntry;
import dev.kvmq.ScheduleSpec;
import dev.kvmq.Subscription;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.stream.JsonParser;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HEAD;
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
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The admin REST API: queues, jobs, dead letters, pause/resume, cancel, listings by status with a
 * cursor, recurring schedules, and a server-sent event feed per queue. JSON in and out; errors as
 * {@code application/problem+json}. Every endpoint requires the role {@code kvmq-admin}.
 *
 * <p>Every endpoint calls {@code admin()} first, which answers 404 outside kvmq's own JAX-RS
 * application and then checks the caller and the role. There is no {@code @RolesAllowed}: an
 * application that scans the WAR serves these classes under its own path too, and there the
 * container's role check ran first and answered 401 (with the application's challenge) or 403,
 * where kvmq answers 404.
 */
@Path("queues")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class QueuesResource {

  /** The role every endpoint requires. */
  public static final String ROLE = "kvmq-admin";

  static final int MAX_BODY_BYTES = 1 << 20;

  @Inject KvmqRuntime runtime;

  @Context SecurityContext security;

  /** Carries the mark of {@link KvmqRequestFilter}: only kvmq's application serves this. */
  @Context HttpServletRequest servletRequest;

  /** Made by CDI. */
  public QueuesResource() {}

  /**
   * Lists the queues: those this application opens (with a handler or an injection point), and
   * those the store holds that nothing here opens ({@code "opened": false}: a handler removed, a
   * queue renamed), whose jobs wait for a handler that may never come.
   *
   * @return {@code [{name, opened, paused, waiting, delayed, processing, dead, held}]}, by name
   */
  @GET
  public String queues() {
    admin();
    java.util.SortedMap<String, JsonObject> byName = new java.util.TreeMap<>();
    for (Queue<?> q : runtime.queues()) {
      byName.put(q.name(), summary(q, true));
    }
    for (AdminQueue<?> q : runtime.unopenedQueues()) {
      byName.putIfAbsent(q.queue().name(), summary(q.queue(), q.opened()));
    }
    JsonArrayBuilder a = Json.createArrayBuilder();
    byName.values().forEach(a::add);
    return a.build().toString();
  }

  /**
   * One queue's summary.
   *
   * @param name the queue
   * @return {@code {name, opened, paused, waiting, delayed, processing, dead, held}}
   */
  @GET
  @Path("{q}")
  public String queue(@PathParam("q") String name) {
    admin();
    AdminQueue<?> q = find(name);
    return summary(q.queue(), q.opened()).toString();
  }

  /**
   * The queue's jobs in queue order, optionally filtered by status and paged.
   *
   * @param name the queue
   * @param status waiting, delayed, processing or held (optional)
   * @param offset how many to skip (default 0)
   * @param limit the most to return (default 1000)
   * @return the jobs
   */
  @GET
  @Path("{q}/jobs")
  public String jobs(
      @PathParam("q") String name,
      @QueryParam("status") String status,
      @QueryParam("offset") String offset,
      @QueryParam("limit") String limit) {
    admin();
    AdminQueue<?> q = find(name);
    JobStatus filter = status == null ? null : parseStatus(status);
    int skip = nonNegative(whole(offset, "offset"), 0, "offset");
    int max = nonNegative(whole(limit, "limit"), 1000, "limit");
    return jobsJson(q, filter, skip, max).build().toString();
  }

  /**
   * Pushes a job. Body: {@code {state, priority?, delay? | delayUntil?, repeatCount? (number or
   * "forever"), repeatDelay?, retryCount?, retryBackoff?, unique?, group?, timeout?,
   * interruptOnCancel?}}, the names and options of {@link JobOptions} (see {@link PushBody}).
   *
   * @param name the queue
   * @param body the JSON body, at most 1 MiB
   * @return 201 with the new job and {@code "outcome": "created"}; 200 when the unique key was
   *     taken, with the job that holds it and {@code "outcome": "duplicate"} (nothing written), or
   *     {@code "outcome": "debounced"} (that waiting job, given the push's state and due time)
   * @throws WebApplicationException 400 problem naming the field for bad input (nothing is pushed),
   *     404 for an unknown queue, 409 for a queue this application does not open ({@code "opened":
   *     false} in the listing)
   */
  @POST
  @Path("{q}/jobs")
  @Consumes(MediaType.APPLICATION_JSON)
  public Response push(@PathParam("q") String name, InputStream body) {
    admin();
    AdminQueue<?> q = find(name);
    if (!q.opened()) {
      throw Problem.conflict(
          "queue \""
              + name
              + "\" is not opened by this application (no @QueueHandler, no JobQueue injected):"
              + " its state type is unknown here, so the admin API does not push to it. Its jobs"
              + " can be read, retried, cancelled and deleted; nothing was pushed");
    }
    try {
      JsonObject pushed = push(q, readObject(body));
      int status = CREATED.equals(pushed.getString("outcome")) ? 201 : 200;
      return Response.status(status).entity(pushed.toString()).build();
    } catch (PushBody.Refused e) {
      throw Problem.badRequest(e.field, e.getMessage());
    }
  }

  /** The {@code outcome} of a push that stored a new job. */
  static final String CREATED = "created";

  /**
   * Reads a push body and pushes its job; refuses bad input before anything is written.
   *
   * @return the job as JSON with {@code outcome}: {@code created}, {@code duplicate} or {@code
   *     debounced} ({@link PushResult.Outcome}); for a duplicate of a throttle key whose job is
   *     gone, only {@code {id, outcome}}
   * @throws PushBody.Refused for bad input
   */
  static <S> JsonObject push(AdminQueue<S> q, JsonObject o) {
    JobOptions options = PushBody.options(o);
    if (!o.containsKey("state") || o.isNull("state")) {
      throw PushBody.refused("state", "state is required");
    }
    S state;
    try {
      state = q.fromJson(o.get("state"));
    } catch (
        RuntimeException
            e) { // JsonbException, or what JSON-B lets through: it read the client's JSON
      // JsonbCodec's message names the property JSON-B could not map or would have changed
      // (docs/jakarta.md, JSON-B states)
      String why = e instanceof jakarta.json.bind.JsonbException ? e.getMessage() : null;
      throw PushBody.refused(
          "state",
          why != null && why.startsWith(JsonbCodec.DOES_NOT_FIT)
              ? "state does not fit the queue's type: "
                  + cut(why.substring(JsonbCodec.DOES_NOT_FIT.length()), 500)
              : "state does not fit the queue's type " + q.typeName());
    }
    if (state == null) {
      throw PushBody.refused("state", "state is required");
    }
    try {
      if (options.unique() == null) {
        return withOutcome(job(q, q.queue().push(state, options), -1), CREATED);
      }
      PushResult<S> r = q.queue().offer(state, options);
      String outcome = r.outcome().name().toLowerCase(Locale.ROOT);
      return r.job()
          .map(j -> withOutcome(job(q, j, -1), outcome))
          .orElseGet(
              () -> Json.createObjectBuilder().add("id", r.id()).add("outcome", outcome).build());
    } catch (IllegalArgumentException e) {
      throw PushBody.refused("state", e.getMessage());
    }
  }

  private static JsonObject withOutcome(JsonObject job, String outcome) {
    return Json.createObjectBuilder(job).add("outcome", outcome).build();
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
    return jobJson(find(name), id).toString();
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
      if (!find(name).queue().delete(id)) {
        throw Problem.notFound("no job " + id + " in queue " + name);
      }
    } catch (JobProcessingException e) {
      throw Problem.conflict(e.getMessage());
    }
    return Response.noContent().build();
  }

  /**
   * Deletes jobs in bulk: {@code status=waiting} deletes every waiting and delayed job in one
   * atomic operation; {@code held}, {@code dead}, {@code cancelled} or {@code completed} deletes
   * every job of that status in batches of at most {@link Queue#BULK_BATCH} per commit. Jobs being
   * processed are never deleted (cancel them instead).
   *
   * <p>With {@code group} or {@code unique}, only the jobs of that group or whose unique key starts
   * with that prefix are deleted, in batches ({@code status=waiting} too: its waiting and delayed
   * jobs that match).
   *
   * @param name the queue
   * @param status waiting, held, dead, cancelled or completed
   * @param group only the jobs of this group (optional)
   * @param unique only the jobs whose unique key starts with this (optional)
   * @return {@code {"deleted": n}}
   * @throws WebApplicationException 409 problem, nothing deleted, if {@code status=waiting} could
   *     not be deleted in one operation because workers kept changing the queue (its detail says to
   *     pause the queue and try again)
   */
  @DELETE
  @Path("{q}/jobs")
  public String deleteWaiting(
      @PathParam("q") String name,
      @QueryParam("status") String status,
      @QueryParam("group") String group,
      @QueryParam("unique") String unique) {
    admin();
    Queue<?> q = find(name).queue();
    boolean narrowed = (group != null && !group.isEmpty()) || (unique != null && !unique.isEmpty());
    if (!"waiting".equals(status) || narrowed) {
      return refusing(() -> ControlRest.deleteAll(q, status, group, unique)).toString();
    }
    return refusing(() -> ControlRest.deleteWaiting(q)).toString();
  }

  /**
   * Cancels a job that has not ended (waiting, delayed, held or being processed): it becomes
   * cancelled in one commit and no worker runs it again. A running job's lease is revoked in that
   * commit, its handler is told to stop ({@code JobContext.CancelReason.CANCELLED}), and the
   * worker's later completion or failure is refused.
   *
   * @param name the queue
   * @param id the job
   * @return 204; 404 if there is no such job; 409 if it has ended (dead, completed or cancelled)
   */
  @POST
  @Path("{q}/jobs/{id}/cancel")
  public Response cancel(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    Queue<?> q = find(name).queue();
    refusing(
        () -> {
          ControlRest.cancel(q, id);
          return null;
        });
    return Response.noContent().build();
  }

  /**
   * Cancels every job of the statuses given, in batches of at most {@link Queue#BULK_BATCH} jobs
   * per commit (a bulk cancel never holds a claim up for long); a job that a worker claims or ends
   * between a batch's read and its commit is left as its own commit made it.
   *
   * @param name the queue
   * @param status comma-separated: waiting, delayed, processing, held
   * @param group only the jobs of this group (optional)
   * @param unique only the jobs whose unique key starts with this (optional)
   * @return {@code {"cancelled": n}}
   */
  @POST
  @Path("{q}/cancel")
  public String cancelAll(
      @PathParam("q") String name,
      @QueryParam("status") String status,
      @QueryParam("group") String group,
      @QueryParam("unique") String unique) {
    admin();
    Queue<?> q = find(name).queue();
    return refusing(() -> ControlRest.cancelAll(q, status, group, unique)).toString();
  }

  /**
   * One page of the jobs of a status, any status (completed, cancelled and dead included), in the
   * order of the status's index (waiting: queue order; the others oldest first); a page costs
   * O(limit + log n) whatever the queue holds. With {@code group} or {@code unique}, each job of
   * the status is checked: a page reads at most {@code JobFilter.MAX_SCAN} entries and may hold
   * fewer jobs than {@code limit}, even none, with a {@code next}.
   *
   * @param name the queue
   * @param status waiting, delayed, processing, held, dead, completed or cancelled
   * @param cursor the {@code next} of the previous page of the same request, or absent for the
   *     first
   * @param limit the most jobs to return, 1 to 1000 (default 100)
   * @param group only the jobs of this group (optional)
   * @param unique only the jobs whose unique key starts with this (optional)
   * @return {@code {status, jobs: [...], next?}}; {@code next} is absent on the last page
   */
  @GET
  @Path("{q}/list")
  public String list(
      @PathParam("q") String name,
      @QueryParam("status") String status,
      @QueryParam("cursor") String cursor,
      @QueryParam("limit") String limit,
      @QueryParam("group") String group,
      @QueryParam("unique") String unique) {
    admin();
    AdminQueue<?> q = find(name);
    Integer max = whole(limit, "limit");
    return refusing(() -> ControlRest.page(q, status, cursor, max, group, unique)).toString();
  }

  /**
   * How many jobs a status has, counted from its index; with {@code group} or {@code unique}, by
   * reading every job of the status.
   *
   * @param name the queue
   * @param status waiting, delayed, processing, held, dead, completed or cancelled
   * @param group only the jobs of this group (optional)
   * @param unique only the jobs whose unique key starts with this (optional)
   * @return {@code {status, count}}
   */
  @GET
  @Path("{q}/count")
  public String count(
      @PathParam("q") String name,
      @QueryParam("status") String status,
      @QueryParam("group") String group,
      @QueryParam("unique") String unique) {
    admin();
    Queue<?> q = find(name).queue();
    return refusing(() -> ControlRest.count(q, status, group, unique)).toString();
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
    find(name).queue().pause();
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
    find(name).queue().resume();
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
  public String dead(
      @PathParam("q") String name,
      @QueryParam("offset") String offset,
      @QueryParam("limit") String limit) {
    admin();
    AdminQueue<?> q = find(name);
    int skip = nonNegative(whole(offset, "offset"), 0, "offset");
    int max = nonNegative(whole(limit, "limit"), 1000, "limit");
    return deadJson(q, skip, max).build().toString();
  }

  /**
   * What this application's workers did on the queue since it started, and per second over the last
   * {@code seconds} seconds (for the dashboard's chart). Counted in memory by this application: a
   * restart, or another node sharing the queue, is not in it.
   *
   * @param name the queue
   * @param seconds how many seconds of per-second counts, 1 to 900 (default 300)
   * @return {@code {queue, completed, failed, retried, dead, leaseLost, cancelled, handler: {count,
   *     meanMs, maxMs}, perSecond: {start, completed: [...], failed: [...]}}}, oldest second first;
   *     {@code start} is the epoch second of the first count
   */
  @GET
  @Path("{q}/activity")
  public String activity(@PathParam("q") String name, @QueryParam("seconds") String seconds) {
    admin();
    find(name);
    Integer given = whole(seconds, "seconds");
    int n = given == null ? 300 : given;
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
        .add("cancelled", s.cancelled())
        .add(
            "handler",
            Json.createObjectBuilder()
                .add("count", s.handlerCalls())
                .add("meanMs", s.handlerMeanMillis())
                .add("maxMs", s.handlerMaxMillis()))
        .add(
            "perSecond",
            Json.createObjectBuilder()
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
    if (!find(name).queue().replayDead(id)) {
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
    if (!find(name).queue().deleteDead(id)) {
      throw Problem.notFound("no dead job " + id + " in queue " + name);
    }
    return Response.noContent().build();
  }

  /**
   * Releases a held job (docs/semantics.md, "Held jobs"): an operator's decision for a job whose
   * transaction never ended here. It joins the queue and runs. To discard it instead, {@code DELETE
   * .../jobs/{id}}.
   *
   * @param name the queue
   * @param id the held job
   * @return 204, or 404 if there is no held job with that id
   */
  @POST
  @Path("{q}/jobs/{id}/release")
  public Response releaseHeld(@PathParam("q") String name, @PathParam("id") String id) {
    admin();
    if (find(name).queue().releaseHeld(java.util.List.of(id)) == 0) {
      throw Problem.notFound("no held job " + id + " in queue " + name);
    }
    return Response.noContent().build();
  }

  /**
   * A server-sent event per change of the queue: event {@code queue} with the summary ({@code
   * {name, opened, paused, waiting, delayed, processing, dead, held}}), first at once, then after
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
    AdminQueue<?> found = find(name);
    Queue<?> q = found.queue();
    boolean opened = found.opened();
    AtomicInteger pending = new AtomicInteger();
    Subscription[] sub = new Subscription[1];
    // closed by the runtime when the application stops: the client reconnects to the next one
    AutoCloseable stream = sink::close;
    if (!runtime.streamOpened(stream)) {
      sink.close();
      return;
    }
    Runnable send =
        new Runnable() {
          @Override
          public void run() {
            int seen;
            do {
              seen = pending.get();
              if (sink.isClosed()) {
                if (sub[0] != null) {
                  sub[0].close();
                }
                runtime.streamClosed(stream);
                return;
              }
              try {
                sink.send(
                    sse.newEventBuilder()
                        .name("queue")
                        .mediaType(MediaType.APPLICATION_JSON_TYPE)
                        .data(String.class, summary(q, opened).toString())
                        .build());
              } catch (RuntimeException e) {
                if (sub[0] != null) {
                  sub[0].close();
                }
                sink.close();
                runtime.streamClosed(stream);
                return;
              }
            } while (pending.addAndGet(-seen) != 0);
          }
        };
    Runnable request =
        () -> {
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

  /**
   * Answers a {@code HEAD} of the event stream with its headers only. Without it, JAX-RS would run
   * {@link #events} for a {@code HEAD}: a stream with no body that never ends, holding a
   * subscription and a connection until the client gives up.
   *
   * @param name the queue
   * @return 200 with the event stream's media type, or 404
   */
  @HEAD
  @Path("{q}/events")
  @Produces(MediaType.SERVER_SENT_EVENTS)
  public Response eventsHead(@PathParam("q") String name) {
    admin();
    find(name);
    return Response.ok().type(MediaType.SERVER_SENT_EVENTS_TYPE).build();
  }

  // ---- recurring schedules (docs/scheduling.md)

  /**
   * The queue's recurring schedules, by name.
   *
   * @param name the queue
   * @return {@code [{name, cron?, zone?, every?, anchor?, state, missed, missedLimit, overlap,
   *     lateness, paused, nextDue?, lastSlot?, lastJobId?}]}, see {@link #schedule(String, String)}
   */
  @GET
  @Path("{q}/schedules")
  public String schedules(@PathParam("q") String name) {
    admin();
    return schedulesJson(find(name)).build().toString();
  }

  /**
   * One schedule: {@code {name, cron, zone}} or {@code {name, every, anchor}} (ISO-8601), its job's
   * {@code state}, {@code missed} ({@code run-once}, {@code skip} or {@code run-each}) with {@code
   * missedLimit}, {@code overlap} ({@code allow} or {@code skip}), {@code lateness}, {@code
   * paused}, and where there are any {@code nextDue}, {@code lastSlot} (instants) and {@code
   * lastJobId}.
   *
   * @param name the queue
   * @param schedule the schedule's name
   * @return the schedule, or 404
   */
  @GET
  @Path("{q}/schedules/{s}")
  public String schedule(@PathParam("q") String name, @PathParam("s") String schedule) {
    admin();
    return scheduleJson(find(name), schedule).toString();
  }

  /**
   * Pauses a schedule: it fires no slot until resumed (the slots in between are skipped).
   *
   * @param name the queue
   * @param schedule the schedule's name
   * @return 204 (also if it was paused already), or 404
   */
  @POST
  @Path("{q}/schedules/{s}/pause")
  public Response pauseSchedule(@PathParam("q") String name, @PathParam("s") String schedule) {
    admin();
    Queue<?> q = find(name).queue();
    if (!q.schedules().pause(schedule) && q.schedules().get(schedule).isEmpty()) {
      throw noSchedule(name, schedule);
    }
    return Response.noContent().build();
  }

  /**
   * Resumes a paused schedule at its first slot after now.
   *
   * @param name the queue
   * @param schedule the schedule's name
   * @return 204 (also if it was running), or 404
   */
  @POST
  @Path("{q}/schedules/{s}/resume")
  public Response resumeSchedule(@PathParam("q") String name, @PathParam("s") String schedule) {
    admin();
    Queue<?> q = find(name).queue();
    if (!q.schedules().resume(schedule) && q.schedules().get(schedule).isEmpty()) {
      throw noSchedule(name, schedule);
    }
    return Response.noContent().build();
  }

  /**
   * Pushes the schedule's job now, with now as its slot; the schedule's own slots do not move.
   *
   * @param name the queue
   * @param schedule the schedule's name
   * @return 201 with the job (as {@link #job(String, String)} answers, with {@code schedule} and
   *     {@code slot}), or 404
   */
  @POST
  @Path("{q}/schedules/{s}/trigger")
  public Response triggerSchedule(@PathParam("q") String name, @PathParam("s") String schedule) {
    admin();
    return Response.status(201).entity(trigger(find(name), schedule).toString()).build();
  }

  /**
   * Deletes a schedule; the jobs it pushed stay. A schedule that the application declares is
   * defined again at its next start (turn it off with {@code
   * kvmq.queue.NAME.schedule.SCHEDULE.enabled=false}).
   *
   * @param name the queue
   * @param schedule the schedule's name
   * @return 204, or 404
   */
  @DELETE
  @Path("{q}/schedules/{s}")
  public Response deleteSchedule(@PathParam("q") String name, @PathParam("s") String schedule) {
    admin();
    if (!find(name).queue().schedules().delete(schedule)) {
      throw noSchedule(name, schedule);
    }
    return Response.noContent().build();
  }

  private static WebApplicationException noSchedule(String queue, String schedule) {
    return Problem.notFound("no schedule \"" + schedule + "\" in queue \"" + queue + "\"");
  }

  private static <S> JsonObject trigger(AdminQueue<S> q, String schedule) {
    Job<S> job =
        q.queue()
            .schedules()
            .trigger(schedule)
            .orElseThrow(() -> noSchedule(q.queue().name(), schedule));
    return job(q, job, -1);
  }

  private static <S> JsonArrayBuilder schedulesJson(AdminQueue<S> q) {
    JsonArrayBuilder a = Json.createArrayBuilder();
    q.queue().schedules().list().forEach(e -> a.add(scheduleJson(q, e)));
    return a;
  }

  private static <S> JsonObject scheduleJson(AdminQueue<S> q, String schedule) {
    Optional<ScheduleEntry<S>> e;
    try {
      e = q.queue().schedules().get(schedule);
    } catch (IllegalStateException unreadable) {
      // its state doesn't fit this version's type (or the store closed): the message names it
      // and says what to do (define it again, or delete it, which works by name)
      throw Problem.conflict(unreadable.getMessage());
    }
    return scheduleJson(q, e.orElseThrow(() -> noSchedule(q.queue().name(), schedule)));
  }

  static <S> JsonObject scheduleJson(AdminQueue<S> q, ScheduleEntry<S> e) {
    Schedule<S> s = e.schedule();
    JsonObjectBuilder b = Json.createObjectBuilder().add("name", s.name());
    if (s.spec() instanceof ScheduleSpec.Cron c) {
      b.add("cron", c.expression()).add("zone", c.zone().getId());
    } else if (s.spec() instanceof ScheduleSpec.FixedRate f) {
      b.add("every", f.every().toString()).add("anchor", f.anchor().toString());
    }
    b.add("state", q.toJson(s.state()))
        .add("missed", s.missed().kind().name().toLowerCase(Locale.ROOT).replace('_', '-'))
        .add("missedLimit", s.missed().limit())
        .add("overlap", s.overlap().name().toLowerCase(Locale.ROOT))
        .add("lateness", s.lateness().toString())
        .add("paused", e.paused());
    e.nextDue().ifPresent(t -> b.add("nextDue", t.toString()));
    e.lastSlot().ifPresent(t -> b.add("lastSlot", t.toString()));
    e.lastJobId().ifPresent(id -> b.add("lastJobId", id));
    return b.build();
  }

  private Subscription pollEvery(Duration interval, Runnable request) {
    var f =
        runtime
            .executor()
            .scheduleAtFixedRate(
                request,
                interval.toMillis(),
                interval.toMillis(),
                java.util.concurrent.TimeUnit.MILLISECONDS);
    return () -> f.cancel(false);
  }

  // ---- helpers

  private void admin() {
    KvmqRequestFilter.requireKvmqApplication(servletRequest);
    if (!runtime.config().restEnabled()) {
      throw new WebApplicationException(
          Problem.response(
              404, "Not Found", "the kvmq admin API is off: kvmq.rest.enabled=false", null));
    }
    if (security == null || security.getUserPrincipal() == null) {
      throw new WebApplicationException(
          Response.fromResponse(
                  Problem.response(
                      401, "Unauthorized", "sign in with a user that has the role " + ROLE, null))
              .header("WWW-Authenticate", "Basic realm=\"kvmq\"")
              .build());
    }
    if (!security.isUserInRole(ROLE)) {
      throw new WebApplicationException(
          Problem.response(403, "Forbidden", "the role " + ROLE + " is required", null));
    }
  }

  /** Runs a call of {@link ControlRest}, answering its refusal with a problem. */
  private static <T> T refusing(java.util.function.Supplier<T> call) {
    try {
      return call.get();
    } catch (ControlRest.Refused e) {
      throw e.problem();
    }
  }

  private AdminQueue<?> find(String name) {
    return runtime
        .adminQueue(name)
        .orElseThrow(() -> Problem.notFound("no queue named \"" + name + "\""));
  }

  private static <S> JsonObject jobJson(AdminQueue<S> q, String id) {
    Job<S> job =
        q.queue()
            .job(id)
            .orElseThrow(() -> Problem.notFound("no job " + id + " in queue " + q.queue().name()));
    return job(q, job, -1);
  }

  private static <S> JsonArrayBuilder jobsJson(
      AdminQueue<S> q, JobStatus filter, int skip, int max) {
    JsonArrayBuilder a = Json.createArrayBuilder();
    q.queue().jobs(filter, skip, max).forEach(e -> a.add(job(q, e.job(), e.place())));
    return a;
  }

  private static <S> JsonArrayBuilder deadJson(AdminQueue<S> q, int skip, int max) {
    JsonArrayBuilder a = Json.createArrayBuilder();
    q.queue().deadLetters(skip, max).forEach(j -> a.add(job(q, j, -1)));
    return a;
  }

  private static JobStatus parseStatus(String s) {
    try {
      JobStatus st = JobStatus.valueOf(s.toUpperCase(Locale.ROOT));
      if (!ControlRest.CANCELLABLE.contains(st)) {
        throw new IllegalArgumentException();
      }
      return st;
    } catch (IllegalArgumentException e) {
      throw Problem.badRequest(
          "status",
          "status is waiting, delayed, processing or held (dead letters: GET .../dead; dead,"
              + " completed and cancelled jobs: GET .../list?status=)");
    }
  }

  /**
   * A query parameter that is a whole number, or null when absent. Read here, not by JAX-RS: a
   * value JAX-RS can't convert is a 404 with no word of why (the spec's rule for query parameters),
   * where bad input is a 400 naming the field.
   */
  static Integer whole(String v, String field) {
    if (v == null) {
      return null;
    }
    try {
      return Integer.valueOf(v.strip());
    } catch (NumberFormatException e) {
      throw Problem.badRequest(
          field,
          field
              + " must be a whole number up to "
              + Integer.MAX_VALUE
              + ": \""
              + cut(v, 40)
              + "\"");
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

  private static JsonObject summary(Queue<?> q, boolean opened) {
    QueueCounts c = q.counts();
    return Json.createObjectBuilder()
        .add("name", q.name())
        .add("opened", opened)
        .add("paused", q.isPaused())
        .add("waiting", c.waiting())
        .add("delayed", c.delayed())
        .add("processing", c.processing())
        .add("dead", c.dead())
        .add("held", c.held())
        .build();
  }

  /**
   * A job as JSON: {@code {id, state, status, place?, undecodedState? (undecoded), ...options
   * (PushBody.addOptions), lastError?, ...control and history (ControlRest.addFields)}}.
   */
  static <S> JsonObject job(AdminQueue<S> q, Job<S> j, int place) {
    JsonObjectBuilder b =
        Json.createObjectBuilder()
            .add("id", j.id())
            .add("state", q.toJson(j.state()))
            .add("status", j.status().name().toLowerCase(Locale.ROOT));
    if (place >= 0) {
      b.add("place", place);
    }
    j.undecodedState().ifPresent(bytes -> b.add("undecodedState", undecoded(q, bytes)));
    PushBody.addOptions(j, b);
    j.schedule().ifPresent(name -> b.add("schedule", name));
    j.slot().ifPresent(t -> b.add("slot", t.toString()));
    j.lastError()
        .ifPresent(
            e ->
                b.add(
                    "lastError",
                    Json.createObjectBuilder()
                        .add("type", e.type())
                        .add("message", e.message())
                        .add("failedAt", e.failedAt().toString())));
    ControlRest.addFields(j, b);
    return b.build();
  }

  /**
   * A stored state the queue's codec can't decode (its {@code state} is then null): {@code {text}}
   * when the bytes are UTF-8 (a JSON-B codec's are JSON text), else {@code {base64}}, and {@code
   * error}, what the codec says of them (cut to 1,000 characters), so that an operator can read a
   * job that an application's new version no longer understands.
   */
  static <S> JsonObject undecoded(AdminQueue<S> q, byte[] bytes) {
    JsonObjectBuilder u = Json.createObjectBuilder();
    Utf8.decode(bytes)
        .ifPresentOrElse(
            text -> u.add("text", text),
            () -> u.add("base64", java.util.Base64.getEncoder().encodeToString(bytes)));
    try {
      q.queue().codec().decode(bytes.clone());
    } catch (RuntimeException e) {
      String why = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
      u.add("error", cut(why, 1_000));
    }
    return u.build();
  }

  /** {@code text} cut to {@code max} characters, with an ellipsis when cut. */
  private static String cut(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max) + "...";
  }

  /**
   * Reads a request body as one JSON object.
   *
   * @throws PushBody.Refused for a body over {@link #MAX_BODY_BYTES}, not UTF-8, not JSON, or not
   *     an object
   */
  static JsonObject readObject(InputStream body) {
    byte[] bytes;
    try {
      bytes = body.readNBytes(MAX_BODY_BYTES + 1);
    } catch (IOException e) {
      throw PushBody.refused(null, "could not read the request body");
    }
    if (bytes.length > MAX_BODY_BYTES) {
      throw PushBody.refused(null, "the body is over " + MAX_BODY_BYTES + " bytes");
    }
    String text =
        Utf8.decode(bytes).orElseThrow(() -> PushBody.refused(null, "the body is not UTF-8"));
    try (JsonParser p = Json.createParser(new StringReader(text))) {
      if (!p.hasNext() || p.next() != JsonParser.Event.START_OBJECT) {
        throw PushBody.refused(null, "the body must be a JSON object");
      }
      // field by field, so that a field given twice is refused rather than the last one winning
      JsonObjectBuilder o = Json.createObjectBuilder();
      Set<String> names = new HashSet<>();
      for (JsonParser.Event e = p.next(); e != JsonParser.Event.END_OBJECT; e = p.next()) {
        String name = p.getString();
        if (!names.add(name)) {
          throw PushBody.refused(name, "the body gives \"" + name + "\" twice");
        }
        p.next();
        o.add(name, p.getValue());
      }
      if (p.hasNext()) {
        throw PushBody.refused(null, "the body has more after its JSON object: send one object");
      }
      return o.build();
    } catch (PushBody.Refused e) {
      throw e;
    } catch (JsonException e) {
      throw PushBody.refused(null, "the body is not valid JSON: " + e.getMessage());
    } catch (
        RuntimeException e) { // Parsson: "Input is too deeply nested" is a plain RuntimeException
      throw PushBody.refused(
          null, "the body is not JSON that kvmq reads: nested too deeply, or a value too large");
    }
  }
}
