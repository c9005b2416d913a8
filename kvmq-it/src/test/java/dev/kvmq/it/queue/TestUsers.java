package dev.kvmq.it.queue;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.authentication.mechanism.http.BasicAuthenticationMechanismDefinition;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;
import java.util.Set;

/**
 * Two users for the REST tests, over HTTP Basic: {@code admin} (group and role {@code kvmq-admin})
 * and {@code viewer} (no kvmq role); the password of both is {@link #PASSWORD}.
 */
@ApplicationScoped
@BasicAuthenticationMechanismDefinition(realmName = "kvmq-it")
public class TestUsers implements IdentityStore {

  /** Both users' password. */
  public static final String PASSWORD = "it-password";

  /**
   * @param credential what the client sent
   * @return the user's groups, or invalid
   */
  public CredentialValidationResult validate(UsernamePasswordCredential credential) {
    if (!credential.compareTo(credential.getCaller(), PASSWORD)) {
      return CredentialValidationResult.INVALID_RESULT;
    }
    return switch (credential.getCaller()) {
      case "admin" -> new CredentialValidationResult("admin", Set.of("kvmq-admin"));
      case "viewer" -> new CredentialValidationResult("viewer", Set.of("viewers"));
      default -> CredentialValidationResult.INVALID_RESULT;
    };
  }
}
