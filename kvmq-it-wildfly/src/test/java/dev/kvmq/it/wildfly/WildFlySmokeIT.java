package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.app.Journal;
import dev.kvmq.it.support.app.Task;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.api.Assertions;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kvmq in a real WAR on WildFly, started by Arquillian's managed container with the default
 * configuration ({@code standalone.xml}) and no kvmq configuration at all: the handlers are found,
 * a job runs on a container-managed thread with CDI injection, {@code @Observes JobCompleted} sees
 * it, and the store is under the server's data directory.
 */
@ExtendWith(ArquillianExtension.class)
class WildFlySmokeIT {

  @Deployment
  static WebArchive war() {
    return Wars.app().addAsLibraries(KvmqWars.jarOf(Assertions.class));
  }

  @Inject
  @QueueName("work")
  JobQueue<Task> work;

  @Test
  void aHandlerRunsOnAManagedThreadAndJobCompletedIsObserved() {
    Job<Task> job = work.push(new Task("smoke", "quick", 0)).orElseThrow();

    List<String> lines =
        Wait.until(
            "the job's JobCompleted event",
            Journal::lines,
            l -> l.contains("completed|work|" + job.id() + "|smoke|1|1|work"));

    String start =
        lines.stream()
            .filter(l -> l.startsWith("start|work|" + job.id() + "|"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no start line in " + lines));
    assertThat(start)
        .as("attempt 1, token 1, ManageableThread and @Inject in the handler")
        .startsWith("start|work|" + job.id() + "|smoke|1|1|managed=true,cdi=true,");
    assertThat(lines.indexOf(start))
        .as("the handler ran before the event fired")
        .isLessThan(lines.indexOf("completed|work|" + job.id() + "|smoke|1|1|work"));
    assertThat(work.job(job.id()).map(j -> j.status()))
        .as("a completed job is kept as completed (the default retention)")
        .hasValue(dev.kvmq.JobStatus.COMPLETED);
  }

  @Test
  void theStoreIsUnderTheServersDataDirectory() {
    Path data = Path.of(System.getProperty("jboss.server.data.dir"), "kvmq");

    assertThat(data).as("kvmq.data-dir's default on WildFly").isDirectory();
    assertThat(data.toFile().list()).as("EclipseStore's files in %s", data).isNotEmpty();
  }
}
