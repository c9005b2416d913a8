package dev.kvmq.it.request;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.request.RequestScopeChecks;
import dev.kvmq.it.support.request.Tally;
import dev.kvmq.it.support.request.Visit;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * Each handler call runs in a CDI request context of its own, on Payara Micro 6: a
 * {@code @RequestScoped} handler, and an {@code @ApplicationScoped} handler that calls a
 * {@code @RequestScoped} bean, complete their jobs, and every attempt gets fresh request-scoped
 * instances, destroyed after the call. Before, each call failed with WELD-001303 (no active request
 * context) and the jobs ended as dead letters.
 *
 * <p>The handlers are kvmq-it-support's ({@code dev.kvmq.it.support.request}), which {@code
 * RequestScopeOnWildFlyIT} runs on WildFly. The WAR has no {@code beans.xml} (bean discovery
 * "annotated"), like a new user's.
 */
@OnPayara
class RequestScopeOnPayaraIT {

  @Deployment
  static WebArchive war() {
    return KvmqWars.withRequestScopeApp(Wars.withKvmq(Wars.testWar("kvmq-request.war")));
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
    new RequestScopeChecks(tally)
        .aRequestScopedHandlerCompletesItsJobsWithAnInstancePerAttempt(scoped);
  }

  @Test
  void anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt() {
    new RequestScopeChecks(tally)
        .anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt(wired);
  }
}
