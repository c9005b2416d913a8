package dev.kvmq.it.runtime;

/**
 * The state of the test queues: a bill of a customer, in cents.
 *
 * @param customer who pays
 * @param cents how much
 * @param failures how many first attempts fail ({@code retrying} queue), or the handler's work in
 *     milliseconds ({@code timed} queue)
 */
public record Bill(String customer, long cents, int failures) {}
