package dev.kvmq.it.security;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.SecurityChecks;
import dev.kvmq.it.support.ServerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Payara Micro as a process with kvmq-it-support's secured test application ({@link
 * KvmqWars#withSecureApp}) at {@code /secure}, on all interfaces, nothing configured in the server.
 * Close it to stop the server.
 */
public final class SecurePayara implements AutoCloseable {

  private final ServerProcess process;
  private final int port;
  private final SecurityChecks checks;

  private SecurePayara(ServerProcess process, int port) {
    this.process = process;
    this.port = port;
    this.checks = new SecurityChecks(url(), process::log);
  }

  /**
   * Starts the server and waits until the application answers.
   *
   * @param name names the work directory (under {@code kvmq.it.work})
   * @return the running server
   * @throws IOException if the files cannot be written or the server cannot start
   * @throws AssertionError if the application does not answer within 3 min
   */
  public static SecurePayara start(String name) throws IOException {
    Path work = Payaras.work(name);
    Path war = work.resolve("secure.war");
    WebArchive archive =
        KvmqWars.withKvmq(
            KvmqWars.withSecureApp(ShrinkWrap.create(WebArchive.class, "secure.war")));
    archive.as(ZipExporter.class).exportTo(war.toFile(), true);
    int port = ServerProcess.freePort();
    SecurePayara payara =
        new SecurePayara(
            Payaras.start(
                work,
                war,
                port,
                Map.of("kvmq.data-dir", work.resolve("data").toString()),
                "payara.log"),
            port);
    try {
      payara.checks.awaitUp(Duration.ofMinutes(3), payara.process::assertAlive);
    } catch (RuntimeException | Error e) {
      payara.close();
      throw e;
    }
    return payara;
  }

  /**
   * @return the application's root, {@code http://127.0.0.1:PORT/secure}
   */
  public String url() {
    return "http://127.0.0.1:" + port + "/secure";
  }

  /**
   * @return the shared security checks, against this server
   */
  public SecurityChecks checks() {
    return checks;
  }

  /** Stops the server. */
  @Override
  public void close() {
    process.close();
  }
}
