package dev.kvmq.it.rest;

import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * A client-side test's WAR with kvmq, the admin API on ({@code kvmq.rest.enabled=true}) and {@code
 * /kvmq/*} behind HTTP Basic for the role {@code kvmq-admin}, granted to the group of the same
 * name: the users of {@link TestUsers} ({@code admin} has it, {@code viewer} not).
 */
public final class AdminWar {

  private AdminWar() {}

  /**
   * @param name the archive's name, ending in {@code .war}; it becomes the context root
   * @return a new archive with kvmq, the users and the security constraint; the test adds its own
   *     classes
   */
  public static WebArchive of(String name) {
    return Wars.withKvmq(ShrinkWrap.create(WebArchive.class, name))
        .addClass(TestUsers.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(KvmqWars.SECURE_WEB_XML), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }
}
