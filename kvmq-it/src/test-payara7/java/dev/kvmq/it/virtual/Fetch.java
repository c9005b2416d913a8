package dev.kvmq.it.virtual;

/**
 * The payload of the test queues: an IO-bound job, such as an HTTP call.
 *
 * @param label names the job in the {@link ThreadLog}
 */
public record Fetch(String label) {}
