package dev.kvmq.it.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The data directory on Payara Micro 6, as a new user runs a WAR: {@code java -jar payara-micro.jar
 * --deploy app.war}, no configuration.
 *
 * <ol>
 *   <li>Without {@code --rootdir} Payara Micro's instance directory is a new temporary directory at
 *       every start, so kvmq's default data directory under it would lose every job at a restart:
 *       the deployment fails, and the log says why (KVMQ-006) and what to set.
 *   <li>With {@code -Dkvmq.data-dir=DIR} and a preboot command file that binds HTTP to 127.0.0.1,
 *       as docs/getting-started.md says (no {@code --rootdir}: with {@code --deploy} it deploys the
 *       previous copy of the WAR first at every start), the WAR deploys, answers on 127.0.0.1 and
 *       not on the machine's other address; a job delayed by an hour is still there after a
 *       restart. Jobs pushed to a queue that no handler of the WAR takes give one WARNING line, not
 *       one per job, and after the restart one more, at start, since the queue holds jobs.
 *   <li>A group whose limit is 0 in the first start ({@code kvmq.queue.later.group.frozen.limit=0})
 *       keeps its job waiting; the second start, without that limit and with no push of the group,
 *       runs it: the worker admits a group's parked jobs at its start (docs/flow-control.md).
 * </ol>
 *
 * <p>Payara Micro is started as a process: Arquillian's adapter reports a failed deployment without
 * the server's reasons.
 */
@Tag("payara")
class DataDirectoryIT {

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aTemporaryDefaultIsRefusedAndAKvmqDataDirKeepsTheJobs() throws Exception {
    Path work = Payaras.work("datadir");
    Path war = work.resolve("billing.war");
    Wars.withKvmq(Wars.testWar("billing.war"))
        .addClasses(Bill.class, LaterHandler.class, DurableServlet.class)
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);

    // 1. No --rootdir, no kvmq.data-dir.
    int port = ServerProcess.freePort();
    try (ServerProcess payara = Payaras.start(work, war, port, Map.of(), "temporary.log")) {
      String log = payara.log();
      assertThat(log).contains("Exception while loading the app");
      String problem =
          log.lines()
              .filter(l -> l.contains("KVMQ-006"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no KVMQ-006 in " + payara.logFile()));
      assertThat(problem).contains("java.io.tmpdir", "kvmq.data-dir", "--rootdir");
      assertThat(
              http.send(request(port, "op=status&id=x"), HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .as("the application is not deployed")
          .isEqualTo(404);
    }

    // 2. kvmq.data-dir (and 127.0.0.1 only, by a preboot command file, as getting-started.md
    // says): deploys, keeps a delayed job over a restart.
    Map<String, String> dataDir = Map.of("kvmq.data-dir", work.resolve("kvmq-data").toString());
    Map<String, String> frozen = new java.util.HashMap<>(dataDir);
    frozen.put("kvmq.queue.later.group.frozen.limit", "0");
    Path preboot =
        Files.writeString(
            work.resolve("preboot.txt"),
            "set configs.config.server-config."
                + "network-config.network-listeners.network-listener.http-listener.address=127.0.0.1\n");
    List<String> options = List.of("--prebootcommandfile", preboot.toString());
    String id;
    String frozenId;
    try (ServerProcess payara = Payaras.start(work, war, port, frozen, options, "datadir-1.log")) {
      id = awaitAnswer(payara, port, "op=delay");
      Optional<InetAddress> other = nonLoopbackAddress();
      if (other.isPresent()) {
        assertThatThrownBy(
                () ->
                    http.send(
                        HttpRequest.newBuilder(
                                URI.create(
                                    "http://"
                                        + other.get().getHostAddress()
                                        + ":"
                                        + port
                                        + "/billing/durable?op=status&id=x"))
                            .timeout(Duration.ofSeconds(10))
                            .GET()
                            .build(),
                        HttpResponse.BodyHandlers.ofString()))
            .as("nothing listens on %s", other.get())
            .isInstanceOf(java.io.IOException.class);
      }
      assertThat(get(port, "op=status&id=" + id)).isEqualTo("DELAYED");
      frozenId = get(port, "op=frozen");
      assertThat(get(port, "op=status&id=" + frozenId)).as("under limit 0").isEqualTo("WAITING");
      get(port, "op=unhandled");
      get(port, "op=unhandled");
      assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
      List<String> warnings =
          payara.log().lines().filter(l -> l.contains("\"nobody-handles-this\" has jobs")).toList();
      assertThat(warnings).as("one line for the queue, not one per job").hasSize(1);
    }
    try (ServerProcess payara = Payaras.start(work, war, port, dataDir, options, "datadir-2.log")) {
      String status = awaitAnswer(payara, port, "op=status&id=" + id);
      assertThat(status).as("the delayed job after a restart").isEqualTo("DELAYED");
      Wait.until(
          "the job of the group whose limit of 0 is gone to run",
          Duration.ofMinutes(1),
          () -> {
            payara.assertAlive();
            return get(port, "op=status&id=" + frozenId);
          },
          s -> s.equals("none") || s.equals("COMPLETED"));
      assertThat(payara.log().lines().filter(l -> l.contains("\"nobody-handles-this\" has jobs")))
          .as("the waiting jobs of a queue without handler, found at start")
          .hasSize(1);
    }
  }

  /**
   * Polls the servlet until it answers, for 2 minutes.
   *
   * @return its first answer
   * @throws AssertionError if it did not answer, with the stacks of the threads in kvmq's code and
   *     the end of Payara's log: once in a CI run, a Payara Micro 6 that had logged "ready in" did
   *     not answer for 2 minutes, and why was not seen
   */
  private String awaitAnswer(ServerProcess payara, int port, String query) {
    try {
      return Wait.until(
          "the application to answer ?" + query,
          Duration.ofMinutes(2),
          () -> {
            payara.assertAlive();
            return get(port, query);
          },
          s -> !s.isEmpty());
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage()
              + "\nthreads in kvmq's code:\n"
              + Payaras.threadsIn(payara, "dev.kvmq")
              + "\n"
              + payara.logFile()
              + " ends with:\n"
              + payara.logTail(6000),
          e);
    }
  }

  /** An IPv4 address of this machine that is not a loopback one, if it has one. */
  private static Optional<InetAddress> nonLoopbackAddress() throws Exception {
    return NetworkInterface.networkInterfaces()
        .filter(
            n -> {
              try {
                return n.isUp() && !n.isLoopback();
              } catch (java.net.SocketException e) {
                return false;
              }
            })
        .flatMap(NetworkInterface::inetAddresses)
        .filter(a -> a instanceof Inet4Address)
        .findFirst();
  }

  private static HttpRequest request(int port, String query) {
    return HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/billing/durable?" + query))
        .timeout(Duration.ofSeconds(30))
        .GET()
        .build();
  }

  private String get(int port, String query) throws Exception {
    HttpResponse<String> r = http.send(request(port, query), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(
          "HTTP " + r.statusCode() + ": " + r.body()); // "not yet" for Wait
    }
    return r.body();
  }
}
