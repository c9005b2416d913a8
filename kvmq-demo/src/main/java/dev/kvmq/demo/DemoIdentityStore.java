package dev.kvmq.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * The demo's one user: {@code admin}, in the group (and so the role) {@code kvmq-admin}, with the
 * password from the environment variable {@code KVMQ_ADMIN_PASSWORD} (run-demo.sh sets it, to a
 * random one if you did not). HTTP Basic through Jakarta Security ({@link DemoAuthentication}): no
 * server realm to set up. Without a password set, nobody can sign in. A second user, {@code guest},
 * without the role, exists when {@code KVMQ_GUEST_PASSWORD} is set (for the dashboard's tests).
 */
@ApplicationScoped
public class DemoIdentityStore implements IdentityStore {

  /** Made by CDI. */
  public DemoIdentityStore() {}

  /** The admin user. */
  static final String USER = "admin";

  /**
   * A user without the role, to see the API and dashboard refuse it: exists only when the
   * environment variable {@code KVMQ_GUEST_PASSWORD} is set (run-demo.sh leaves it unset).
   */
  static final String GUEST = "guest";

  /** The group the user is in; glassfish-web.xml maps it to the role of the same name. */
  static final String GROUP = "kvmq-admin";

  /**
   * Checks a user name and password.
   *
   * @param credential what the client sent
   * @return valid for {@code admin} (role kvmq-admin) or {@code guest} (no role) with the right
   *     password, else invalid
   */
  public CredentialValidationResult validate(UsernamePasswordCredential credential) {
    if (USER.equals(credential.getCaller()) && matches("KVMQ_ADMIN_PASSWORD", credential)) {
      return new CredentialValidationResult(USER, Set.of(GROUP));
    }
    if (GUEST.equals(credential.getCaller()) && matches("KVMQ_GUEST_PASSWORD", credential)) {
      return new CredentialValidationResult(GUEST, Set.of());
    }
    return CredentialValidationResult.INVALID_RESULT;
  }

  private static boolean matches(String variable, UsernamePasswordCredential credential) {
    String expected = System.getenv(variable);
    return expected != null
        && !expected.isEmpty()
        && MessageDigest.isEqual(
            expected.getBytes(StandardCharsets.UTF_8),
            credential.getPasswordAsString().getBytes(StandardCharsets.UTF_8));
  }
}
