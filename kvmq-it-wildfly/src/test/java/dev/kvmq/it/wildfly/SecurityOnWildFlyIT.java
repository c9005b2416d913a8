package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.SecurityChecks;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The security recipe for WildFly (docs/servers.md), tested: the WAR of kvmq-it's {@code
 * SecurityOnPayaraIT} (kvmq's Basic mechanism, the application's identity store, the user's own
 * JAX-RS application at {@code /api}) with kvmq's API mapped at {@link #API} instead of {@code
 * /kvmq} (the mapping and the constraint of {@code web.xml} both there), on WildFly's default
 * {@code standalone.xml} with one management command applied, {@link #RECIPE}: WildFly's Jakarta
 * Security mode for applications that bring their own identity stores. So the checks also show that
 * the API, its security and the dashboard's links follow the application's mapping. The server is a
 * process the test starts, so that it reads its log.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecurityOnWildFlyIT {

  /** The server's part of the recipe, as docs/servers.md prints it. */
  static final String RECIPE =
      "/subsystem=undertow/application-security-domain=other:write-attribute(name=integrated-jaspi,value=false)";

  /** Where this WAR maps kvmq's admin API: not the recipe's {@code /kvmq}. */
  static final String API = "/ops/jobs";

  private WildFlyServer server;
  private SecurityChecks checks;

  @BeforeAll
  void start() throws Exception {
    WebArchive war =
        KvmqWars.withKvmq(
            KvmqWars.withSecureApp(ShrinkWrap.create(WebArchive.class, Wars.NAME), API));
    server =
        WildFlyServer.start("security", war, UnaryOperator.identity(), List.of(RECIPE), Map.of());
    checks = new SecurityChecks(server.url(), API, server::logText);
    checks.awaitUp(java.time.Duration.ofMinutes(1), () -> {});
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void theUsersApplicationKeepsItsErrorsAndPaths() {
    checks.theUsersApplicationKeepsItsErrorsAndPaths();
  }

  @Test
  void theDashboardFollowsItsMapping() {
    checks.theDashboardFollowsItsMapping();
  }

  @Test
  void credentialsDecide() {
    checks.credentialsDecide();
  }

  @Test
  void aMalformedAuthorizationHeaderIs401AndLogsNothing() {
    checks.aMalformedAuthorizationHeaderIs401AndLogsNothing();
  }

  @Test
  void crossOriginStateChangesAreRefused() {
    checks.crossOriginStateChangesAreRefused();
  }
}
