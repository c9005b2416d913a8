package dev.kvmq.it.support.postgres;

/**
 * The payload of the test queue {@code orders}: the job that belongs to one business row.
 *
 * @param id the order's id, the primary key of its row in {@code orders}
 */
public record PlacedOrder(String id) {}
