package dev.kvmq.demo;

/**
 * The demo queue's payload, as pushed over REST: {@code {"state": {"label": "a", "workMs": 500,
 * "failAttempts": 1}}}.
 *
 * @param label what the journal records for the job; need not be unique
 * @param workMs how long the simulated work takes, in milliseconds (0 or more)
 * @param failAttempts how many first attempts throw (0: the first attempt succeeds); give the job a
 *     {@code retryCount} of at least this many to see it complete
 */
public record DemoJob(String label, int workMs, int failAttempts) {}
