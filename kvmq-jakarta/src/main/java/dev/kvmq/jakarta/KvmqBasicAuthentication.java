package dev.kvmq.jakarta;

import jakarta.inject.Inject;
import jakarta.security.enterprise.AuthenticationStatus;
import jakarta.security.enterprise.authentication.mechanism.http.HttpAuthenticationMechanism;
import jakarta.security.enterprise.authentication.mechanism.http.HttpMessageContext;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStoreHandler;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Base64;
import java.util.Objects;

/**
 * HTTP Basic authentication (RFC 7617) for Jakarta Security that answers a malformed {@code
 * Authorization} header with 401, as it answers a wrong password, and logs nothing. Use it instead
 * of {@code @BasicAuthenticationMechanismDefinition}: Payara's built-in mechanism (Soteria) answers
 * a header such as {@code Authorization: Basic %%%} with 500 and logs a warning with a stack trace
 * for every such request.
 *
 * <p>It is not a CDI bean by itself. The application turns it on for its whole WAR, as its one
 * authentication mechanism, with a bean of its own:
 *
 * <pre>{@code
 * @ApplicationScoped
 * public class AdminAuthentication extends KvmqBasicAuthentication {
 *   public AdminAuthentication() {
 *     super("my application");
 *   }
 * }
 * }</pre>
 *
 * <p>Credentials are checked by the application's identity stores (its {@code IdentityStore} beans,
 * through the container's {@link IdentityStoreHandler}). It behaves like the built-in mechanism
 * otherwise: valid credentials sign the caller in on any path; on a protected path, missing,
 * malformed or invalid credentials get 401 with {@code WWW-Authenticate: Basic realm="..."}; on an
 * unprotected path they change nothing.
 */
public class KvmqBasicAuthentication implements HttpAuthenticationMechanism {

  private final String realm;

  @Inject private IdentityStoreHandler identityStores;

  /** For CDI's proxies only: a subclass calls {@link #KvmqBasicAuthentication(String)}. */
  protected KvmqBasicAuthentication() {
    this("kvmq");
  }

  /**
   * A mechanism that names its realm in its challenges.
   *
   * @param realm the realm, without double quotes or line breaks
   * @throws IllegalArgumentException if the realm has a double quote, a backslash or a control
   *     character
   * @throws NullPointerException if the realm is null
   */
  protected KvmqBasicAuthentication(String realm) {
    Objects.requireNonNull(realm, "realm");
    if (realm.chars().anyMatch(c -> c == '"' || c == '\\' || c < 0x20 || c == 0x7f)) {
      throw new IllegalArgumentException(
          "a realm may not hold a double quote, a backslash or a control character");
    }
    this.realm = realm;
  }

  /**
   * Authenticates one request.
   *
   * @param request the request
   * @param response the response (gets {@code WWW-Authenticate} with a 401)
   * @param context the container's message context
   * @return the outcome for the container
   */
  @Override
  public AuthenticationStatus validateRequest(
      HttpServletRequest request, HttpServletResponse response, HttpMessageContext context) {
    String header = request.getHeader("Authorization");
    if (header != null && header.regionMatches(true, 0, "Basic", 0, 5)) {
      UsernamePasswordCredential credential = decode(header.substring(5));
      if (credential != null) {
        CredentialValidationResult result = identityStores.validate(credential);
        if (result.getStatus() == CredentialValidationResult.Status.VALID) {
          return context.notifyContainerAboutLogin(result);
        }
      }
    }
    if (!context.isProtected()) {
      return context.doNothing();
    }
    response.setHeader("WWW-Authenticate", "Basic realm=\"" + realm + "\"");
    return context.responseUnauthorized();
  }

  /**
   * The user name and password of a Basic credential.
   *
   * @param value what follows {@code Basic} in the header
   * @return the credential, or null if the value is not base64 of UTF-8 {@code user:password}
   */
  static UsernamePasswordCredential decode(String value) {
    if (value.isEmpty() || value.charAt(0) != ' ') {
      return null;
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(value.trim());
    } catch (IllegalArgumentException e) {
      return null;
    }
    String text = Utf8.decode(bytes).orElse(null);
    if (text == null) {
      return null;
    }
    int colon = text.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    return new UsernamePasswordCredential(text.substring(0, colon), text.substring(colon + 1));
  }
}
