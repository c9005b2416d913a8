package dev.kvmq.jakarta;

import dev.kvmq.Attempt;
import dev.kvmq.Job;
import dev.kvmq.JobError;
import dev.kvmq.JobFilter;
import dev.kvmq.JobPage;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.WebApplicationException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What the admin REST API does for job control and history (docs/jakarta.md, "Admin REST API"):
 * cancel one job or many by status, list the jobs of a status a page at a time with a cursor, count
 * them, and the job's control and history fields in its JSON. No JAX-RS here: a refusal is a {@link
 * Refused}, which {@link QueuesResource} answers with a problem, so this is tested without a
 * server.
 */
final class ControlRest {

  /** The most jobs a page of {@link #page} holds, as {@link Queue#list} allows. */
  static final int MAX_PAGE = 1000;

  /** The page size when the request gives none. */
  static final int DEFAULT_PAGE = 100;

  /** The statuses a job can be cancelled in. */
  static final Set<JobStatus> CANCELLABLE =
      EnumSet.of(JobStatus.WAITING, JobStatus.DELAYED, JobStatus.PROCESSING, JobStatus.HELD);

  private ControlRest() {}

  /** A refused request: its HTTP status, the field at fault (or null) and the detail. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The HTTP status: 400, 404 or 409. */
    final int status;

    /** The field at fault, or null. */
    final String field;

    Refused(int status, String field, String detail) {
      super(detail, null, false, false);
      this.status = status;
      this.field = field;
    }

