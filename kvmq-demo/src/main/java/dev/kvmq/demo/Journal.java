package dev.kvmq.demo;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The demo's record of finished work: one line {@code <label> <jobId> <attempt>} per completed job,
 * appended to {@code kvmq.demo.journal} (run-demo.sh sets it to {@code $KVMQ_DATA_DIR/journal.log})
 * and forced to disk before the handler returns, so that a line in the journal means the work is
 * done even if the server is killed right after.
 */
@ApplicationScoped
public class Journal {

  /** Made by CDI. */
  public Journal() {}

  private FileChannel channel;

  /** Opens (or creates) the journal for appending. */
  @PostConstruct
  void open() {
    Path path =
        Path.of(
                ConfigProvider.getConfig()
                    .getOptionalValue("kvmq.demo.journal", String.class)
                    .orElse("kvmq-demo-journal.log"))
            .toAbsolutePath();
    try {
      Files.createDirectories(path.getParent());
      channel =
          FileChannel.open(
              path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the journal " + path, e);
    }
  }

  /**
   * Appends one line and forces it to disk.
   *
   * @param line the line, without its newline
   * @throws IOException if the write or the force fails
   */
  public synchronized void append(String line) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
    while (bytes.hasRemaining()) {
      channel.write(bytes);
    }
    channel.force(false);
  }

  /** Closes the journal. */
  @PreDestroy
  void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // nothing was pending: every append was forced
    }
  }
}
