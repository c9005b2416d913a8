package dev.kvmq.it.held;

/**
 * The payload of the test queue {@code receipts}: the job of one business action.
 *
 * @param id the action's id
 */
public record Receipt(String id) {}
