package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobStatus;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.request.Scratch;
import dev.kvmq.it.support.request.Tally;
import dev.kvmq.it.support.request.Visit;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.assertj.core.api.Assertions;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each handler call runs in a CDI request context of its own, on WildFly: the handlers of {@code
 * RequestScopeOnPayaraIT} (kvmq-it-support's {@code dev.kvmq.it.support.request}), with the same
 * checks. A {@code @RequestScoped} handler, and an {@code @ApplicationScoped} handler that calls a
 * {@code @RequestScoped} bean, complete their jobs, and every attempt gets fresh request-scoped
 * instances, destroyed after the call.
 */
@ExtendWith(ArquillianExtension.class)
class RequestScopeOnWildFlyIT {

  @Deployment
  static WebArchive war() {
    return KvmqWars.withRequestScopeApp(
            KvmqWars.withKvmq(ShrinkWrap.create(WebArchive.class, "kvmq-request.war")))
        .addAsLibraries(KvmqWars.jarOf(Assertions.class));
  }

  @Inject Tally tally;

  @Inject
  @QueueName("request-scoped")
  JobQueue<Visit> scoped;

  @Inject
  @QueueName("wired")
  JobQueue<Visit> wired;

  @Test
  void aRequestScopedHandlerCompletesItsJobsWithAnInstancePerAttempt() {
    Job<Visit> once = scoped.push(new Visit("once", 0)).orElseThrow();
    Job<Visit> twice = scoped.push(new Visit("twice", 1)).orElseThrow(); // fails its first attempt

    assertCompleted(ended(scoped, once));
    assertCompleted(ended(scoped, twice));

    List<Tally.Call> calls = tally.calls("request-scoped");
    assertThat(calls)
        .extracting(c -> c.label() + " " + c.attempt())
        .containsExactlyInAnyOrder("once 1", "twice 1", "twice 2");
    assertFreshAndDestroyed(calls, true);
  }

  @Test
  void anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt() {
    Job<Visit> once = wired.push(new Visit("once", 0)).orElseThrow();
    Job<Visit> twice = wired.push(new Visit("twice", 1)).orElseThrow(); // fails its first attempt

    assertCompleted(ended(wired, once));
    assertCompleted(ended(wired, twice));

    List<Tally.Call> calls = tally.calls("wired");
    assertThat(calls)
        .extracting(c -> c.label() + " " + c.attempt())
        .containsExactlyInAnyOrder("once 1", "twice 1", "twice 2");
    assertThat(calls.stream().map(Tally.Call::handler).distinct())
        .as("one @ApplicationScoped handler instance")
        .hasSize(1);
    assertFreshAndDestroyed(calls, false);
  }

  /** Waits until the job is completed or a dead letter; returns it then. */
  private static Job<Visit> ended(JobQueue<Visit> queue, Job<Visit> job) {
    return Wait.until(
        "job " + job.state().label() + " of " + queue.name() + " to end",
        () -> queue.job(job.id()).orElseThrow(),
        j -> j.status() == JobStatus.COMPLETED || j.status() == JobStatus.DEAD);
  }

  private static void assertCompleted(Job<Visit> job) {
    assertThat(job.status())
        .as("job %s, attempts %s", job.state().label(), job.attempts())
        .isEqualTo(JobStatus.COMPLETED);
  }

  /**
   * Every call had a {@link Scratch} of its own (and, for a request-scoped handler, a handler
   * instance of its own), each destroyed after its call: as many destroyed as calls.
   */
  private void assertFreshAndDestroyed(List<Tally.Call> calls, boolean handlerPerCall) {
    Set<String> scratches = calls.stream().map(Tally.Call::scratch).collect(Collectors.toSet());
    assertThat(scratches).as("a Scratch per call").hasSize(calls.size());
    Set<String> destroyed = tally.destroyed();
    assertThat(destroyed.stream().filter(scratches::contains).count())
        .as("Scratches destroyed")
        .isEqualTo(calls.size());
    if (handlerPerCall) {
      Set<String> handlers = calls.stream().map(Tally.Call::handler).collect(Collectors.toSet());
      assertThat(handlers).as("a handler instance per call").hasSize(calls.size());
      assertThat(destroyed.stream().filter(handlers::contains).count())
          .as("handler instances destroyed")
          .isEqualTo(calls.size());
    }
  }
}
