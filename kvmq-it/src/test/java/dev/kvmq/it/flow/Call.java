package dev.kvmq.it.flow;

/**
 * The payload of the flow-control test queues.
 *
 * @param label names the job in the {@link Gates}
 */
public record Call(String label) {}
