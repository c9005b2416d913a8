package dev.kvmq.jakarta;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * The admin REST API at {@code /kvmq} (served only when {@code kvmq.rest.enabled=true}).
 * Every endpoint requires the role {@code kvmq-admin}: protect {@code /kvmq/*} with a
 * security constraint in {@code web.xml} (HTTP Basic or what the application uses) and
 * grant the role as the application likes. The dashboard ({@link DashboardResource}) is at
 * {@code /kvmq/dashboard}, behind the same role.
 */
@ApplicationPath("kvmq")
public class KvmqRestApplication extends Application {

  /** Made by the container. */
  public KvmqRestApplication() {}

  /**
   * Only kvmq's own resources and providers.
   *
   * @return the classes of this application
   */
  @Override
  public Set<Class<?>> getClasses() {
    return Set.of(QueuesResource.class, DashboardResource.class, ProblemMapper.class);
  }
}
