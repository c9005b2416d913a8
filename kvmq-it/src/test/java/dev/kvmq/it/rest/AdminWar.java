package dev.kvmq.it.rest;

import dev.kvmq.it.Wars;
import dev.kvmq.it.queue.TestUsers;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * A client-side test's WAR with kvmq, the admin API on ({@code kvmq.rest.enabled=true}) and {@code
 * /kvmq/*} behind HTTP Basic for the role {@code kvmq-admin}, granted to the group of the same
 * name: the users of {@link TestUsers} ({@code admin} has it, {@code viewer} not).
 */
public final class AdminWar {

  static final String WEB_XML =
      """
            <?xml version="1.0" encoding="UTF-8"?>
            <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
              <security-constraint>
                <web-resource-collection>
                  <web-resource-name>kvmq admin API</web-resource-name>
                  <url-pattern>/kvmq/*</url-pattern>
                </web-resource-collection>
                <auth-constraint><role-name>kvmq-admin</role-name></auth-constraint>
              </security-constraint>
              <security-role><role-name>kvmq-admin</role-name></security-role>
            </web-app>
            """;

  static final String GLASSFISH_WEB_XML =
      """
            <?xml version="1.0" encoding="UTF-8"?>
            <glassfish-web-app>
              <security-role-mapping>
                <role-name>kvmq-admin</role-name>
                <group-name>kvmq-admin</group-name>
              </security-role-mapping>
            </glassfish-web-app>
            """;

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
        .addAsWebInfResource(new StringAsset(WEB_XML), "web.xml")
        .addAsWebInfResource(new StringAsset(GLASSFISH_WEB_XML), "glassfish-web.xml");
  }
}
