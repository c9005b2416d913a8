package dev.kvmq.it.support.app;

import dev.kvmq.Job;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the handlers and observers of the test WAR saw: one line per fact, {@code
 * kind|queue|jobId|label|attempt|token|detail}, kept in memory and, if the system property {@code
 * kvmq.it.journal} names a file, appended to it so that a test outside the server can read it
 * across undeploys and restarts.
 *
 * <p>Static, not a CDI bean: handlers still running while the application is undeployed write here
 * after the application's contexts are gone.
 */
public final class Journal {

  private static final List<String> LINES = new CopyOnWriteArrayList<>();

  private Journal() {}

  /**
   * Records a fact about a job.
   *
   * @param kind {@code start}, {@code cancel}, {@code end}, {@code completed}, {@code failed},
   *     {@code lease-lost}, {@code takeover}
   * @param job the job
   * @param attempt the attempt
   * @param token the fencing token
   * @param detail anything else, without {@code |} or line breaks
   * @throws UncheckedIOException if the journal file cannot be written
   */
  public static void add(String kind, Job<?> job, int attempt, long token, String detail) {
    String label = job.state() instanceof Task t ? t.label() : String.valueOf(job.state());
    String line =
        String.join(
            "|",
            kind,
            job.queue(),
            job.id(),
            label,
            Integer.toString(attempt),
            Long.toString(token),
            detail);
    LINES.add(line);
    String file = System.getProperty("kvmq.it.journal");
    if (file != null) {
      synchronized (Journal.class) {
        try {
          Files.writeString(
              Path.of(file),
              line + "\n",
              StandardCharsets.UTF_8,
              StandardOpenOption.CREATE,
              StandardOpenOption.APPEND,
              StandardOpenOption.WRITE);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }

  /**
   * @return every line so far, in order (this deployment's, in memory)
   */
  public static List<String> lines() {
    return List.copyOf(LINES);
  }
}
