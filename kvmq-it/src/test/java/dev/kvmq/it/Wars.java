package dev.kvmq.it;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import java.io.File;
import java.net.URI;
import java.net.URL;
import org.assertj.core.api.Assertions;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Builds the test WARs of the Payara ITs; kvmq's jars and the shared test application come from
 * {@link KvmqWars} (kvmq-it-support).
 */
public final class Wars {

  private Wars() {}

  /**
   * A WAR for tests that run inside the server: it carries {@link OnPayara}, {@link Wait} and
   * AssertJ.
   *
   * @param name the archive's name, ending in {@code .war}; it becomes the context root
   * @return a new archive, to which the test adds its own classes
   */
  public static WebArchive testWar(String name) {
    return ShrinkWrap.create(WebArchive.class, name)
        .addClasses(OnPayara.class, Wait.class)
        .addAsLibraries(jarOf(Assertions.class));
  }

  /**
   * Adds kvmq and everything it needs at run time to {@code WEB-INF/lib}.
   *
   * @param war the archive
   * @return the same archive
   * @throws IllegalStateException if the jars were not copied (run through Maven)
   * @see KvmqWars#withKvmq(WebArchive)
   */
  public static WebArchive withKvmq(WebArchive war) {
    return KvmqWars.withKvmq(war);
  }

  /**
   * @param type a class loaded from a jar
   * @return that jar
   * @throws IllegalStateException if the class has no code source
   * @see KvmqWars#jarOf(Class)
   */
  public static File jarOf(Class<?> type) {
    return KvmqWars.jarOf(type);
  }

  /**
   * The context path of a WAR that Arquillian deployed to Payara Micro, from the URL it injects
   * ({@code @ArquillianResource URL}). arquillian-payara-micro-managed once injected a URL with no
   * path at all (on Payara Micro 7, in CI on 2026-12-07: it had read the host and port before
   * Payara printed the deployment's context root), and the test then called {@code
   * http://127.0.0.1:8961kvmq/...}. Payara Micro deploys a WAR at its name without {@code .war}, so
   * that is the path when the URL has none.
   *
   * @param base the URL Arquillian injected
   * @param war the archive's name, as it was built ({@link #testWar(String)}, {@code AdminWar.of})
   * @return the path, starting and ending with {@code /}
   * @throws IllegalArgumentException if {@code war} does not end in {@code .war}
   */
  public static String contextPath(URL base, String war) {
    if (!war.endsWith(".war")) {
      throw new IllegalArgumentException("not a WAR's name: " + war);
    }
    String path = base.getPath();
    if (path.isEmpty() || path.equals("/")) {
      path = "/" + war.substring(0, war.length() - ".war".length());
    }
    return path.endsWith("/") ? path : path + "/";
  }

  /**
   * The root URL of a deployed WAR: the injected URL's protocol, host and port, and {@link
   * #contextPath(URL, String)}.
   *
   * @param base the URL Arquillian injected
   * @param war the archive's name
   * @return the root, ending with {@code /}
   * @throws IllegalArgumentException if {@code war} does not end in {@code .war}
   */
  public static URI root(URL base, String war) {
    return URI.create(
        base.getProtocol()
            + "://"
            + base.getHost()
            + ":"
            + base.getPort()
            + contextPath(base, war));
  }
}
