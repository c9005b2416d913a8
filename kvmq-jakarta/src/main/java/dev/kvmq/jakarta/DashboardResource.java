package dev.kvmq.jakarta;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.CacheControl;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The dashboard: one HTML page with its script and style sheet, served from this jar at {@code
 * /kvmq/dashboard} (assets at {@code /kvmq/dashboard/<file>}). The page talks to the admin REST API
 * ({@link QueuesResource}) from the browser and to nothing else. It is served where the API is (the
 * application maps {@link KvmqRestApplication}; {@code kvmq.rest.enabled} not false), to users with
 * the role {@code kvmq-admin} only, like the API.
 */
@Path("dashboard")
@RequestScoped
public class DashboardResource { // no @RolesAllowed: admin() checks, after the 404 (QueuesResource)

  private static final String DIR = "/dev/kvmq/jakarta/dashboard/";
  private static final String HTML = "text/html; charset=utf-8";

  /** The assets by name and media type: nothing else is served. */
  private static final Map<String, String> ASSETS =
      Map.of(
          "dashboard.js", "text/javascript; charset=utf-8",
          "dashboard.css", "text/css; charset=utf-8",
          "favicon.svg", "image/svg+xml");

  /**
   * No inline script or style, no other origin: the page and the API only. frame-ancestors 'none'
   * keeps the page out of other sites' frames (its buttons pause and delete).
   */
  static final String CSP =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
          + "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

  @Inject KvmqRuntime runtime;

  @Context SecurityContext security;

  /** Carries the mark of {@link KvmqRequestFilter}: only kvmq's application serves this. */
  @Context HttpServletRequest servletRequest;

  @Context UriInfo uri;

  /** Made by CDI. */
  public DashboardResource() {}

  /**
   * The dashboard page.
   *
   * @return the HTML page, with the absolute paths of its assets and of the API filled in
   * @throws WebApplicationException 404 when the admin API is off, 401 without a user, 403 for a
   *     user without the role {@code kvmq-admin}
   */
  @GET
  public Response page() {
    admin();
    String api = uri.getBaseUri().getRawPath();
    if (!api.endsWith("/")) {
      api = api + "/";
    }
    String html = read("index.html").replace("{{api}}", escapeAttribute(api));
    return secured(Response.ok(html, HTML)).build();
  }

  /**
   * One of the page's assets: {@code dashboard.js}, {@code dashboard.css} or {@code favicon.svg}
   * (the page's icon: the CSP allows images from this origin only, not {@code data:}).
   *
   * @param file the asset's name
   * @return the asset
   * @throws WebApplicationException 404 for any other name or when the admin API is off, 401
   *     without a user, 403 for a user without the role {@code kvmq-admin}
   */
  @GET
  @Path("{file}")
  public Response asset(@PathParam("file") String file) {
    admin();
    String type = ASSETS.get(file);
    if (type == null) {
      throw Problem.notFound("no dashboard file \"" + file + "\"; there are " + ASSETS.keySet());
    }
    return secured(Response.ok(read(file), type)).build();
  }

  private static Response.ResponseBuilder secured(Response.ResponseBuilder r) {
    CacheControl cache = new CacheControl();
    cache.setNoCache(true);
    cache.setPrivate(true);
    return r.cacheControl(cache)
        .header("Content-Security-Policy", CSP)
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer");
  }

  private static String read(String file) {
    try (InputStream in = DashboardResource.class.getResourceAsStream(DIR + file)) {
      if (in == null) {
        throw new IllegalStateException("kvmq-jakarta is missing its resource " + DIR + file);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + DIR + file, e);
    }
  }

  static String escapeAttribute(String s) {
    return s.replace("&", "&amp;")
        .replace("\"", "&quot;")
        .replace("<", "&lt;")
        .replace(">", "&gt;");
  }

  /** The same check as the API's: the dashboard is as protected as what it calls. */
  private void admin() {
    KvmqRequestFilter.requireKvmqApplication(servletRequest);
    if (!runtime.config().restEnabled()) {
      throw new WebApplicationException(
          Problem.response(
              404,
              "Not Found",
              "the kvmq admin API and dashboard are off: kvmq.rest.enabled=false",
              null));
    }
    if (security == null || security.getUserPrincipal() == null) {
      throw new WebApplicationException(
          Response.fromResponse(
                  Problem.response(
                      401,
                      "Unauthorized",
                      "sign in with a user that has the role " + QueuesResource.ROLE,
                      null))
              .header("WWW-Authenticate", "Basic realm=\"kvmq\"")
              .build());
    }
    if (!security.isUserInRole(QueuesResource.ROLE)) {
      throw new WebApplicationException(
          Problem.response(
              403, "Forbidden", "the role " + QueuesResource.ROLE + " is required", null));
    }
  }
}
