package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.root.PathChecks;
import java.time.Duration;
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
 * kvmq takes no path it was not given, on WildFly: the WAR and checks of kvmq-it's {@code
 * PathsOnPayaraIT} ({@link PathChecks}). The application's JAX-RS at {@code /*} serves {@code
 * /kvmq/mine}; kvmq's admin API, asked for by {@code kvmq.rest.enabled=true} but mapped nowhere, is
 * not served, and kvmq warns once. The server is a process the test starts, so that it reads its
 * log.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PathsOnWildFlyIT {

  private WildFlyServer server;
  private PathChecks checks;

  @BeforeAll
  void start() throws Exception {
    WebArchive war =
        KvmqWars.withKvmq(KvmqWars.withRootApp(ShrinkWrap.create(WebArchive.class, Wars.NAME)));
    server = WildFlyServer.start("paths", war, UnaryOperator.identity(), List.of(), Map.of());
    checks = new PathChecks(server.url(), server::logText);
    checks.awaitUp(Duration.ofMinutes(1), () -> {});
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void theApplicationOwnsKvmqsPathWhenItDidNotMapKvmq() {
    checks.theApplicationOwnsKvmqsPathWhenItDidNotMapKvmq();
  }

  @Test
  void theUnmappedApiIsWarnedOfOnce() {
    checks.theUnmappedApiIsWarnedOfOnce();
  }
}
