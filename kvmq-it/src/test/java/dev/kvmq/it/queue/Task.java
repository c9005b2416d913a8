package dev.kvmq.it.queue;

/**
 * The payload of the test queues.
 *
 * @param label names the job in the {@link Recorder}
 * @param failAttempts how many first attempts throw, unless the label is healed
 * @param workMs how long the handler works (the {@code slow} queue only)
 */
public record Task(String label, int failAttempts, int workMs) {

  /**
   * @param label the label
   * @return a task that succeeds at once
   */
  public static Task of(String label) {
    return new Task(label, 0, 0);
  }
}
