package dev.kvmq.it.support;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.jboss.shrinkwrap.api.spec.WebArchive;

import dev.kvmq.it.support.app.ControlServlet;
import dev.kvmq.it.support.app.Gate;
import dev.kvmq.it.support.app.Greeter;
import dev.kvmq.it.support.app.HoldHandler;
import dev.kvmq.it.support.app.Journal;
import dev.kvmq.it.support.app.Observers;
import dev.kvmq.it.support.app.Task;
import dev.kvmq.it.support.app.WorkHandler;

/**
 * Fills the test WARs of every server's ITs.
 *
 * <p>Jars come from files, not from a Maven resolver: {@code dependency:copy-dependencies}
 * puts kvmq and its run-time dependencies into the directory named by the system property
 * {@code kvmq.it.libs} before failsafe runs (see the IT modules' poms), and the test
 * helpers' own jars are found on the test class path. Classes of this module go into a WAR
 * one by one (never this module's jar: it holds a servlet and CDI beans that only some WARs
 * want).
 */
public final class KvmqWars {

    private KvmqWars() {
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
     * Adds the lifecycle test application of {@code dev.kvmq.it.support.app}: the queues
     * {@code work} and {@code hold}, their handlers, the {@link Journal}, the observers of
     * kvmq's events and the remote control at {@code /control}.
     *
     * @param war the archive
     * @return the same archive
     */
    public static WebArchive withLifecycleApp(WebArchive war) {
        return war.addClasses(Task.class, Journal.class, Gate.class, Greeter.class, WorkHandler.class,
                HoldHandler.class, Observers.class, ControlServlet.class, Wait.class)
                .addClass("dev.kvmq.it.support.app.Steps");
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
