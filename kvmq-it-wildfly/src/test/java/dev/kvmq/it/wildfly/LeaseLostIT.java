package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.Wait;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code @Observes JobLeaseLost} fires in a real server, for the right job, when a lease is really
 * lost.
 *
 * <p>How a lease is lost here: the workers run on WildFly's default managed scheduled executor
 * ({@code kvmq.executor}; by default kvmq makes its own pool), configured with one thread ({@code
 * core-threads="1"}). The {@code hold} handler (lease PT1S) blocks that thread, so the worker's
 * renewal task cannot run (docs/semantics.md: a pool with no thread free for renewals cannot renew
 * leases) and the lease expires while the handler runs. A second worker on the same queue and
 * store, with its own threads (as a second node would be), reclaims the job and runs it to
 * completion with token 2. When the first handler is let go, its completion is refused: the
 * container's worker fires {@code JobLeaseLost} for the job as it held it (token 1), the handler is
 * cancelled with {@code LEASE_LOST}, and no {@code JobCompleted} is fired for the stale run.
 */
class LeaseLostIT {

  @Test
  void aLeaseThatCouldNotBeRenewedIsLostAndObserved() throws Exception {
    try (WildFlyServer server =
        WildFlyServer.start(
            "lease-lost",
            Wars.app(),
            LeaseLostIT::oneSchedulerThread,
            Map.of("kvmq.executor", "java:comp/DefaultManagedScheduledExecutorService"))) {
      String id = server.control("op=push&queue=hold&label=held&mode=hold");
      Wait.until(
          "the handler to start",
          server::journal,
          j -> j.stream().anyMatch(f -> f.kind().equals("start") && f.jobId().equals(id)));

      Wait.until(
          "the lease to expire while the handler runs (renewal starved)",
          () -> server.control("op=job&queue=hold&id=" + id),
          "WAITING|1|1"::equals);

      assertThat(server.control("op=takeover")).isEqualTo("started");
      Wait.until(
          "the second worker to run the job",
          server::journal,
          j -> j.stream().anyMatch(f -> f.kind().equals("takeover") && f.jobId().equals(id)));
      assertThat(server.control("op=takeover-stop")).isEqualTo("stopped=true");
      assertThat(server.control("op=job&queue=hold&id=" + id))
          .as(
              "the second worker completed it, on its second attempt with token 2 (kept as COMPLETED)")
          .isEqualTo("COMPLETED|2|2");

      server.control("op=open");

      List<Fact> journal =
          Wait.until(
              "JobLeaseLost for the job",
              server::journal,
              j -> j.stream().anyMatch(f -> f.kind().equals("lease-lost") && f.jobId().equals(id)));
      assertThat(journal)
          .filteredOn(f -> f.kind().equals("takeover"))
          .singleElement()
          .satisfies(f -> assertThat(f.jobId()).isEqualTo(id))
          .satisfies(f -> assertThat(f.token()).as("reclaimed and claimed again").isEqualTo(2));
      assertThat(journal)
          .filteredOn(f -> f.kind().equals("lease-lost"))
          .allSatisfy(
              f -> {
                assertThat(f.jobId()).isEqualTo(id);
                assertThat(f.queue()).isEqualTo("hold");
                assertThat(f.label()).isEqualTo("held");
                assertThat(f.token()).as("the lost lease's token").isEqualTo(1);
                assertThat(f.detail()).as("the refused outcome").isIn("complete", "renew");
              });
      Wait.until(
          "the handler to be cancelled with LEASE_LOST",
          server::journal,
          j ->
              j.stream()
                  .anyMatch(
                      f ->
                          f.kind().equals("cancel")
                              && f.jobId().equals(id)
                              && f.detail().equals("LEASE_LOST")));
      assertThat(server.journal())
          .as("the stale run's outcome was not recorded")
          .noneMatch(f -> f.kind().equals("completed") || f.kind().equals("failed"));
    }
  }

  /** The default managed scheduled executor with one thread. */
  private static String oneSchedulerThread(String xml) {
    String tag = "<managed-scheduled-executor-service name=\"default\"";
    if (!xml.contains(tag)) {
      throw new IllegalStateException(
          "no default managed-scheduled-executor-service in standalone.xml");
    }
    return xml.replace(tag, tag + " core-threads=\"1\"");
  }
}
