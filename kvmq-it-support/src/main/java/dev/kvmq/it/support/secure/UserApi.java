package dev.kvmq.it.support.secure;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/**
 * The user's own JAX-RS application at {@code /api}, as many applications are written: no classes
 * listed, so the JAX-RS runtime scans the WAR (kvmq's jar included) for resources and providers.
 */
@ApplicationPath("api")
public class UserApi extends Application {

  /** Made by the container. */
  public UserApi() {}
}
