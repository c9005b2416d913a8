package dev.kvmq.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the JDK's {@code jcmd} against a server's JVM: thread dumps, heap histograms, GC. */
public final class Jcmd {

  private Jcmd() {}

  /**
   * Runs a diagnostic command in a JVM, e.g. {@code Thread.print}, {@code GC.run} or {@code
   * GC.class_histogram}.
   *
   * @param pid the JVM's process id
   * @param command the command and its arguments
   * @return what it printed
   * @throws UncheckedIOException if jcmd cannot be started
   * @throws AssertionError if it fails, takes over 60 s, or the wait is interrupted
   */
  public static String run(long pid, String... command) {
    List<String> line = new ArrayList<>();
    line.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
    line.add(Long.toString(pid));
    line.addAll(List.of(command));
    try {
      Process p = new ProcessBuilder(line).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(line + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
