package dev.kvmq.jakarta;

import dev.kvmq.store.Key;
import jakarta.inject.Inject;
import java.util.List;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;

/**
 * MicroProfile Health readiness: UP while kvmq's store answers a read, DOWN otherwise (the store is
 * closed, its directory is locked by another process, the database is away). When UP, the datum
 * {@code queuesWithoutHandler} lists the queues opened here that have waiting or delayed jobs but
 * no {@link QueueHandler} in this application.
 *
 * <p>Registered by {@link KvmqExtension} only where the server has MicroProfile Health (it carries
 * no bean-defining annotation of its own), so kvmq deploys on servers without it.
 */
@SuppressWarnings("exports") // public for CDI; MicroProfile Health is optional (requires static)
public class KvmqReadinessCheck implements HealthCheck {

  private static final Key PROBE = Key.of("kvmq", "health");

  @Inject KvmqExtension extension;

  /** Made by CDI. */
  public KvmqReadinessCheck() {}

  /**
   * Reads one key from the store.
   *
   * @return UP with the store's description, or DOWN with the error
   */
  @Override
  public HealthCheckResponse call() {
    HealthCheckResponseBuilder b = HealthCheckResponse.named("kvmq");
    try {
      KvmqRuntime runtime = extension.runtime();
      if (runtime == null) {
        return b.down().withData("error", "kvmq has not started").build();
      }
      var store = runtime.store();
      store.get(PROBE);
      b.up().withData("store", store.toString());
      List<String> unhandled = runtime.unhandledQueues();
      if (!unhandled.isEmpty()) {
        // Not DOWN: another server of the same store may run their handlers.
        b.withData("queuesWithoutHandler", String.join(",", unhandled));
      }
      return b.build();
    } catch (RuntimeException e) {
      return b.down()
          .withData("error", e.getClass().getSimpleName() + ": " + e.getMessage())
          .build();
    }
  }
}
