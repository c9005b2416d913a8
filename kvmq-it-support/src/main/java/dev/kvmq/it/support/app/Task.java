package dev.kvmq.it.support.app;

/**
 * The payload of the test queues.
 *
 * @param label names the job in the {@link Journal}
 * @param mode what the handler does: {@code quick} returns at once; {@code cooperative} waits until
 *     it is told to stop; {@code stubborn}, on its first attempt, waits until it is told to stop
 *     (at most 2 minutes) and then works {@code workMs} more, ignoring it, and on a later attempt
 *     returns at once; {@code hold} waits for {@link Gate}
 * @param workMs how long a {@code stubborn} first attempt works on after it is told to stop
 */
public record Task(String label, String mode, int workMs) {}
