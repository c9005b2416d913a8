package dev.kvmq.it.dashboard;

/**
 * The state of the escaping test's queue.
 *
 * @param text text that looks like markup; the handler fails with it as its message
 * @param fail whether the handler fails
 */
public record Mark(String text, boolean fail) {}
