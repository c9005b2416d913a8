package dev.kvmq.it.support.app;

/**
 * The payload of the test queues.
 *
 * @param label names the job in the {@link Journal}
 * @param mode what the handler does: {@code quick} returns at once; {@code cooperative} waits until
 *     it is told to stop; {@code stubborn} works {@code workMs} on its first attempt whatever it is
 *     told; {@code hold} waits for {@link Gate}
 * @param workMs how long a {@code stubborn} first attempt works
 */
public record Task(String label, String mode, int workMs) {}
