package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import dev.kvmq.store.postgres.PostgresKvStore;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code kvmq.store=postgres} in a real server: the WAR defines a DataSource (web.xml {@code
 * <data-source>}, PostgreSQL's driver in WEB-INF/lib) for a real PostgreSQL that the test starts,
 * names it by JNDI in {@code kvmq.postgres.datasource}, and its handler runs a job whose record is
 * a row in that database.
 */
@OnPayara
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresOnPayaraIT {

  @Deployment
  static WebArchive war() {
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
    return Wars.withKvmq(Wars.testWar("kvmq-pg.war"))
        .addAsLibraries(Wars.jarOf(PostgresKvStore.class), Wars.jarOf(org.postgresql.Driver.class))
        .addClasses(Note.class, NoteHandler.class, Notes.class)
        .addAsResource(
            new StringAsset("kvmq.store=postgres\nkvmq.postgres.datasource=java:app/jdbc/kvmq\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(webXml), "web.xml");
  }

  @Inject
  @QueueName("notes")
  JobQueue<Note> notes;

  @Inject Notes seen;

  @ArquillianResource URL base;

  @Test
  @Order(1)
  void aJobPushedInTheServerRunsAndIsObserved() {
    Job<Note> job = notes.push(new Note("now")).orElseThrow();
    notes.push(new Note("kept-for-an-hour"), JobOptions.defaults().delay(Duration.ofHours(1)));

    Wait.until("@Observes JobCompleted for " + job.id(), () -> seen.completed().contains(job.id()));
  }

  @Test
  @Order(2)
  @RunAsClient
  void theQueueLivesInPostgres() {
    long rows =
        PgServer.query(
            "SELECT count(*) FROM kvmq_kv"
                + " WHERE position(convert_to('kept-for-an-hour', 'UTF8') in value) > 0");
    assertThat(rows).as("the delayed job's record in kvmq_kv").isEqualTo(1);
  }

  @Test
  @Order(3)
  @RunAsClient
  void readinessNamesThePostgresStore() throws Exception {
    URI ready =
        URI.create(
            base.getProtocol() + "://" + base.getHost() + ":" + base.getPort() + "/health/ready");
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(ready).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("kvmq").contains("PostgresKvStore");
  }
}
