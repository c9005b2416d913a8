package dev.kvmq.it;

import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts Payara Micro as a process, for the ITs that restart servers, run two at once, or read why
 * a deployment failed: Arquillian's adapter runs one server per class and reports a failed
 * deployment without the server's reasons.
 */
public final class Payaras {

  private Payaras() {}

  /**
   * A new work directory under {@code kvmq.it.work}.
   *
   * @param name the start of its name
   * @return the directory, made
   * @throws IOException if it can't be made
   */
  public static Path work(String name) throws IOException {
    return Files.createDirectories(
        Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
            .toAbsolutePath()
            .resolve(name + "-" + System.nanoTime()));
  }

  /**
   * Starts Payara Micro with a WAR and waits until it has finished starting (deployed or not).
   *
   * @param work the work directory (its {@code tmp} is the JVM's temporary directory)
   * @param war the WAR
   * @param port the HTTP port
   * @param properties system properties of the server's JVM
   * @param log the log file's name in {@code work}
   * @return the running server
   * @throws IOException if the process can't be started
   */
  public static ServerProcess start(
      Path work, Path war, int port, Map<String, String> properties, String log)
      throws IOException {
    return start(work, war, port, properties, List.of(), log);
  }

  /**
   * Starts Payara Micro with a WAR and options of its own, and waits until it has finished starting
   * (deployed or not).
   *
   * @param work the work directory (its {@code tmp} is the JVM's temporary directory)
   * @param war the WAR, or an exploded WAR's directory
   * @param port the HTTP port
   * @param properties system properties of the server's JVM
   * @param options Payara Micro's options after the usual ones, e.g. {@code --rootdir DIR}
   * @param log the log file's name in {@code work}
   * @return the running server
   * @throws IOException if the process can't be started
   */
  public static ServerProcess start(
      Path work,
      Path war,
      int port,
      Map<String, String> properties,
      List<String> options,
      String log)
      throws IOException {
    Path tmp = Files.createDirectories(work.resolve("tmp-" + log));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Djava.io.tmpdir=" + tmp);
    properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
    command.addAll(
        List.of(
            "-jar",
            System.getProperty("payara.microJar"),
            "--deploy",
            war.toString(),
            "--port",
            Integer.toString(port),
            "--nohazelcast"));
    command.addAll(options);
    ServerProcess payara = ServerProcess.start(command, work, Map.of(), work.resolve(log));
    try {
      Wait.until(
          "Payara Micro to finish starting (" + payara.logFile() + ")",
          Duration.ofMinutes(2),
          () -> {
            payara.assertAlive();
            return payara.log();
          },
          text -> text.matches("(?s).*\\(build \\d+\\) ready in.*"));
    } catch (RuntimeException | AssertionError e) {
      payara.close();
      throw e;
    }
    return payara;
  }
}