    /** The problem answer. */
    WebApplicationException problem() {
      String title =
          switch (status) {
            case 404 -> "Not Found";
            case 409 -> "Conflict";
            default -> "Bad Request";
          };
      return new WebApplicationException(Problem.response(status, title, getMessage(), field));
    }
  }

  private static Refused badRequest(String field, String detail) {
    return new Refused(400, field, detail);
  }

  /**
   * Cancels one job.
   *
   * @throws Refused 404 if there is no such job, 409 if it has ended already
   */
  static void cancel(Queue<?> q, String id) {
    if (q.cancel(id)) {
      return;
    }
    Job<?> job =
        q.job(id)
            .orElseThrow(() -> new Refused(404, null, "no job " + id + " in queue " + q.name()));
    throw new Refused(
        409,
        null,
        "job "
            + id
            + " of queue "
            + q.name()
            + " is "
            + word(job.status())
            + ": it has ended, there is nothing to cancel");
  }

  /**
   * Cancels every job of the statuses given, in the kernel's bounded batches.
   *
   * @param statuses a comma-separated list of waiting, delayed, processing and held
   * @param group only the jobs of this group, or null
   * @param unique only the jobs whose unique key starts with this, or null
   * @return {@code {"cancelled": n}}
   * @throws Refused 400 naming {@code status}, {@code group} or {@code unique} for a bad value
   */
  static JsonObject cancelAll(Queue<?> q, String statuses, String group, String unique) {
    JobFilter filter = narrow(filter(statuses, CANCELLABLE, "cancelled"), group, unique);
    return Json.createObjectBuilder().add("cancelled", q.cancelAll(filter)).build();
  }

  /**
   * Deletes every job of one status in bounded batches: held, dead, cancelled or completed jobs;
   * or, narrowed by a group or unique-key prefix, waiting ones (the waiting and delayed jobs that
   * match). {@code DELETE .../jobs?status=waiting} alone stays one atomic operation, elsewhere.
   *
   * @param group only the jobs of this group, or null
   * @param unique only the jobs whose unique key starts with this, or null
   * @return {@code {"deleted": n}}
   * @throws Refused 400 naming {@code status}, {@code group} or {@code unique} for a bad value
   */
  /**
   * Deletes every waiting and delayed job in one atomic operation ({@link Queue#deleteWaiting}).
   *
   * @return {@code {"deleted": n}}
   * @throws Refused 409 with the queue's reason, nothing deleted, if workers kept changing the
   *     queue under the operation (the reason says to pause the queue and try again) or the store
   *     closed under the request
   */
  static JsonObject deleteWaiting(Queue<?> q) {
    int n;
    try {
      n = q.deleteWaiting();
    } catch (IllegalStateException e) {
      throw new Refused(409, null, e.getMessage());
    }
    return Json.createObjectBuilder().add("deleted", n).build();
  }

  static JsonObject deleteAll(Queue<?> q, String status, String group, String unique) {
    JobFilter filter;
    if ("waiting".equals(status) && (group != null || unique != null)) {
      filter = narrow(JobFilter.status(JobStatus.WAITING, JobStatus.DELAYED), group, unique);
    } else {
      filter =
          narrow(
              filter(
                  status,
                  EnumSet.of(
                      JobStatus.HELD, JobStatus.DEAD, JobStatus.CANCELLED, JobStatus.COMPLETED),
                  "deleted in bulk (waiting: the waiting and delayed jobs, in one operation)"),
              group,
              unique);
    }
    return Json.createObjectBuilder().add("deleted", q.deleteAll(filter)).build();
  }

  /**
   * One page of the jobs of a status, narrowed by a group and a unique-key prefix when given (such
   * a page may hold fewer jobs than the limit, even none, and still have a {@code next}).
   *
   * @return {@code {status, jobs: [...], next?}}; {@code next} is absent on the last page
   * @throws Refused 400 naming {@code status}, {@code limit}, {@code cursor}, {@code group} or
   *     {@code unique}
   */
  static <S> JsonObject page(
      AdminQueue<S> q, String status, String cursor, Integer limit, String group, String unique) {
    JobStatus s = status(status);
    JobFilter filter = narrow(JobFilter.status(s), group, unique);
    int max = limit == null ? DEFAULT_PAGE : limit;
    if (max < 1 || max > MAX_PAGE) {
      throw badRequest("limit", "limit must be 1 to " + MAX_PAGE);
    }
    if (cursor != null && cursor.isEmpty()) {
      cursor = null;
    }
    JobPage<S> page;
    try {
      page = q.queue().list(filter, cursor, max);
    } catch (IllegalArgumentException e) {
      // the limit is checked above: what is left is a cursor of another queue or status, or none
      throw badRequest(
          "cursor",
          "cursor is not one of this queue's for status "
              + word(s)
              + "; pass the \"next\" of the previous page of the same status");
    }
    JsonArrayBuilder jobs = Json.createArrayBuilder();
    page.jobs().forEach(j -> jobs.add(QueuesResource.job(q, j, -1)));
    JsonObjectBuilder b = Json.createObjectBuilder().add("status", word(s)).add("jobs", jobs);
    page.next().ifPresent(n -> b.add("next", n));
    return b.build();
  }

  /**
   * How many jobs a status has, narrowed by a group and a unique-key prefix when given (then
   * counted by reading every job of the status).
   *
   * @return {@code {status, count}}
   * @throws Refused 400 naming {@code status}, {@code group} or {@code unique}
   */
  static JsonObject count(Queue<?> q, String status, String group, String unique) {
    JobStatus s = status(status);
    JobFilter filter = narrow(JobFilter.status(s), group, unique);
    return Json.createObjectBuilder().add("status", word(s)).add("count", q.count(filter)).build();
  }

  /**
   * {@code filter} narrowed to a group and a unique-key prefix, each when given (an empty parameter
   * counts as absent).
   *
   * @throws Refused 400 naming {@code group} or {@code unique} for a value no job can have
   */
  static JobFilter narrow(JobFilter filter, String group, String unique) {
    JobFilter f = filter;
    if (group != null && !group.isEmpty()) {
      try {
        f = f.group(group);
      } catch (IllegalArgumentException e) {
        throw badRequest("group", "group: " + e.getMessage());
      }
    }
    if (unique != null && !unique.isEmpty()) {
      try {
        f = f.uniqueKeyPrefix(unique);
      } catch (IllegalArgumentException e) {
        throw badRequest("unique", "unique: " + e.getMessage());
      }
    }
    return f;
  }

  /**
   * Adds a job's control and history fields: {@code timeout?, interruptOnCancel, leaseExpiries,
   * cancelledAt?, finishedAt?, result?, attempts: [{number, startedAt, endedAt?, node, error?}]}.
   */
  static void addFields(Job<?> j, JsonObjectBuilder b) {
    j.timeout().ifPresent(t -> b.add("timeout", t.toString()));
    b.add("interruptOnCancel", j.interruptOnCancel()).add("leaseExpiries", j.leaseExpiries());
    j.cancelledAt().ifPresent(t -> b.add("cancelledAt", t.toString()));
    j.finishedAt().ifPresent(t -> b.add("finishedAt", t.toString()));
    j.result().ifPresent(r -> b.add("result", r));
    JsonArrayBuilder attempts = Json.createArrayBuilder();
    for (Attempt a : j.attempts()) {
      JsonObjectBuilder o =
          Json.createObjectBuilder()
              .add("number", a.number())
              .add("startedAt", a.startedAt().toString());
      a.endedAt().ifPresent(t -> o.add("endedAt", t.toString()));
      o.add("node", a.node());
      a.error().ifPresent(e -> o.add("error", error(e)));
      attempts.add(o);
    }
    b.add("attempts", attempts);
  }

  /** An error as JSON: {@code {type, message, failedAt}}. */
  static JsonObject error(JobError e) {
    return Json.createObjectBuilder()
        .add("type", e.type())
        .add("message", e.message())
        .add("failedAt", e.failedAt().toString())
        .build();
  }

  /** A status as the API writes it: its name in lower case. */
  static String word(JobStatus s) {
    return s.name().toLowerCase(Locale.ROOT);
  }

  private static JobStatus status(String status) {
    if (status == null || status.isBlank()) {
      throw badRequest("status", "status is required; it is one of " + words(all()));
    }
    try {
      return JobStatus.valueOf(status.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw badRequest("status", "status \"" + status + "\" is not one of " + words(all()));
    }
  }

  private static JobFilter filter(String statuses, Set<JobStatus> allowed, String what) {
    if (statuses == null || statuses.isBlank()) {
      throw badRequest(
          "status", "status is required; jobs that can be " + what + " are " + words(allowed));
    }
    List<JobStatus> found = new ArrayList<>();
    for (String part : statuses.split(",", -1)) {
      JobStatus s;
      try {
        s = JobStatus.valueOf(part.strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        s = null;
      }
      if (s == null || !allowed.contains(s)) {
        throw badRequest(
            "status",
            "status \"" + part.strip() + "\": jobs that can be " + what + " are " + words(allowed));
      }
      found.add(s);
    }
    return JobFilter.status(found.get(0), found.subList(1, found.size()).toArray(JobStatus[]::new));
  }

  private static Set<JobStatus> all() {
    return EnumSet.allOf(JobStatus.class);
  }

  private static String words(Set<JobStatus> statuses) {
    return String.join(", ", statuses.stream().map(ControlRest::word).toList());
  }
}
