package dev.kvmq.demo;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.authentication.mechanism.http.BasicAuthenticationMechanismDefinition;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;

/**
 * The demo's one user: {@code admin}, in the group (and so the role) {@code kvmq-admin},
 * with the password from the environment variable {@code KVMQ_ADMIN_PASSWORD} (run-demo.sh
 * sets it, to a random one if you did not). HTTP Basic, through Jakarta Security: no server
 * realm to set up. Without a password set, nobody can sign in.
 */
@ApplicationScoped
@BasicAuthenticationMechanismDefinition(realmName = "kvmq demo")
public class DemoIdentityStore implements IdentityStore {

    /** The only user. */
    static final String USER = "admin";

    /** The group the user is in; glassfish-web.xml maps it to the role of the same name. */
    static final String GROUP = "kvmq-admin";

    /**
     * Checks a user name and password.
     *
     * @param credential what the client sent
     * @return valid for {@code admin} with the right password, else invalid
     */
    public CredentialValidationResult validate(UsernamePasswordCredential credential) {
        String expected = System.getenv("KVMQ_ADMIN_PASSWORD");
        if (expected == null || expected.isEmpty() || !USER.equals(credential.getCaller())) {
            return CredentialValidationResult.INVALID_RESULT;
        }
        boolean same = MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
                credential.getPasswordAsString().getBytes(StandardCharsets.UTF_8));
        return same ? new CredentialValidationResult(USER, Set.of(GROUP)) : CredentialValidationResult.INVALID_RESULT;
    }
}
