package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.OtlpReceiver;
import dev.kvmq.it.support.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * kvmq leaves nothing of an undeployed application behind: the WAR (the lifecycle test application
 * on kvmq's default store, EclipseStore) is undeployed and deployed again 4 times, each deployment
 * running a job. Then one thread runs a store's committer, the live deployment's; and the server's
 * heap, once collected, holds the live deployment's runtime and at most one more per HTTP worker
 * thread of the server (see below). A thread kvmq started and did not stop, a static registry, or a
 * listener left registered with the server would keep every undeployed deployment's class loader,
 * and with it its runtime and its store, alive: 5 runtimes. Run twice: as the server comes, and
 * with OpenTelemetry enabled in the server and the application.
 */
class RedeployLeakIT {

  private static final Pattern RUNTIMES =
      Pattern.compile(
          "(?m)^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+dev\\.kvmq\\.jakarta\\.KvmqRuntime(\\s+\\(.*\\))?\\s*$");

  private static final Pattern COMMITTER_THREADS =
      Pattern.compile("at dev\\.kvmq\\.store\\.eclipsestore\\.GroupCommitter\\.run\\(");

  private static final Pattern WORKER_THREADS = Pattern.compile("(?m)^\"default task-\\d+\"");

  private static final int UNDEPLOYS = 4;

  @Test
  void undeployedDeploymentsLeaveNoKvmqRuntimeBehind() throws Exception {
    try (WildFlyServer server =
        WildFlyServer.start("leak", Wars.app(), UnaryOperator.identity(), Map.of())) {
      redeployAndCountRuntimes(server);
    }
  }

  /**
   * The same with OpenTelemetry on, as docs/observability.md enables it on WildFly (the server's
   * subsystems, the application's {@code otel.sdk.disabled=false}), exporting to a receiver in this
   * JVM: kvmq's instruments and spans belong to a deployment's OpenTelemetry, which must not keep
   * the deployment once it is undeployed.
   */
  @Test
  void withOpenTelemetryUndeployedDeploymentsLeaveNoKvmqRuntimeBehind() throws Exception {
    try (OtlpReceiver receiver = new OtlpReceiver()) {
      WebArchive war =
          Wars.app()
              .addAsResource(
                  new StringAsset(
                      TelemetryOnWildFlyIT.config(receiver.endpoint())
                          .replace("kvmq.store=memory\n", "")),
                  "META-INF/microprofile-config.properties");
      try (WildFlyServer server =
          WildFlyServer.start(
              "leak-otel", war, UnaryOperator.identity(), TelemetryOnWildFlyIT.ENABLE, Map.of())) {
        redeployAndCountRuntimes(server);
        Wait.until(
            "kvmq's metrics exported",
            Duration.ofSeconds(30),
            () -> receiver.metrics().keySet().stream().anyMatch(n -> n.startsWith("kvmq")));
        assertThat(receiver.errors()).isEmpty();
      }
    }
  }

  private static void redeployAndCountRuntimes(WildFlyServer server) throws Exception {
    for (int i = 0; i <= UNDEPLOYS; i++) {
      String id = server.control("op=push&label=deployment-" + i + "&mode=quick");
      Wait.until(
          "deployment " + i + "'s job to complete",
          server::journal,
          j -> Fact.has(j, "completed", id));
      if (i < UNDEPLOYS) {
        server.undeploy(Duration.ofSeconds(60));
        server.redeploy();
      }
    }

    String threads = server.jcmd("Thread.print");
    assertThat(count(COMMITTER_THREADS, threads))
        .as("threads running a store's committer: the live deployment's alone")
        .isEqualTo(1);

    // The server's HTTP worker threads keep the last task they ran on their stacks, and with it
    // that request's deployment: in a heap dump of this test, one undeployed deployment's
    // runtime was reachable only from a frame of WildFly's "default task-2" (its task's
    // exchange, the servlet handler, Weld's deployment, KvmqExtension), none from kvmq's own
    // threads or any static. So each worker may keep one undeployed runtime; a leak of kvmq's
    // would keep all 4.
    int workers = count(WORKER_THREADS, threads);
    int allowed = 1 + workers;
    int left;
    try {
      left =
          Wait.until(
              "the undeployed deployments' kvmq runtimes to be collected (at most "
                  + allowed
                  + " left: the live one, and one per HTTP worker thread)",
              Duration.ofSeconds(90),
              () -> {
                assertThat(server.control("op=ping")).isNotEmpty();
                server.jcmd("GC.run");
                return runtimes(server);
              },
              n -> n <= allowed);
    } catch (AssertionError e) {
      Path dump = server.log().resolveSibling("leak.hprof");
      server.jcmd("GC.heap_dump", dump.toString());
      throw new AssertionError(e.getMessage() + "; heap dump: " + dump, e);
    }
    assertThat(workers).as("HTTP worker threads").isLessThan(UNDEPLOYS);
    assertThat(left).as("the live deployment's runtime at least").isPositive();
  }

  private static int count(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  /** The instances of {@code KvmqRuntime} in the server's heap, of every class loader. */
  private static int runtimes(WildFlyServer server) {
    String histogram = server.jcmd("GC.class_histogram");
    Matcher m = RUNTIMES.matcher(histogram);
    int n = 0;
    while (m.find()) {
      n += Integer.parseInt(m.group(1));
    }
    return n;
  }
}
