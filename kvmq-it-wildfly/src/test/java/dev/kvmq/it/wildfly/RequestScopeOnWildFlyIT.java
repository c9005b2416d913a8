package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.request.RequestScopeChecks;
import dev.kvmq.it.support.request.Tally;
import dev.kvmq.it.support.request.Visit;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
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
    new RequestScopeChecks(tally)
        .aRequestScopedHandlerCompletesItsJobsWithAnInstancePerAttempt(scoped);
  }

  @Test
  void anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt() {
    new RequestScopeChecks(tally)
        .anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt(wired);
  }
}
