package dev.kvmq.jakarta;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import java.net.URI;
import java.util.Locale;
import java.util.Set;

/**
 * The admin API's request filter, registered on {@link KvmqRestApplication} only (never discovered
 * by scanning: it has no {@code @Provider}).
 *
 * <p>It marks each request as one of kvmq's application ({@link #MARK}), which the resources check:
 * when an application of the WAR that relies on scanning picks up kvmq's resources, they answer 404
 * there, and only kvmq's application at {@code /kvmq} serves them, behind its security constraint
 * and this filter.
 *
 * <p>It refuses cross-origin state changes (every method but GET, HEAD and OPTIONS) with 403: when
 * the browser says the request comes from another site ({@code Sec-Fetch-Site} other than {@code
 * same-origin} or {@code none}), or, from a browser that does not send {@code Sec-Fetch-Site}, when
 * {@code Origin} names another host than the request's {@code Host}. A request with neither header
 * is not from a browser's page (curl, scripts) and passes. This is the rule of Go's {@code
 * net/http.CrossOriginProtection}: a page of another site that holds the admin's credentials in the
 * browser cannot pause, resume, retry, push or delete, whatever content type it uses.
 */
public final class KvmqRequestFilter implements ContainerRequestFilter {

  /** The request property (a servlet request attribute) that marks kvmq's application. */
  static final String MARK = "dev.kvmq.jakarta.KvmqRestApplication";

  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

  /** Made by the JAX-RS runtime, for {@link KvmqRestApplication} only. */
  public KvmqRequestFilter() {}

  /**
   * Marks the request as kvmq's and refuses it with 403 if it is a cross-origin state change.
   *
   * @param request the request
   */
  @Override
  public void filter(ContainerRequestContext request) {
    request.setProperty(MARK, Boolean.TRUE);
    if (SAFE.contains(request.getMethod())) {
      return;
    }
    String refusal =
        crossOrigin(
            request.getHeaderString("Sec-Fetch-Site"),
            request.getHeaderString("Origin"),
            host(request));
    if (refusal != null) {
      request.abortWith(Problem.response(403, "Forbidden", refusal, null));
    }
  }

  /**
   * Why a state-changing request is refused as cross-origin, or null.
   *
   * @param fetchSite the {@code Sec-Fetch-Site} header, or null
   * @param origin the {@code Origin} header, or null
   * @param host the request's own host and port, as in {@code Host}
   * @return the refusal's detail, or null if the request may go on
   */
  static String crossOrigin(String fetchSite, String origin, String host) {
    if (fetchSite != null) {
      String site = fetchSite.trim().toLowerCase(Locale.ROOT);
      if (site.equals("same-origin") || site.equals("none")) {
        return null;
      }
      return "cross-origin request refused: the browser sent it from another site (Sec-Fetch-Site: "
          + site
          + "); kvmq's admin API changes state only for requests of its own origin";
    }
    if (origin == null) {
      return null;
    }
    String authority = authority(origin);
    if (authority != null && host != null && authority.equalsIgnoreCase(host.trim())) {
      return null;
    }
    return "cross-origin request refused: Origin "
        + origin
        + " is not this server ("
        + host
        + "); kvmq's admin API changes state only for requests of its own origin";
  }

  /**
   * Refuses a request that did not pass through this filter, that is one served by another JAX-RS
   * application of the WAR that picked up kvmq's resources by scanning.
   *
   * @param request the servlet request, whose attributes hold the request's properties
   * @throws NotFoundException outside kvmq's application (a plain 404, which that application's own
   *     mappers answer as they like)
   */
  static void requireKvmqApplication(HttpServletRequest request) {
    if (request == null || request.getAttribute(MARK) == null) {
      throw new NotFoundException();
    }
  }

  private static String authority(String origin) {
    try {
      URI uri = new URI(origin.trim());
      return uri.getScheme() == null ? null : uri.getRawAuthority();
    } catch (java.net.URISyntaxException e) {
      return null;
    }
  }

  private static String host(ContainerRequestContext request) {
    String host = request.getHeaderString("Host");
    return host != null ? host : request.getUriInfo().getRequestUri().getRawAuthority();
  }
}
