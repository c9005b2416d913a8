package dev.kvmq.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A server process that a test starts itself (Payara Micro, or run-demo.sh which becomes Payara
 * Micro), with its output in a log file, and that the test must stop: use it in try-with-resources.
 * {@link #close()} stops it (SIGTERM, then SIGKILL) with every process it started.
 */
public final class ServerProcess implements AutoCloseable {

  private final Process process;
  private final Path log;

  private ServerProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /**
   * Starts a command.
   *
   * @param command the command line
   * @param dir the working directory
   * @param env variables added to this JVM's environment
   * @param log the file that receives stdout and stderr (appended)
   * @return the running process
   * @throws IOException if it cannot start
   */
  public static ServerProcess start(
      List<String> command, Path dir, Map<String, String> env, Path log) throws IOException {
    Files.createDirectories(log.getParent());
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(env);
    return new ServerProcess(builder.start(), log);
  }

  /**
   * @return the process as started
   */
  public ProcessHandle handle() {
    return process.toHandle();
  }

  /**
   * @return true while the process runs
   */
  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * @return the log so far
   * @throws UncheckedIOException if it cannot be read
   */
  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * @return the log file
   */
  public Path logFile() {
    return log;
  }

  /**
   * The end of the log, for a failure message.
   *
   * @param chars the most characters to return
   * @return the log's last {@code chars} characters
   * @throws UncheckedIOException if it cannot be read
   */
  public String logTail(int chars) {
    String text = log();
    return text.substring(Math.max(0, text.length() - chars));
  }

  /**
   * Fails if the process has ended: for probes that wait for it to become ready.
   *
   * @throws AssertionError with the end of the log if it has ended
   */
  public void assertAlive() {
    if (!process.isAlive()) {
      throw new AssertionError(
          "the process ended with exit code "
              + process.exitValue()
              + "; log "
              + log
              + " ends with:\n"
              + logTail(4000));
    }
  }

  /**
   * Kills the process and every process it started with SIGKILL, as a crash or {@code kill -9}
   * would, and waits until all have ended.
   *
   * @throws AssertionError if one is still alive after 30 s
   */
  public void kill() {
    List<ProcessHandle> all = new java.util.ArrayList<>(process.descendants().toList());
    all.add(process.toHandle());
    all.forEach(ProcessHandle::destroyForcibly);
    awaitEnd(all, Duration.ofSeconds(30));
  }

  /**
   * Asks the process to stop (SIGTERM) and waits for it to end.
   *
   * @param timeout the longest wait
   * @return true if it ended in time
   * @throws InterruptedException if interrupted
   */
  public boolean stop(Duration timeout) throws InterruptedException {
    process.destroy();
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Stops the process: SIGTERM, 30 s, then SIGKILL for it and everything it started. */
  @Override
  public void close() {
    List<ProcessHandle> children = process.descendants().toList();
    try {
      if (process.isAlive() && !stop(Duration.ofSeconds(30))) {
        kill();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      kill();
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  private static void awaitEnd(List<ProcessHandle> all, Duration timeout) {
    Wait.until(
        "processes " + all + " to end",
        timeout,
        () -> all.stream().noneMatch(ProcessHandle::isAlive));
  }

  /**
   * A TCP port that was free a moment ago.
   *
   * @return the port
   * @throws UncheckedIOException if no port can be had
   */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
