package dev.kvmq.it.support.root;

import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * A user's JAX-RS application mapped at {@code /*} in {@code web.xml} (no {@code ApplicationPath}),
 * with a resource of its own under {@code kvmq/}: the application a new user wrote that found
 * {@code /kvmq/*} taken by kvmq while kvmq's API was off.
 */
public class RootApi extends Application {

  /** Made by the container. */
  public RootApi() {}

  /**
   * Only its own resource.
   *
   * @return {@link MineResource}
   */
  @Override
  public Set<Class<?>> getClasses() {
    return Set.of(MineResource.class);
  }
}
