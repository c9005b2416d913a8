package dev.kvmq.it.postgres;

/**
 * The payload of the test queue {@code notes}.
 *
 * @param label what the test looks for
 */
public record Note(String label) {}
