package dev.kvmq.it;

import dev.kvmq.it.support.Jcmd;
import dev.kvmq.it.support.ServerJvm;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Starts Payara Micro as a process, for the ITs that restart servers, run two at once, or read why
 * a deployment failed: Arquillian's adapter runs one server per class and reports a failed
 * deployment without the server's reasons.
 */
public final class Payaras {

  /** What Payara Micro logs when its boot is done and deploying begins. */
  private static final String BOOTED = ") startup time : ";

  /** The start of Payara's error when its JACC policy configuration factory cannot be made. */
  private static final String JACC_FACTORY_FAILED = "PolicyConfigurationFactory : cannot ";

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
   * @throws AssertionError if it did not finish starting in 2 minutes or ended, or failed in its
   *     boot twice
   */
  public static ServerProcess start(
      Path work, Path war, int port, Map<String, String> properties, String log)
      throws IOException {
    return start(work, war, port, properties, List.of(), log);
  }

  /**
   * Starts Payara Micro with a WAR and options of its own, and waits until it has finished starting
   * (deployed or not). If Payara Micro fails in its own boot, before the WAR's code runs, it is
   * stopped and started once more (see {@link #startAndAwait}); its first log is kept as {@code
   * LOG.failed-boot}, a hang's thread dump as {@code LOG.failed-boot.threads}.
   *
   * @param work the work directory (its {@code tmp} is the JVM's temporary directory)
   * @param war the WAR, or an exploded WAR's directory
   * @param port the HTTP port
   * @param properties system properties of the server's JVM
   * @param options Payara Micro's options after the usual ones, e.g. {@code --rootdir DIR}
   * @param log the log file's name in {@code work}
   * @return the running server
   * @throws IOException if the process can't be started
   * @throws AssertionError if it did not finish starting in 2 minutes or ended, or failed in its
   *     boot twice
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
    command.addAll(ServerJvm.options());
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
    Path logFile = work.resolve(log);
    ServerProcess payara = startAndAwait(command, work, logFile);
    if (payara != null) {
      return payara;
    }
    Path failed = logFile.resolveSibling(log + ".failed-boot");
    Files.move(logFile, failed);
    Path threads = logFile.resolveSibling(log + ".threads");
    if (Files.exists(threads)) {
      Files.move(threads, failed.resolveSibling(log + ".failed-boot.threads"));
    }
    System.err.printf(
        "Payara Micro failed in its own boot, before %s ran (log: %s); starting it again%n",
        war, failed);
    payara = startAndAwait(command, work, logFile);
    if (payara == null) {
      throw new AssertionError(
          "Payara Micro failed in its own boot twice, before "
              + war
              + " ran; logs: "
              + failed
              + ", "
              + logFile);
    }
    return payara;
  }

  /**
   * Starts the server and waits until it has finished starting.
   *
   * <p>Payara Micro 7.2026.11 sometimes fails in its own setup of JACC, with no change in kvmq: it
   * hung after Grizzly started, before it logged its startup time and began deploying, in one of 4
   * fresh-clone CI runs in December 2026; in another it could not instantiate its JACC {@code
   * PolicyConfigurationFactory} while preparing the WAR's security policy, which comes before the
   * WAR's code runs. Such a start returns null, so the caller may start it again once; the hang's
   * thread dump is kept beside the log. Any other failure, deployment failures included, is the
   * test's to see.
   *
   * @return the running server, or null if it failed in Payara's own boot (it is stopped then)
   */
  private static ServerProcess startAndAwait(List<String> command, Path work, Path log)
      throws IOException {
    ServerProcess payara = ServerProcess.start(command, work, Map.of(), log);
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
      String text = payara.log();
      boolean bootHang = payara.isAlive() && !text.contains(BOOTED);
      if (bootHang) {
        threadDump(payara, log.resolveSibling(log.getFileName() + ".threads"));
      }
      payara.close();
      if (bootHang) {
        return null;
      }
      throw e;
    }
    if (payara.log().contains(JACC_FACTORY_FAILED)) {
      payara.close();
      return null;
    }
    return payara;
  }

  /**
   * The stacks of the server's threads that are in code of a package, for a failure message.
   *
   * @param payara the running server
   * @param frame a package prefix, e.g. {@code dev.kvmq}
   * @return those threads' stacks, or a line saying why there are none
   */
  public static String threadsIn(ServerProcess payara, String frame) {
    try {
      String dump = Jcmd.run(payara.handle().pid(), "Thread.print");
      String threads =
          Arrays.stream(dump.split("\\n\\s*\\n"))
              .filter(block -> block.contains("at " + frame))
              .collect(Collectors.joining("\n\n"));
      return threads.isEmpty() ? "(no thread in " + frame + ")" : threads;
    } catch (RuntimeException | AssertionError e) {
      return "(no thread dump: " + e + ")";
    }
  }

  private static void threadDump(ServerProcess payara, Path file) {
    try {
      Files.writeString(file, Jcmd.run(payara.handle().pid(), "Thread.print"));
    } catch (IOException | RuntimeException | AssertionError e) {
      System.err.println("no thread dump of the stuck Payara Micro: " + e);
    }
  }
}
