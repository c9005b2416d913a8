package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.KvmqWars;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Builds the test WAR: the lifecycle test application of kvmq-it-support ({@code
 * dev.kvmq.it.support.app}) and, in {@code WEB-INF/lib}, kvmq and what it needs at run time, as a
 * user's WAR build would.
 */
public final class Wars {

  /** The WAR's name; its context root is {@code kvmq-it}. */
  public static final String NAME = "kvmq-it.war";

  private Wars() {}

  /**
   * @return the test application
   * @throws IllegalStateException if the jars were not copied (run through Maven)
   */
  public static WebArchive app() {
    return KvmqWars.withKvmq(KvmqWars.withLifecycleApp(ShrinkWrap.create(WebArchive.class, NAME)));
  }
}
