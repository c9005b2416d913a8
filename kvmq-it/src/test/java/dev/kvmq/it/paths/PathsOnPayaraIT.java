package dev.kvmq.it.paths;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.root.PathChecks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * kvmq takes no path it was not given, on Payara Micro: a WAR with kvmq-jakarta, {@code
 * kvmq.rest.enabled=true} and no mapping of kvmq's admin API, whose own JAX-RS application is
 * mapped at {@code /*} in {@code web.xml}, serves its own resource at {@code /kvmq/mine}; kvmq's
 * paths there are the application's 404; kvmq warns once that its API is mapped nowhere. Until
 * 2026-12-06 {@code KvmqRestApplication} carried {@code @ApplicationPath("kvmq")} and answered
 * {@code /kvmq/mine} with its own 404. The checks are {@link PathChecks}', the same on WildFly
 * ({@code PathsOnWildFlyIT}). Payara Micro runs as a process, so that the test reads its log.
 */
@Tag("payara")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PathsOnPayaraIT {

  private ServerProcess payara;
  private PathChecks checks;

  @BeforeAll
  void start() throws Exception {
    Path work = Payaras.work("paths");
    Path war = work.resolve("root.war");
    KvmqWars.withKvmq(KvmqWars.withRootApp(ShrinkWrap.create(WebArchive.class, "root.war")))
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    int port = ServerProcess.freePort();
    payara =
        Payaras.start(
            work,
            war,
            port,
            Map.of("kvmq.data-dir", work.resolve("data").toString()),
            "payara.log");
    checks = new PathChecks("http://127.0.0.1:" + port + "/root", payara::log);
    checks.awaitUp(Duration.ofMinutes(2), payara::assertAlive);
  }

  @AfterAll
  void stop() {
    if (payara != null) {
      payara.close();
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
