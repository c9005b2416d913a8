package dev.kvmq.it.wildfly;

/**
 * The state of {@link TickHandler}'s scheduled jobs.
 *
 * @param label what the schedule's annotation says
 */
public record Tick(String label) {}
