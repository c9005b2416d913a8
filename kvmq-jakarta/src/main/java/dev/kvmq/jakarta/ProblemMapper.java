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
    LOG.log(System.Logger.Level.ERROR, "kvmq admin API: unexpected error", e);
    return Problem.response(500, "Internal Server Error", "see the server log", null);
  }
}
