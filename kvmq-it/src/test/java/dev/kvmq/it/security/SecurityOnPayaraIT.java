package dev.kvmq.it.security;

import dev.kvmq.it.support.SecurityChecks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The security recipe for Payara Micro (docs/servers.md), tested: a WAR with kvmq's admin API
 * behind {@code web.xml}'s constraint on {@code /kvmq/*}, kvmq's Basic mechanism ({@code
 * KvmqBasicAuthentication}), an identity store of the application's and {@code glassfish-web.xml}'s
 * group-to-role mapping, and nothing configured in the server. The WAR also has the user's own
 * JAX-RS application at {@code /api}, which relies on scanning. Payara Micro runs as a process
 * ({@link SecurePayara}), so that the test reads its log.
 *
 * <p>The checks are {@link SecurityChecks}', the same on WildFly ({@code kvmq-it-wildfly}'s {@code
 * SecurityOnWildFlyIT}, whose WAR maps the API at {@code /ops/jobs}).
 */
@Tag("payara")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecurityOnPayaraIT {

  private SecurePayara payara;

  @BeforeAll
  void start() throws Exception {
    payara = SecurePayara.start("security");
  }

  @AfterAll
  void stop() {
    if (payara != null) {
      payara.close();
    }
  }

  @Test
  void theUsersApplicationKeepsItsErrorsAndPaths() {
    payara.checks().theUsersApplicationKeepsItsErrorsAndPaths();
  }

  @Test
  void theDashboardFollowsItsMapping() {
    payara.checks().theDashboardFollowsItsMapping();
  }

  @Test
  void credentialsDecide() {
    payara.checks().credentialsDecide();
  }

  @Test
  void aMalformedAuthorizationHeaderIs401AndLogsNothing() {
    payara.checks().aMalformedAuthorizationHeaderIs401AndLogsNothing();
  }

  @Test
  void crossOriginStateChangesAreRefused() {
    payara.checks().crossOriginStateChangesAreRefused();
  }
}
