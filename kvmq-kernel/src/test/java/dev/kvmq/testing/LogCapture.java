package dev.kvmq.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Captures what one java.util.logging logger writes, at every level (the tests' logging.properties
 * keeps dev.kvmq at SEVERE), and nothing reaches its parents meanwhile; {@link #close()} puts the
 * logger back as it was.
 */
public final class LogCapture implements AutoCloseable {

  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Predicate<String> keep;
  private final Logger log;
  private final Level level;
  private final boolean parents;
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          if (keep.test(String.valueOf(r.getMessage()))) {
            records.add(r);
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  /**
   * Starts capturing the logger named {@code name}.
   *
   * @param name the logger's name, such as a class name
   */
  public LogCapture(String name) {
    this(name, message -> true);
  }

  /**
   * Starts capturing the logger named {@code name}, keeping only the records whose message {@code
   * keep} accepts (a long test that counts one kind of line keeps no other).
   *
   * @param name the logger's name, such as a class name
   * @param keep tests a record's message
   */
  public LogCapture(String name, Predicate<String> keep) {
    this.keep = keep;
    this.log = Logger.getLogger(name);
    this.level = log.getLevel();
    this.parents = log.getUseParentHandlers();
    log.setLevel(Level.ALL);
    log.setUseParentHandlers(false);
    log.addHandler(handler);
  }

  /** What was logged so far, oldest first (a live view). */
  public List<LogRecord> records() {
    return records;
  }

  /** The messages logged at {@code threshold} or above, oldest first. */
  public List<String> above(Level threshold) {
    return records.stream()
        .filter(r -> r.getLevel().intValue() >= threshold.intValue())
        .map(LogRecord::getMessage)
        .toList();
  }

  /** The records logged at exactly {@code l}, oldest first. */
  public List<LogRecord> at(Level l) {
    return records.stream().filter(r -> r.getLevel() == l).toList();
  }

  @Override
  public void close() {
    log.removeHandler(handler);
    log.setUseParentHandlers(parents);
    log.setLevel(level);
  }
}
