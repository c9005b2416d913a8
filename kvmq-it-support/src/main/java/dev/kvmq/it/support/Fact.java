package dev.kvmq.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One line of the test application's journal ({@code dev.kvmq.it.support.app.Journal}), as a test
 * outside the server reads it from the file named by the server's system property {@code
 * kvmq.it.journal}.
 *
 * @param kind what happened ({@code start}, {@code cancel}, {@code end}, {@code completed}, ...)
 * @param queue the queue
 * @param jobId the job
 * @param label the job's label
 * @param attempt the attempt
 * @param token the fencing token
 * @param detail the rest
 */
public record Fact(
    String kind, String queue, String jobId, String label, int attempt, long token, String detail) {

  /**
   * Parses one line.
   *
   * @param line {@code kind|queue|jobId|label|attempt|token|detail}
   * @return the fact
   * @throws IllegalArgumentException if the line has fewer fields or a field is not a number
   */
  public static Fact parse(String line) {
    String[] f = line.split("\\|", 7);
    if (f.length < 7) {
      throw new IllegalArgumentException("not a journal line: " + line);
    }
    return new Fact(f[0], f[1], f[2], f[3], Integer.parseInt(f[4]), Long.parseLong(f[5]), f[6]);
  }

  /**
   * Reads a journal file.
   *
   * @param journal the file; absent means nothing was written yet
   * @return its facts, in order
   * @throws UncheckedIOException if it cannot be read
   */
  public static List<Fact> read(Path journal) {
    try {
      return Files.exists(journal)
          ? Files.readAllLines(journal).stream().map(Fact::parse).toList()
          : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * @param kind a kind of fact
   * @param jobId a job
   * @return whether this fact is of that kind about that job
   */
  public boolean is(String kind, String jobId) {
    return this.kind.equals(kind) && this.jobId.equals(jobId);
  }

  /**
   * @param journal facts
   * @param kind a kind of fact
   * @param jobId a job
   * @return whether one of the facts is of that kind about that job
   */
  public static boolean has(List<Fact> journal, String kind, String jobId) {
    return journal.stream().anyMatch(f -> f.is(kind, jobId));
  }
}
