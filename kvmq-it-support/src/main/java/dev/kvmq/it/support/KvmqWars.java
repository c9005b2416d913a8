package dev.kvmq.it.support;

import dev.kvmq.it.support.app.ControlServlet;
import dev.kvmq.it.support.app.Gate;
import dev.kvmq.it.support.app.Greeter;
import dev.kvmq.it.support.app.HoldHandler;
import dev.kvmq.it.support.app.Journal;
import dev.kvmq.it.support.app.Observers;
import dev.kvmq.it.support.app.Task;
import dev.kvmq.it.support.app.WorkHandler;
import dev.kvmq.it.support.request.RequestScopeChecks;
import dev.kvmq.it.support.request.ScopedHandler;
import dev.kvmq.it.support.request.Scratch;
import dev.kvmq.it.support.request.Tally;
import dev.kvmq.it.support.request.Visit;
import dev.kvmq.it.support.request.WiredHandler;
import dev.kvmq.it.support.root.MineResource;
import dev.kvmq.it.support.root.PathChecks;
import dev.kvmq.it.support.root.RootApi;
import dev.kvmq.it.support.secure.GuardedHandler;
import dev.kvmq.it.support.secure.SecureAuthentication;
import dev.kvmq.it.support.secure.SecureUsers;
import dev.kvmq.it.support.secure.UserApi;
import dev.kvmq.it.support.secure.UserResource;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Fills the test WARs of every server's ITs.
 *
 * <p>Jars come from files, not from a Maven resolver: {@code dependency:copy-dependencies} puts
 * kvmq and its run-time dependencies into the directory named by the system property {@code
 * kvmq.it.libs} before failsafe runs (see the IT modules' poms), and the test helpers' own jars are
 * found on the test class path. Classes of this module go into a WAR one by one (never this
 * module's jar: it holds a servlet and CDI beans that only some WARs want).
 */
public final class KvmqWars {

  private KvmqWars() {}

  /**
   * Adds kvmq and everything it needs at run time to {@code WEB-INF/lib}, as a user's WAR build
   * would.
   *
   * @param war the archive
   * @return the same archive
   * @throws IllegalStateException if the jars were not copied (run through Maven)
   */
  public static WebArchive withKvmq(WebArchive war) {
    Path libs = Path.of(System.getProperty("kvmq.it.libs", "target/it-libs"));
    try (Stream<Path> jars = Files.list(libs)) {
      File[] files =
          jars.filter(p -> p.toString().endsWith(".jar")).map(Path::toFile).toArray(File[]::new);
      if (files.length == 0) {
        throw new IllegalStateException(
            "No jars in " + libs + ": run `mvn verify` (copy-dependencies)");
      }
      return war.addAsLibraries(files);
    } catch (IOException e) {
      throw new IllegalStateException(
          "Cannot list " + libs + ": run `mvn verify` (copy-dependencies)", e);
    }
  }

  /**
   * Adds the lifecycle test application of {@code dev.kvmq.it.support.app}: the queues {@code work}
   * and {@code hold}, their handlers, the {@link Journal}, the observers of kvmq's events and the
   * remote control at {@code /control}.
   *
   * @param war the archive
   * @return the same archive
   */
  public static WebArchive withLifecycleApp(WebArchive war) {
    return war.addClasses(
            Task.class,
            Journal.class,
            Gate.class,
            Greeter.class,
            WorkHandler.class,
            HoldHandler.class,
            Observers.class,
            ControlServlet.class,
            Wait.class)
        .addClass("dev.kvmq.it.support.app.Steps");
  }

  /**
   * Adds the request-scope test application of {@code dev.kvmq.it.support.request}: the queues
   * {@code request-scoped} ({@link ScopedHandler}, a {@code @RequestScoped} handler) and {@code
   * wired} ({@link WiredHandler}, {@code @ApplicationScoped}), both calling the
   * {@code @RequestScoped} {@link Scratch}, and the {@link Tally} of their calls.
   *
   * @param war the archive
   * @return the same archive
   */
  public static WebArchive withRequestScopeApp(WebArchive war) {
    return war.addClasses(
        Visit.class,
        Tally.class,
        Tally.Call.class,
        Scratch.class,
        ScopedHandler.class,
        WiredHandler.class,
        RequestScopeChecks.class,
        Wait.class);
  }

  /** Where the recipe (docs/servers.md) maps kvmq's admin API below the application's root. */
  public static final String API = "/kvmq";

  /**
   * The {@code web.xml} of the admin API's recipe: kvmq's application mapped at {@code /kvmq/*},
   * which needs the role {@code kvmq-admin}; the mechanism and the users are CDI beans of the WAR.
   */
  public static final String SECURE_WEB_XML = secureWebXml(API);

  /**
   * The {@code web.xml} of the admin API's recipe with the API mapped at {@code api/*}.
   *
   * @param api the mapping's path below the application's root, e.g. {@code /ops/jobs}
   * @return the descriptor
   */
  public static String secureWebXml(String api) {
    return """
            <?xml version="1.0" encoding="UTF-8"?>
            <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
              <servlet>
                <servlet-name>dev.kvmq.jakarta.KvmqRestApplication</servlet-name>
              </servlet>
              <servlet-mapping>
                <servlet-name>dev.kvmq.jakarta.KvmqRestApplication</servlet-name>
                <url-pattern>API/*</url-pattern>
              </servlet-mapping>
              <security-constraint>
                <web-resource-collection>
                  <web-resource-name>kvmq admin API</web-resource-name>
                  <url-pattern>API/*</url-pattern>
                </web-resource-collection>
                <auth-constraint><role-name>kvmq-admin</role-name></auth-constraint>
              </security-constraint>
              <security-role><role-name>kvmq-admin</role-name></security-role>
            </web-app>
            """
        .replace("API/*", api + "/*");
  }

  /** Payara's part of the recipe: the group {@code kvmq-admin} is the role of that name. */
  public static final String SECURE_GLASSFISH_WEB_XML =
      """
            <?xml version="1.0" encoding="UTF-8"?>
            <glassfish-web-app>
              <security-role-mapping>
                <role-name>kvmq-admin</role-name>
                <group-name>kvmq-admin</group-name>
              </security-role-mapping>
            </glassfish-web-app>
            """;

  /**
   * Adds the secured test application of {@code dev.kvmq.it.support.secure}: kvmq's admin API
   * mapped at {@code /kvmq/*} ({@code kvmq.rest.enabled=true} too) behind the security recipe
   * (web.xml, glassfish-web.xml, {@code SecureUsers}, {@code SecureAuthentication}), the queue
   * {@code guarded}, and the user's own JAX-RS application at {@code /api} that relies on scanning.
   *
   * @param war the archive
   * @return the same archive
   */
  public static WebArchive withSecureApp(WebArchive war) {
    return withSecureApp(war, API);
  }

  /**
   * Adds the secured test application of {@link #withSecureApp(WebArchive)}, with kvmq's admin API
   * mapped at {@code api/*} instead.
   *
   * @param war the archive
   * @param api the mapping's path below the application's root, e.g. {@code /ops/jobs}
   * @return the same archive
   */
  public static WebArchive withSecureApp(WebArchive war, String api) {
    return war.addClasses(
            SecureUsers.class,
            SecureAuthentication.class,
            UserApi.class,
            UserResource.class,
            GuardedHandler.class,
            Task.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(secureWebXml(api)), "web.xml")
        .addAsWebInfResource(new StringAsset(SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  /** The {@code web.xml} of {@link #withRootApp}: the user's application at {@code /*}. */
  public static final String ROOT_WEB_XML =
      """
            <?xml version="1.0" encoding="UTF-8"?>
            <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
              <servlet>
                <servlet-name>dev.kvmq.it.support.root.RootApi</servlet-name>
              </servlet>
              <servlet-mapping>
                <servlet-name>dev.kvmq.it.support.root.RootApi</servlet-name>
                <url-pattern>/*</url-pattern>
              </servlet-mapping>
            </web-app>
            """;

  /**
   * Adds the user's application of {@code dev.kvmq.it.support.root}: its JAX-RS application mapped
   * at {@code /*} with a resource at {@code kvmq/mine}, and {@code kvmq.rest.enabled=true} with
   * kvmq's API mapped nowhere ({@link PathChecks}).
   *
   * @param war the archive
   * @return the same archive
   */
  public static WebArchive withRootApp(WebArchive war) {
    return war.addClasses(RootApi.class, MineResource.class)
        .addAsResource(
            new StringAsset("kvmq.rest.enabled=true\n"), "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(ROOT_WEB_XML), "web.xml");
  }

  /**
   * The jar (or class directory) a class was loaded from.
   *
   * @param type a class loaded from a jar
   * @return that jar
   * @throws IllegalStateException if the class has no code source
   */
  public static File jarOf(Class<?> type) {
    try {
      return new File(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | NullPointerException e) {
      throw new IllegalStateException("No jar for " + type, e);
    }
  }
}
