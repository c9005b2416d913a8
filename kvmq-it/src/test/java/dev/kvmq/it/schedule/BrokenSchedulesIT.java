package dev.kvmq.it.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A WAR whose schedules are wrong fails to deploy on Payara Micro, the log names every problem with
 * its code, the handler and the schedule, from one deployment attempt, and nothing is written: the
 * data directory is never made.
 */
@Tag("payara")
class BrokenSchedulesIT {

  @Test
  void badSchedulesFailTheDeploymentAndWriteNothing() throws Exception {
    Path work = Payaras.work("broken-schedules");
    Path war = work.resolve("broken-schedules.war");
    Wars.withKvmq(Wars.testWar("broken-schedules.war"))
        .addClasses(Tick.class, BadScheduleHandler.class)
        .addAsResource(
            new StringAsset("kvmq.queue.nobody.schedule.orphan.every=PT1S\n"),
            "META-INF/microprofile-config.properties")
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    Path data = work.resolve("data");
    try (ServerProcess payara =
        Payaras.start(
            work,
            war,
            ServerProcess.freePort(),
            Map.of("kvmq.data-dir", data.toString()),
            "payara.log")) {
      String log = payara.log();
      assertThat(log).contains("Exception while loading the app");
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
      assertThat(problems).as("every problem, from one deployment").hasSize(3);
      assertThat(problems.get(0))
          .startsWith("KVMQ-010: schedule \"bad-cron\" of queue \"bad-schedules\"")
          .contains(BadScheduleHandler.class.getName(), "\"61 * * * *\" is not a cron expression");
      assertThat(problems.get(1))
          .startsWith("KVMQ-010: schedule \"bad-zone\" of queue \"bad-schedules\"")
          .contains(BadScheduleHandler.class.getName(), "\"Mars/Olympus\"", "time zone");
      assertThat(problems.get(2))
          .startsWith("KVMQ-013: configuration key kvmq.queue.nobody.schedule.orphan.every")
          .contains("\"nobody\"", "no @QueueHandler");
      assertThat(Files.exists(data)).as("nothing written: no data directory").isFalse();
    }
  }
}
