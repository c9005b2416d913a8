package dev.kvmq.store.postgres;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A node in a JVM of its own, for tests that kill one: start it, read what it prints. */
final class ChildJvm {

  private ChildJvm() {}

  /**
   * Starts {@code main} in a new JVM on this test's class path, its output (stdout and stderr)
   * going to {@code output}.
   */
  static Process start(Path output, List<String> jvmOptions, Class<?> main, String... args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(output.toFile())
        .start();
  }

  /**
   * Polls the child's output for a line starting with {@code prefix}; fails if it dies or {@code
   * wait} passes.
   */
  static String awaitLine(Process child, Path output, String prefix, Duration wait)
      throws IOException {
    long deadline = System.nanoTime() + wait.toNanos();
    Object monitor = new Object();
    while (true) {
      for (String line : Files.readAllLines(output)) {
        if (line.startsWith(prefix)) {
          return line;
        }
      }
      if (!child.isAlive()) {
        throw new AssertionError(
            "the child died (exit " + child.exitValue() + "): " + Files.readString(output));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the child did not print '"
                + prefix
                + "' in "
                + wait
                + ": "
                + Files.readString(output));
      }
      synchronized (monitor) {
        try {
          monitor.wait(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError("interrupted", e);
        }
      }
    }
  }
}
