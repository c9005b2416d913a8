package dev.kvmq.it.virtual;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import java.util.List;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * On Payara Micro 7 (Jakarta EE 11, Java 21+), a queue whose handler names the application's
 * {@code @ManagedThreadFactoryDefinition(virtual = true)} runs its handlers on virtual threads that
 * carry the application's context (CDI, JNDI, class loader), while another queue of the same WAR
 * stays on kvmq's pool of platform threads.
 *
 * <p>Only the {@code payara7} profile compiles this directory ({@code src/test-payara7}): the
 * annotation is Jakarta Concurrency 3.1 (EE 11), and Payara 6 runs on Java 17, which has no virtual
 * threads.
 */
@OnPayara
class VirtualThreadsOnPayaraIT {

  @Deployment
  static WebArchive war() {
    return Wars.withKvmq(Wars.testWar("kvmq-virtual.war"))
        .addClasses(
            Fetch.class,
            ThreadLog.class,
            ThreadLog.Call.class,
            Probe.class,
            VirtualHandler.class,
            PlatformHandler.class);
  }

  @Inject ThreadLog log;

  @Inject
  @QueueName("virtual")
  JobQueue<Fetch> virtual;

  @Inject
  @QueueName("platform")
  JobQueue<Fetch> platform;

  @Test
  void aQueueNamingAVirtualThreadFactoryRunsItsHandlersOnVirtualThreadsWithTheAppsContext() {
    for (int i = 0; i < 20; i++) {
      virtual.push(new Fetch("v" + i));
    }
    platform.push(new Fetch("p0"));

    List<ThreadLog.Call> calls =
        Wait.until(
            "21 handler calls",
            () -> log.calls(),
            c -> c.stream().map(ThreadLog.Call::label).distinct().count() == 21);

    List<ThreadLog.Call> onVirtual =
        calls.stream().filter(c -> c.queue().equals("virtual")).toList();
    assertThat(onVirtual).hasSize(20);
    assertThat(onVirtual)
        .allSatisfy(
            c -> {
              assertThat(c.virtual()).as("virtual thread: %s", c.thread()).isTrue();
              assertThat(c.cdi()).as("CDI on %s", c.thread()).isTrue();
              assertThat(c.jndi()).as("java:comp on %s", c.thread()).isTrue();
              assertThat(c.applicationLoader()).as("class loader of %s", c.thread()).isTrue();
            });

    ThreadLog.Call onPlatform =
        calls.stream().filter(c -> c.queue().equals("platform")).findFirst().orElseThrow();
    assertThat(onPlatform.virtual())
        .as("the other queue stays on kvmq's pool: %s", onPlatform.thread())
        .isFalse();
    assertThat(onPlatform.cdi() && onPlatform.jndi() && onPlatform.applicationLoader()).isTrue();
  }
}
