package dev.kvmq.it.threads;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import java.nio.file.Path;
import java.util.Map;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A queue whose {@code @QueueHandler(threadFactory)} names something that is not a {@code
 * ManagedThreadFactory} (here the server's default managed executor) fails the application's start
 * on Payara Micro, and the log names the queue, the setting, the name and what it is. Runs on
 * Payara 6 (JDK 17) and, with {@code -Ppayara7}, on Payara 7.
 *
 * <p>Payara Micro is started as a process, as in {@code BrokenHandlersIT}: Arquillian reports a
 * failed deployment without the server's reasons.
 */
@Tag("payara")
class ThreadFactoryProblemIT {

  @Test
  void aNameBoundToSomethingElseFailsTheStartNamingQueueAndSetting() throws Exception {
    Path work = Payaras.work("thread-factory");
    Path war = work.resolve("misnamed.war");
    Wars.withKvmq(Wars.testWar("misnamed.war"))
        .addClasses(NotAFactoryHandler.class)
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);

    try (ServerProcess payara =
        Payaras.start(
            work,
            war,
            ServerProcess.freePort(),
            Map.of("kvmq.data-dir", work.resolve("data").toString()),
            "payara.log")) {
      String log = payara.log();
      assertThat(log).contains("Exception while loading the app");
      assertThat(log)
          .as("the reason, in %s", payara.logFile())
          .contains(
              "kvmq: queue \"misnamed\": @QueueHandler(threadFactory)"
                  + " \"java:comp/DefaultManagedExecutorService\" is a ")
          .contains(", not a jakarta.enterprise.concurrent.ManagedThreadFactory");
      assertThat(log).as("no worker started").doesNotContain("kvmq worker started");
    }
  }
}
