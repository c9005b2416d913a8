package dev.kvmq.it.support.request;

/**
 * The state of the test queues.
 *
 * @param label names the job in the tally
 * @param failures how many first attempts fail
 */
public record Visit(String label, int failures) {}
