package dev.kvmq.it.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.store.postgres.PostgresKvStore;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Set;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two Payara Micro servers with the same WAR on one PostgreSQL ({@code kvmq.store=postgres}): both
 * define {@link TickHandler}'s schedules at startup and both run workers that fire them, and each
 * slot of the every-second schedule gets exactly one job, none missing, while both run.
 */
@Tag("payara")
class TwoServersOnPostgresIT {

  @Test
  void twoServersMakeOneJobPerSlot() throws Exception {
    String url = PgServer.start();
    String webXml =
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
          <data-source>
            <name>java:app/jdbc/kvmq</name>
            <class-name>org.postgresql.ds.PGSimpleDataSource</class-name>
            <url>%s</url>
            <user>postgres</user>
            <password>postgres</password>
          </data-source>
        </web-app>
        """
            .formatted(url);
    Path work = Payaras.work("schedule-pg");
    Path war = work.resolve("sched-pg.war");
    Wars.withKvmq(Wars.testWar("sched-pg.war"))
        .addAsLibraries(Wars.jarOf(PostgresKvStore.class), Wars.jarOf(org.postgresql.Driver.class))
        .addClasses(Tick.class, TickHandler.class)
        .addAsResource(
            new StringAsset("kvmq.store=postgres\nkvmq.postgres.datasource=java:app/jdbc/kvmq\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(webXml), "web.xml")
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    Path ticks = work.resolve("ticks.txt");

    try (ServerProcess a =
            Payaras.start(
                work,
                war,
                ServerProcess.freePort(),
                Map.of("kvmq.it.ticks", ticks.toString(), "kvmq.it.node", "a"),
                "a.log");
        ServerProcess b =
            Payaras.start(
                work,
                war,
                ServerProcess.freePort(),
                Map.of("kvmq.it.ticks", ticks.toString(), "kvmq.it.node", "b"),
                "b.log")) {
      Instant both = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
      assertThat(a.log()).doesNotContain("Exception while loading the app");
      assertThat(b.log()).doesNotContain("Exception while loading the app");
      Wait.until(
          "12 s of slots with both servers running",
          Duration.ofSeconds(60),
          () -> Runs.read(ticks),
          r -> r.reached("every-second", both.plusSeconds(15)));
      assertThat(a.stop(Duration.ofSeconds(60))).isTrue();
      assertThat(b.stop(Duration.ofSeconds(60))).isTrue();

      Runs runs = Runs.read(ticks);
      Map<Instant, Set<String>> slots = runs.jobsBySlot("every-second");
      assertThat(slots.values())
          .as("no slot has two jobs, from either server")
          .allSatisfy(j -> assertThat(j).hasSize(1));
      for (Instant t = both; !t.isAfter(both.plusSeconds(12)); t = t.plusSeconds(1)) {
        assertThat(slots.get(t)).as("the jobs of slot %s", t).isNotNull().hasSize(1);
      }
      assertThat(PgServer.query("SELECT count(*) FROM kvmq_kv")).isPositive();
    }
  }
}
