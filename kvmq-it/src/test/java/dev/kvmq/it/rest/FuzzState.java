package dev.kvmq.it.rest;

/**
 * The state of the fuzzed queue {@code fuzz}.
 *
 * @param label any text
 * @param n any int
 */
public record FuzzState(String label, int n) {}
