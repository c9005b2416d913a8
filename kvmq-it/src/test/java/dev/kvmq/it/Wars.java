package dev.kvmq.it;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import java.io.File;
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
}
