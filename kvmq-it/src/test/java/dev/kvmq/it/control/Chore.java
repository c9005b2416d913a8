package dev.kvmq.it.control;

/**
 * The payload of the control test queues.
 *
 * @param label names the job in the {@link Chores}
 */
public record Chore(String label) {}
