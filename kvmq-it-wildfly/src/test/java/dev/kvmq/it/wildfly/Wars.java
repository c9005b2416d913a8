package dev.kvmq.it.wildfly;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

import dev.kvmq.it.wildfly.app.ControlServlet;
import dev.kvmq.it.wildfly.app.Gate;
import dev.kvmq.it.wildfly.app.Greeter;
import dev.kvmq.it.wildfly.app.HoldHandler;
import dev.kvmq.it.wildfly.app.Journal;
import dev.kvmq.it.wildfly.app.Observers;
import dev.kvmq.it.wildfly.app.Task;
import dev.kvmq.it.wildfly.app.WorkHandler;

/**
 * Builds the test WAR: the classes of {@code dev.kvmq.it.wildfly.app} and, in
 * {@code WEB-INF/lib}, kvmq and what it needs at run time, from the directory named by the
 * system property {@code kvmq.it.libs} (filled by {@code dependency:copy-dependencies}, see
 * the pom), as a user's WAR build would.
 */
public final class Wars {

    /** The WAR's name; its context root is {@code kvmq-it}. */
    public static final String NAME = "kvmq-it.war";

    private Wars() {
    }

    /**
     * @return the test application
     * @throws IllegalStateException if the jars were not copied (run through Maven)
     */
    public static WebArchive app() {
        WebArchive war = ShrinkWrap.create(WebArchive.class, NAME)
                .addClasses(Task.class, Journal.class, Gate.class, Greeter.class, WorkHandler.class, HoldHandler.class,
                        Observers.class, ControlServlet.class)
                .addClass("dev.kvmq.it.wildfly.app.Steps");
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
}
