package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.Wait;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Jobs outlive a restart of WildFly: a real server (standalone.xml, the WAR in its deployments
 * directory, kvmq's default store under {@code jboss.server.data.dir}) is stopped with SIGTERM
 * while jobs wait in a paused queue and started again on the same directories; the jobs, and the
 * pause, are still there, and every job runs once after the resume.
 */
class WildFlyRestartIT {

  @Test
  void aRestartKeepsTheJobs() throws Exception {
    try (WildFlyServer server =
        WildFlyServer.start("restart", Wars.app(), UnaryOperator.identity(), Map.of())) {
      server.control("op=pause");
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        ids.add(server.control("op=push&label=kept-" + i + "&mode=quick"));
      }
      assertThat(server.control("op=counts")).contains("waiting=5", "paused=true");

      server.stop();
      server.startAgain();

      assertThat(server.control("op=counts"))
          .as("after the restart")
          .contains("waiting=5", "paused=true");
      for (String id : ids) {
        assertThat(server.control("op=job&id=" + id)).isEqualTo("WAITING|0|0");
      }
      assertThat(server.journal()).as("nothing ran while paused").isEmpty();

      server.control("op=resume");

      List<Fact> journal =
          Wait.until(
              "the five jobs to complete",
              server::journal,
              facts -> facts.stream().filter(f -> f.kind().equals("completed")).count() >= 5);
      assertThat(journal.stream().filter(f -> f.kind().equals("completed")).map(Fact::jobId))
          .containsExactlyInAnyOrderElementsOf(ids);
      assertThat(journal.stream().filter(f -> f.kind().equals("start")))
          .as("each ran once, on a managed thread")
          .hasSize(5)
          .allSatisfy(f -> assertThat(f.detail()).startsWith("managed=true,cdi=true"));
      assertThat(server.control("op=counts")).contains("waiting=0", "processing=0");
    }
  }
}
