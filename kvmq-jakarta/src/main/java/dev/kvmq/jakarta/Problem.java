package dev.kvmq.jakarta;

import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;

/** RFC 9457 problem details as {@code application/problem+json}. */
final class Problem {

  static final String MEDIA_TYPE = "application/problem+json";

  private Problem() {}

  static Response response(int status, String title, String detail, String field) {
    return response(status, title, detail, field, java.util.List.of());
  }

  /** A problem response with, when {@code jobIds} is not empty, a {@code jobIds} array. */
  static Response response(
      int status, String title, String detail, String field, java.util.List<String> jobIds) {
    return Response.status(status)
        .type(MEDIA_TYPE)
        .entity(body(status, title, detail, field, jobIds))
        .build();
  }

  /** The problem's JSON: detail, field and jobIds only when given. */
  static String body(
      int status, String title, String detail, String field, java.util.List<String> jobIds) {
    JsonObjectBuilder b =
        Json.createObjectBuilder()
            .add("type", "about:blank")
            .add("title", title)
            .add("status", status);
    if (detail != null) {
      b.add("detail", detail);
    }
    if (field != null) {
      b.add("field", field);
    }
    if (!jobIds.isEmpty()) {
      jakarta.json.JsonArrayBuilder ids = Json.createArrayBuilder();
      jobIds.forEach(ids::add);
      b.add("jobIds", ids);
    }
    return b.build().toString();
  }

  static WebApplicationException badRequest(String field, String detail) {
    return new WebApplicationException(response(400, "Bad Request", detail, field));
  }

  static WebApplicationException notFound(String detail) {
    return new WebApplicationException(response(404, "Not Found", detail, null));
  }

  static WebApplicationException conflict(String detail) {
    return new WebApplicationException(response(409, "Conflict", detail, null));
  }
}
