package dev.kvmq.it.broken;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A WAR with several broken handlers (two for one queue, impossible settings, a duration that is
 * not one) and a bad group limit and rate limit in its configuration fails to deploy on Payara
 * Micro, and the server's log names every problem, each with its code, from that one deployment
 * attempt.
 *
 * <p>Payara Micro is started as a process here rather than by Arquillian, whose adapter reports a
 * failed deployment without the server's reasons.
 */
@Tag("payara")
class BrokenHandlersIT {

  @Test
  void everyProblemIsReportedAtOnce() throws Exception {
    Path work = Payaras.work("broken");
    Path war = work.resolve("broken.war");
    Wars.withKvmq(Wars.testWar("broken.war"))
        .addClasses(
            FirstTwinHandler.class,
            SecondTwinHandler.class,
            BadSettingsHandler.class,
            BadDurationHandler.class)
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    try (ServerProcess payara =
        Payaras.start(
            work,
            war,
            ServerProcess.freePort(),
            Map.of(
                "kvmq.data-dir",
                work.resolve("data").toString(),
                "kvmq.queue.twins.group-limit",
                "-1",
                "kvmq.queue.twins.rate-limit",
                "fast"),
            "payara.log")) {
      String log = payara.log();
      assertThat(log).contains("Exception while loading the app");
      // The first failure record, up to the next log record: Weld's list of problems.
      int start = log.indexOf("CDI deployment failure");
      assertThat(start).as("a CDI deployment failure in %s", payara.logFile()).isNotNegative();
      int end = log.indexOf("\n[20", start);
      List<String> problems =
          log.substring(start, end < 0 ? log.length() : end)
              .lines()
              .filter(l -> l.contains("DeploymentException: KVMQ-"))
              .map(l -> l.substring(l.indexOf("KVMQ-")))
              .distinct()
              .sorted()
              .toList();
      assertThat(problems).as("every problem, from one deployment").hasSize(5);
      assertThat(problems.get(0))
          .startsWith("KVMQ-001")
          .contains(
              "\"twins\"", FirstTwinHandler.class.getName(), SecondTwinHandler.class.getName());
      assertThat(problems.get(1))
          .startsWith("KVMQ-004")
          .contains(BadDurationHandler.class.getName(), "\"soon\"");
      assertThat(problems.get(2))
          .startsWith("KVMQ-004")
          .contains(BadSettingsHandler.class.getName(), "concurrency");
      assertThat(problems.get(3)).startsWith("KVMQ-020: kvmq.queue.twins.group-limit is \"-1\"");
      assertThat(problems.get(4)).startsWith("KVMQ-021: kvmq.queue.twins.rate-limit is \"fast\"");
    }
  }
}
