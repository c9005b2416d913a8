package dev.kvmq.it.support.secure;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;
import java.util.Set;

/**
 * The secured test application's users: {@code admin} in the group {@code kvmq-admin} (mapped to
 * the role of that name) and {@code guest} in no group, with the passwords {@link #ADMIN_PASSWORD}
 * and {@link #GUEST_PASSWORD}.
 */
@ApplicationScoped
public class SecureUsers implements IdentityStore {

  /** Made by the container. */
  public SecureUsers() {}

  /** The admin's password. */
  public static final String ADMIN_PASSWORD = "admin-secret";

  /** The guest's password. */
  public static final String GUEST_PASSWORD = "guest-secret";

  /**
   * @param credential what the client sent
   * @return the user with its groups, or invalid
   */
  public CredentialValidationResult validate(UsernamePasswordCredential credential) {
    if (credential.compareTo("admin", ADMIN_PASSWORD)) {
      return new CredentialValidationResult("admin", Set.of("kvmq-admin"));
    }
    if (credential.compareTo("guest", GUEST_PASSWORD)) {
      return new CredentialValidationResult("guest", Set.of());
    }
    return CredentialValidationResult.INVALID_RESULT;
  }
}
