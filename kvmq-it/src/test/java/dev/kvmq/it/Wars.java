package dev.kvmq.it;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.assertj.core.api.Assertions;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Builds the test WARs.
 *
 * <p>Jars come from files, not from a Maven resolver: {@code dependency:copy-dependencies}
 * puts kvmq and its run-time dependencies into the directory named by the system property
 * {@code kvmq.it.libs} before failsafe runs (see the pom), and the test helpers' own jars
 * are found on the test class path.
 */
public final class Wars {

    private Wars() {
    }

    /**
     * A WAR for tests that run inside the server: it carries the test helpers of this
     * package and AssertJ.
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
     * Adds kvmq and everything it needs at run time to {@code WEB-INF/lib}, as a user's WAR
     * build would.
     *
     * @param war the archive
     * @return the same archive
     * @throws IllegalStateException if the jars were not copied (run through Maven)
     */
    public static WebArchive withKvmq(WebArchive war) {
        Path libs = Path.of(System.getProperty("kvmq.it.libs", "target/it-libs"));
        try (Stream<Path> jars = Files.list(libs)) {
            File[] files = jars.filter(p -> p.toString().endsWith(".jar")).map(Path::toFile).toArray(File[]::new);
            if (files.length == 0) {
                throw new IllegalStateException("No jars in " + libs + ": run `mvn verify` (copy-dependencies)");
            }
            return war.addAsLibraries(files);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot list " + libs + ": run `mvn verify` (copy-dependencies)", e);
        }
    }

    /**
     * @param type a class loaded from a jar
     * @return that jar
     */
    public static File jarOf(Class<?> type) {
        try {
            return new File(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("No jar for " + type, e);
        }
    }
}
