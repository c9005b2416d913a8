package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.Wait;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Undeploying a WAR drains its running handlers, and a redeploy loses no job: on a running WildFly,
 * the WAR is undeployed (the deployment scanner's {@code .deployed} marker removed, as an operator
 * would) while two handlers run and a third job waits, then deployed again.
 *
 * <ul>
 *   <li>the cooperative handler is told {@code WORKER_STOPPING}, returns, and its completion is
 *       recorded ({@code @Observes JobCompleted}) before the undeploy ends;
 *   <li>the stubborn handler, which ignores the signal and works longer than {@code
 *       kvmq.shutdown-timeout} (PT3S here), is cut off: the undeploy ends without it, its outcome
 *       is never recorded, and after the redeploy its job runs again once its lease has expired
 *       (attempt 2);
 *   <li>the waiting job is not claimed once the undeploy has begun, though a slot is free while the
 *       stubborn handler is awaited: after the redeploy it runs with attempt 1 and token 1, so no
 *       claim touched it before.
 * </ul>
 *
 * <p>Payara Micro cannot do this: its Arquillian adapter stops the server to undeploy, and it has
 * no admin interface without a cluster. So the test runs on WildFly.
 */
class UndeployDrainIT {

  @Test
  void undeployDrainsRunningHandlersAndARedeployLosesNothing() throws Exception {
    try (WildFlyServer server =
        WildFlyServer.start(
            "drain",
            Wars.app(),
            UnaryOperator.identity(),
            Map.of("kvmq.shutdown-timeout", "PT3S"))) {
      String cooperative = server.control("op=push&label=cooperative&mode=cooperative");
      String stubborn = server.control("op=push&label=stubborn&mode=stubborn&workMs=10000");
      Wait.until(
          "both handlers to start",
          server::journal,
          j -> Fact.has(j, "start", cooperative) && Fact.has(j, "start", stubborn));
      String waiting = server.control("op=push&label=waiting&mode=quick");
      assertThat(server.control("op=job&id=" + waiting))
          .as("both slots are busy")
          .isEqualTo("WAITING|0|0");

      server.undeploy(Duration.ofSeconds(60));

      List<Fact> atUndeploy = server.journal();
      assertThat(atUndeploy)
          .as("the cooperative handler was told, returned, and its outcome recorded")
          .anyMatch(f -> f.is("cancel", cooperative) && f.detail().equals("WORKER_STOPPING"))
          .anyMatch(f -> f.is("end", cooperative) && f.detail().equals("WORKER_STOPPING"))
          .anyMatch(f -> f.is("completed", cooperative) && f.token() == 1);
      assertThat(atUndeploy)
          .as("the stubborn handler was told, but was still running when the undeploy ended")
          .anyMatch(f -> f.is("cancel", stubborn) && f.detail().equals("WORKER_STOPPING"))
          .noneMatch(f -> f.is("end", stubborn));
      assertThat(atUndeploy)
          .as("nothing was claimed after the undeploy began")
          .noneMatch(f -> f.jobId().equals(waiting));

      // The stubborn handler goes on after the undeploy; its outcome has no store to go to.
      List<Fact> afterWork =
          Wait.until(
              "the stubborn handler to finish its work",
              Duration.ofSeconds(30),
              server::journal,
              j -> Fact.has(j, "end", stubborn) || Fact.has(j, "interrupted", stubborn));
      assertThat(afterWork)
          .noneMatch(f -> f.is("completed", stubborn))
          .noneMatch(f -> f.is("failed", stubborn));

      server.redeploy();

      List<Fact> after =
          Wait.until(
              "every job to complete after the redeploy",
              server::journal,
              j -> Fact.has(j, "completed", waiting) && Fact.has(j, "completed", stubborn));
      assertThat(after)
          .as("the waiting job's first claim is after the redeploy")
          .filteredOn(f -> f.is("start", waiting))
          .singleElement()
          .satisfies(f -> assertThat(f.attempt()).isEqualTo(1))
          .satisfies(f -> assertThat(f.token()).isEqualTo(1));
      assertThat(after)
          .as("the cut-off job ran again after its lease expired")
          .filteredOn(f -> f.is("start", stubborn))
          .extracting(Fact::attempt)
          .containsExactly(1, 2);
      assertThat(after)
          .filteredOn(f -> f.is("completed", stubborn))
          .singleElement()
          .satisfies(f -> assertThat(f.token()).isEqualTo(2));
      assertThat(after)
          .as("the completed job did not run again")
          .filteredOn(f -> f.is("start", cooperative))
          .hasSize(1);
      assertThat(after).as("no outcome was refused").noneMatch(f -> f.kind().equals("lease-lost"));
      assertThat(server.control("op=counts"))
          .contains("waiting=0", "delayed=0", "processing=0", "dead=0");
    }
  }
}
