package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import dev.kvmq.it.wildfly.WildFlyServer.Fact;

/**
 * Undeploying a WAR drains its running handlers, and a redeploy loses no job: on a running
 * WildFly, the WAR is undeployed (the deployment scanner's {@code .deployed} marker removed,
 * as an operator would) while two handlers run and a third job waits, then deployed again.
 *
 * <ul>
 *   <li>the cooperative handler is told {@code WORKER_STOPPING}, returns, and its completion
 *       is recorded ({@code @Observes JobCompleted}) before the undeploy ends;</li>
 *   <li>the stubborn handler, which ignores the signal and works longer than
 *       {@code kvmq.shutdown-timeout} (PT3S here), is cut off: the undeploy ends without
 *       it, its outcome is never recorded, and after the redeploy its job runs again once
 *       its lease has expired (attempt 2);</li>
 *   <li>the waiting job is not claimed once the undeploy has begun, though a slot is free
 *       while the stubborn handler is awaited: after the redeploy it runs with attempt 1 and
 *       token 1, so no claim touched it before.</li>
 * </ul>
 *
 * <p>Payara Micro cannot do this: its Arquillian adapter stops the server to undeploy, and
 * it has no admin interface without a cluster. So the test runs on WildFly.
 */
class UndeployDrainIT {

    @Test
    void undeployDrainsRunningHandlersAndARedeployLosesNothing() throws Exception {
        try (WildFlyServer server = WildFlyServer.start("drain", Wars.app(), UnaryOperator.identity(),
                Map.of("kvmq.shutdown-timeout", "PT3S"))) {
            String cooperative = server.control("op=push&label=cooperative&mode=cooperative");
            String stubborn = server.control("op=push&label=stubborn&mode=stubborn&workMs=10000");
            Wait.until("both handlers to start", server::journal,
                    j -> has(j, "start", cooperative) && has(j, "start", stubborn));
            String waiting = server.control("op=push&label=waiting&mode=quick");
            assertThat(server.control("op=job&id=" + waiting)).as("both slots are busy").isEqualTo("WAITING|0|0");

            server.undeploy(Duration.ofSeconds(60));

            List<Fact> atUndeploy = server.journal();
            assertThat(atUndeploy).as("the cooperative handler was told, returned, and its outcome recorded")
                    .anyMatch(f -> is(f, "cancel", cooperative) && f.detail().equals("WORKER_STOPPING"))
                    .anyMatch(f -> is(f, "end", cooperative) && f.detail().equals("WORKER_STOPPING"))
                    .anyMatch(f -> is(f, "completed", cooperative) && f.token() == 1);
            assertThat(atUndeploy).as("the stubborn handler was told, but was still running when the undeploy ended")
                    .anyMatch(f -> is(f, "cancel", stubborn) && f.detail().equals("WORKER_STOPPING"))
                    .noneMatch(f -> is(f, "end", stubborn));
            assertThat(atUndeploy).as("nothing was claimed after the undeploy began")
                    .noneMatch(f -> f.jobId().equals(waiting));

            // The stubborn handler goes on after the undeploy; its outcome has no store to go to.
            List<Fact> afterWork = Wait.until("the stubborn handler to finish its work", Duration.ofSeconds(30),
                    server::journal, j -> has(j, "end", stubborn) || has(j, "interrupted", stubborn));
            assertThat(afterWork).noneMatch(f -> is(f, "completed", stubborn)).noneMatch(f -> is(f, "failed", stubborn));

            server.redeploy();

            List<Fact> after = Wait.until("every job to complete after the redeploy", server::journal,
                    j -> has(j, "completed", waiting) && has(j, "completed", stubborn));
            assertThat(after).as("the waiting job's first claim is after the redeploy")
                    .filteredOn(f -> is(f, "start", waiting)).singleElement()
                    .satisfies(f -> assertThat(f.attempt()).isEqualTo(1))
                    .satisfies(f -> assertThat(f.token()).isEqualTo(1));
            assertThat(after).as("the cut-off job ran again after its lease expired")
                    .filteredOn(f -> is(f, "start", stubborn)).extracting(Fact::attempt).containsExactly(1, 2);
            assertThat(after).filteredOn(f -> is(f, "completed", stubborn)).singleElement()
                    .satisfies(f -> assertThat(f.token()).isEqualTo(2));
            assertThat(after).as("the completed job did not run again")
                    .filteredOn(f -> is(f, "start", cooperative)).hasSize(1);
            assertThat(after).as("no outcome was refused").noneMatch(f -> f.kind().equals("lease-lost"));
            assertThat(server.control("op=counts")).contains("waiting=0", "delayed=0", "processing=0", "dead=0");
        }
    }

    private static boolean is(Fact f, String kind, String id) {
        return f.kind().equals(kind) && f.jobId().equals(id);
    }

    private static boolean has(List<Fact> journal, String kind, String id) {
        Predicate<Fact> p = f -> is(f, kind, id);
        return journal.stream().anyMatch(p);
    }
}
