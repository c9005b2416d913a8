package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.Jcmd;
import dev.kvmq.it.support.ServerJvm;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * A WildFly that a test starts itself with {@code bin/standalone.sh} of the unpacked distribution
 * (system property {@code jboss.home}), on its own server base directory (a copy of {@code
 * standalone/configuration}, {@code deployments} and {@code data} under the test's work directory)
 * and a random port offset, with the WAR in the deployment scanner's directory. Undeploy and
 * redeploy go through the scanner's marker files, as an operator would. Use it in
 * try-with-resources: {@link #close()} stops the server (SIGTERM, then SIGKILL for it and its
 * children).
 *
 * <p>The journal file (system property {@code kvmq.it.journal} of the server) is in the work
 * directory, outside the server base, so it outlives undeploys and restarts.
 */
public final class WildFlyServer implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

  private final Path work;
  private final Path base;
  private final List<String> command;
  private final int offset;
  private final HttpClient http = HttpClient.newHttpClient();
  private Process process;
  private int starts;

  private WildFlyServer(Path work, Path base, List<String> command, int offset) {
    this.work = work;
    this.base = base;
    this.command = command;
    this.offset = offset;
  }

  /**
   * Prepares a server base directory with the WAR deployed, and starts the server.
   *
   * @param name names the work directory (under {@code kvmq.it.work})
   * @param war the application
   * @param config edits {@code standalone.xml} (the deployment scanner already scans every 200 ms)
   * @param properties system properties of the server
   * @return the server, with the WAR deployed
   * @throws IOException if the files cannot be written
   * @throws AssertionError if the server or the deployment does not come up in time
   */
  public static WildFlyServer start(
      String name, WebArchive war, UnaryOperator<String> config, Map<String, String> properties)
      throws IOException {
    return start(name, war, config, List.of(), properties);
  }

  /**
   * Prepares a server base directory, applies management commands to its configuration as an
   * administrator would (the CLI's {@code embed-server}, offline), deploys the WAR and starts the
   * server.
   *
   * @param name names the work directory (under {@code kvmq.it.work})
   * @param war the application
   * @param config edits {@code standalone.xml}
   * @param cli {@code jboss-cli} commands, e.g. {@code
   *     /subsystem=undertow/application-security-domain=other:write-attribute(...)}
   * @param properties system properties of the server
   * @return the server, with the WAR deployed
   * @throws IOException if the files cannot be written
   * @throws AssertionError if a command fails, or the server or the deployment does not come up in
   *     time
   */
  public static WildFlyServer start(
      String name,
      WebArchive war,
      UnaryOperator<String> config,
      List<String> cli,
      Map<String, String> properties)
      throws IOException {
    Path home = Path.of(System.getProperty("jboss.home", "target/wildfly")).toAbsolutePath();
    if (!Files.isExecutable(home.resolve("bin/standalone.sh"))) {
      throw new IllegalStateException(
          "No WildFly at " + home + ": run `mvn verify` (dependency:unpack)");
    }
    Path work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve(name + "-" + System.nanoTime()));
    Path base = work.resolve("base");
    copyTree(home.resolve("standalone/configuration"), base.resolve("configuration"));
    Files.createDirectories(base.resolve("deployments"));
    Path xml = base.resolve("configuration/standalone.xml");
    String original = Files.readString(xml);
    String edited =
        config.apply(original.replace("scan-interval=\"5000\"", "scan-interval=\"200\""));
    if (edited.equals(original)) {
      throw new IllegalStateException("standalone.xml has no scan-interval=\"5000\" to shorten");
    }
    Files.writeString(xml, edited);
    if (!cli.isEmpty()) {
      runCli(home, base, work, cli);
    }
    war.as(ZipExporter.class)
        .exportTo(base.resolve("deployments").resolve(Wars.NAME).toFile(), true);

    int offset = freeOffset();
    // the server's temporary directory in its work directory: kvmq refuses a default data
    // directory under java.io.tmpdir (KVMQ-006), which the base is when the build itself runs
    // under /tmp (a clone there)
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    List<String> command =
        new ArrayList<>(
            List.of(
                home.resolve("bin/standalone.sh").toString(),
                "-Djboss.server.base.dir=" + base,
                "-Djboss.socket.binding.port-offset=" + offset,
                "-Djava.io.tmpdir=" + tmp,
                "-Dkvmq.it.journal=" + work.resolve("journal.txt")));
    properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
    WildFlyServer server = new WildFlyServer(work, base, command, offset);
    try {
      server.startAgain();
    } catch (IOException | RuntimeException | Error e) {
      server.close(); // the caller has no server to close yet
      throw e;
    }
    return server;
  }

  /**
   * Starts the server (again, after {@link #stop()}), on the same base and data directory, and
   * waits until the WAR is deployed.
   *
   * @throws IOException if it cannot start
   * @throws AssertionError if the server or the deployment does not come up in time
   */
  public void startAgain() throws IOException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("already running");
    }
    starts++;
    Files.deleteIfExists(marker("deployed"));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(work.toFile())
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(
                    work.resolve("server-" + starts + ".log").toFile()));
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    // The ITs' server JVM options, appended to the default heap sizing of bin/standalone.conf
    // (which uses the variable only to build its default JAVA_OPTS, and keeps the rest of them;
    // setting JAVA_OPTS itself would replace them all).
    builder
        .environment()
        .put("JBOSS_JAVA_SIZING", ("-Xms64m -Xmx512m " + ServerJvm.line()).strip());
    // standalone.sh passes SIGTERM on to the server's JVM and waits for it only in this mode.
    builder.environment().put("LAUNCH_JBOSS_IN_BACKGROUND", "true");
    process = builder.start();
    awaitMarker("deployed", START_TIMEOUT);
  }

  /**
   * Stops the server as an operator would (SIGTERM) and waits for it to end.
   *
   * @throws AssertionError if it is still running after 60 s
   * @throws InterruptedException if interrupted
   */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      throw new AssertionError("WildFly still running 60 s after SIGTERM; see " + log());
    }
  }

  /**
   * Undeploys the WAR (removes its {@code .deployed} marker) and waits until the scanner reports it
   * undeployed: by its {@code .undeployed} marker, or by the server's log line saying it undeployed
   * the WAR, whichever comes first (once, in CI, the marker had not come a minute after the
   * removal; that run's log was not kept, so whether the undeploy itself hung is not known: a
   * timeout now reports the server's threads).
   *
   * @param timeout the longest wait
   * @throws IOException if the marker cannot be removed or the log read
   * @throws AssertionError if it takes longer
   */
  public void undeploy(Duration timeout) throws IOException {
    long before = undeployedLines();
    Files.deleteIfExists(marker("undeployed"));
    Files.delete(marker("deployed"));
    awaitMarker("undeployed", timeout, () -> undeployedLines() > before);
  }

  /** The server log's lines saying the WAR was undeployed. */
  private long undeployedLines() throws IOException {
    String line = "WFLYSRV0009: Undeployed \"" + Wars.NAME + "\"";
    try (Stream<String> lines = Files.lines(log())) {
      return lines.filter(l -> l.contains(line)).count();
    }
  }

  /**
   * Deploys the WAR again ({@code .dodeploy} marker) and waits until it is deployed.
   *
   * @throws IOException if the marker cannot be written
   * @throws AssertionError if it takes longer than 2 min
   */
  public void redeploy() throws IOException {
    Files.deleteIfExists(marker("undeployed"));
    Files.writeString(marker("dodeploy"), "");
    awaitMarker("deployed", START_TIMEOUT);
  }

  /**
   * Calls the test WAR's {@code ControlServlet}.
   *
   * @param query the query string, e.g. {@code op=push&label=a&mode=quick}
   * @return the answer's body
   * @throws AssertionError if the answer is not 200
   */
  public String control(String query) {
    try {
      HttpRequest request =
          HttpRequest.newBuilder(
                  URI.create("http://127.0.0.1:" + (8080 + offset) + "/kvmq-it/control?" + query))
              .timeout(Duration.ofSeconds(30))
              .GET()
              .build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new AssertionError(
            "control?" + query + " answered " + response.statusCode() + ": " + response.body());
      }
      return response.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * Runs a diagnostic command of the JDK's {@code jcmd} in the server's JVM (the java process that
   * {@code standalone.sh} started), e.g. {@code GC.run} or {@code GC.class_histogram}.
   *
   * @param command the command and its arguments
   * @return what it printed
   * @throws AssertionError if the server's JVM is not found, or the command fails (see {@link
   *     Jcmd#run})
   */
  public String jcmd(String... command) {
    ProcessHandle jvm =
        process
            .descendants()
            .filter(h -> h.info().command().map(c -> c.endsWith("/java")).orElse(false))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no java process under " + process.pid()));
    return Jcmd.run(jvm.pid(), command);
  }

  /**
   * @return the journal's lines so far (see {@code dev.kvmq.it.support.app.Journal})
   */
  public List<Fact> journal() {
    return Fact.read(work.resolve("journal.txt"));
  }

  /**
   * @return the log of the latest start
   */
  public Path log() {
    return work.resolve("server-" + starts + ".log");
  }

  /** Stops the server: SIGTERM, 60 s, then SIGKILL for it and every process it started. */
  @Override
  public void close() {
    if (process == null) {
      return;
    }
    List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
    all.add(process.toHandle());
    try {
      process.destroy();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        all.forEach(ProcessHandle::destroyForcibly);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      all.forEach(ProcessHandle::destroyForcibly);
    }
    all.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    Wait.until(
        "WildFly's processes to end",
        Duration.ofSeconds(30),
        () -> all.stream().noneMatch(ProcessHandle::isAlive));
  }

  private Path marker(String suffix) {
    return base.resolve("deployments").resolve(Wars.NAME + "." + suffix);
  }

  private void awaitMarker(String suffix, Duration timeout) {
    awaitMarker(suffix, timeout, () -> false);
  }

  /** Waits for the marker, or until {@code orElse} says what it marks has happened. */
  private void awaitMarker(String suffix, Duration timeout, Done orElse) {
    try {
      Wait.until(
          Wars.NAME + "." + suffix + " (log: " + log() + ")",
          timeout,
          () -> {
            if (Files.exists(marker("failed"))) {
              throw new AssertionError("deployment failed: " + Files.readString(marker("failed")));
            }
            if (!process.isAlive()) {
              throw new AssertionError(
                  "WildFly ended with exit code " + process.exitValue() + "; see " + log());
            }
            return Files.exists(marker(suffix)) || orElse.done();
          },
          Boolean.TRUE::equals);
    } catch (AssertionError e) {
      if (!process.isAlive()) {
        throw e;
      }
      throw new AssertionError(e.getMessage() + stuck(), e);
    }
  }

  /** A condition whose test may read a file. */
  @FunctionalInterface
  private interface Done {
    boolean done() throws IOException;
  }

  /**
   * What a server that did not (un)deploy in time was doing, for the failure message: its full
   * thread dump goes to a file beside the log; the message has the markers in the deployments
   * directory, the stacks of the threads in kvmq's code, in a deployment's start or stop, or in the
   * deployment scanner, and the log's last lines.
   */
  private String stuck() {
    StringBuilder s = new StringBuilder();
    try (Stream<Path> files = Files.list(base.resolve("deployments"))) {
      s.append("\nmarkers: ").append(files.map(f -> f.getFileName().toString()).sorted().toList());
    } catch (IOException e) {
      s.append("\nmarkers: (").append(e).append(')');
    }
    try {
      String dump = jcmd("Thread.print");
      Path file = log().resolveSibling(log().getFileName() + ".threads");
      Files.writeString(file, dump);
      List<String> busy =
          Stream.of(dump.split("\\n\\s*\\n"))
              .filter(
                  t ->
                      t.contains("at dev.kvmq")
                          || t.contains("DeploymentUnitPhaseService.")
                          || t.contains("FileSystemDeploymentService"))
              .toList();
      s.append("\nthread dump: ").append(file);
      s.append("\nthreads in kvmq, a deployment's start or stop, or the deployment scanner:\n");
      s.append(busy.isEmpty() ? "(none)" : String.join("\n\n", busy));
    } catch (IOException | RuntimeException | AssertionError e) {
      s.append("\nno thread dump: ").append(e);
    }
    try {
      List<String> lines = Files.readAllLines(log());
      s.append("\nthe log's last lines:\n")
          .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
    } catch (IOException e) {
      s.append("\nno log: ").append(e);
    }
    return s.toString();
  }

  /**
   * Runs {@code jboss-cli.sh} with an embedded, offline server on {@code base}'s {@code
   * standalone.xml}.
   */
  private static void runCli(Path home, Path base, Path work, List<String> commands)
      throws IOException {
    Path script = work.resolve("configure.cli");
    List<String> lines = new ArrayList<>();
    lines.add("embed-server --server-config=standalone.xml --std-out=echo");
    lines.addAll(commands);
    lines.add("stop-embedded-server");
    Files.write(script, lines);
    Path log = work.resolve("cli.log");
    ProcessBuilder builder =
        new ProcessBuilder(
                home.resolve("bin/jboss-cli.sh").toString(),
                "-Djboss.server.base.dir=" + base,
                "--file=" + script)
            .directory(work.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    // The ITs' server JVM options, appended to the default heap sizing of bin/standalone.conf
    // (which uses the variable only to build its default JAVA_OPTS, and keeps the rest of them;
    // setting JAVA_OPTS itself would replace them all).
    builder
        .environment()
        .put("JBOSS_JAVA_SIZING", ("-Xms64m -Xmx512m " + ServerJvm.line()).strip());
    Process cliProcess = builder.start();
    try {
      if (!cliProcess.waitFor(2, TimeUnit.MINUTES)) {
        cliProcess.destroyForcibly();
        throw new AssertionError("jboss-cli.sh took over 2 min; see " + log);
      }
    } catch (InterruptedException e) {
      cliProcess.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
    if (cliProcess.exitValue() != 0) {
      throw new AssertionError(
          "jboss-cli.sh exited with " + cliProcess.exitValue() + ":\n" + Files.readString(log));
    }
  }

  /**
   * @return the root of the deployed WAR, e.g. {@code http://127.0.0.1:29080/kvmq-it}
   */
  public String url() {
    return "http://127.0.0.1:" + (8080 + offset) + "/kvmq-it";
  }

  /**
   * @return the log of the latest start so far
   * @throws UncheckedIOException if it cannot be read
   */
  public String logText() {
    try {
      return Files.readString(log());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A port offset that moves WildFly's usual ports onto ports that are free now. */
  private static int freeOffset() {
    for (int i = 0; i < 50; i++) {
      int offset = ServerProcess.freePort() - 8080;
      if (offset > 0
          && 9993 + offset < 65536
          && Stream.of(8443, 8009, 9990, 9993, 4712, 4713).allMatch(p -> isFree(p + offset))) {
        return offset;
      }
    }
    throw new IllegalStateException("no free port offset found");
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
