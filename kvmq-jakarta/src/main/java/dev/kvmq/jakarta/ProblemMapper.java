package dev.kvmq.jakarta;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/**
 * Every error of the admin API as problem JSON, and nothing more: no stack traces, no exception
 * messages of unexpected errors (those are logged). Registered on {@link KvmqRestApplication} only,
 * and not annotated {@code @Provider}, so that an application of the WAR that relies on scanning
 * keeps its own error answers.
 */
public class ProblemMapper implements ExceptionMapper<Throwable> {

  private static final System.Logger LOG = System.getLogger(ProblemMapper.class.getName());

  /** Made by the container. */
  public ProblemMapper() {}

  /**
   * Maps an exception to a problem response.
   *
   * @param e what a resource threw
   * @return the response
   */
  @Override
  public Response toResponse(Throwable e) {
    if (e instanceof WebApplicationException w) {
      Response r = w.getResponse();
      if (r.hasEntity()) {
        return r;
      }
      Response.StatusType s = r.getStatusInfo();
      Response problem = Problem.response(s.getStatusCode(), s.getReasonPhrase(), null, null);
      return Response.fromResponse(problem)
          .replaceAll(r.getHeaders())
          .type(Problem.MEDIA_TYPE)
          .build();
    }
    Unexpected a = unexpected(e);
    if (a.logged() == System.Logger.Level.ERROR) {
      LOG.log(a.logged(), "kvmq admin API: unexpected error", e);
    } else {
      LOG.log(a.logged(), () -> "kvmq admin API: " + a.detail(), e);
    }
    return Problem.response(a.status(), a.title(), a.detail(), null, a.jobIds());
  }

  /**
   * The answer to an exception that is not the API's own: its status, title, detail and log, and
   * for a push whose commit failed the ids of its jobs (else empty).
   */
  record Unexpected(
      int status,
      String title,
      String detail,
      System.Logger.Level logged,
      java.util.List<String> jobIds) {}

  /**
   * A store that fails (a database away) is 503 with the store's message, which says whether a
   * commit's outcome is unknown; for a push whose commit failed ({@link
   * dev.kvmq.PushFailedException}) the problem also lists its jobs' ids ({@code jobIds}), to look
   * up once the store works again. The store logs its outage once, so each request logs at DEBUG
   * only. Anything else is a 500 that says no more and is logged at ERROR.
   */
  static Unexpected unexpected(Throwable e) {
    if (e instanceof dev.kvmq.store.KvStoreException) {
      return new Unexpected(
          503,
          "Service Unavailable",
          "the store is failing: " + e.getMessage(),
          System.Logger.Level.DEBUG,
          e instanceof dev.kvmq.PushFailedException p ? p.jobIds() : java.util.List.of());
    }
    return new Unexpected(
        500,
        "Internal Server Error",
        "see the server log",
        System.Logger.Level.ERROR,
        java.util.List.of());
  }
}
