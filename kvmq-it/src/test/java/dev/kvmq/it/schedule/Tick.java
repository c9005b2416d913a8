package dev.kvmq.it.schedule;

/**
 * The state of a schedule's job in the schedule ITs.
 *
 * @param label what the schedule's annotation or configuration says
 */
public record Tick(String label) {}
