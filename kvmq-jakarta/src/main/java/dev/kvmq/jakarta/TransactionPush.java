package dev.kvmq.jakarta;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;

/**
 * How a queue's push made inside an active JTA transaction is stored ({@code
 * kvmq.queue.NAME.transaction-push}).
 */
enum TransactionPush {
  /**
   * The push returns the job at once. On {@code kvmq.store=postgres} with {@code
   * kvmq.postgres.jta-datasource}: written through the transaction's own connection, the job exists
   * exactly when the transaction commits. On the other stores: written held at once, released by
   * the commit, removed by the rollback (docs/semantics.md, "Held jobs").
   */
  IN_TRANSACTION("in-transaction"),
  /**
   * Pushed right after the transaction commits, not at all if it rolls back; the push returns
   * nothing. Lost if the process dies between the commit and the push.
   */
  AFTER_COMMIT("after-commit");

  /** The end of the configuration key. */
  static final String KEY = "transaction-push";

  /** The end of the key of the held-job policy: an ISO-8601 duration, or {@code keep}. */
  static final String HELD_TIMEOUT_KEY = "held-timeout";

  /**
   * The queue's held-job policy: how long a job may stay held before a worker releases it with a
   * warning, or null ({@code keep}, the default) to keep it for an operator.
   *
   * @throws IllegalArgumentException if the value is neither {@code keep} nor a positive duration
   */
  static Duration heldTimeout(String queue, KvmqConfig config) {
    String key = "kvmq.queue." + queue + "." + HELD_TIMEOUT_KEY;
    Optional<String> configured = config.get(key);
    if (configured.isEmpty() || configured.get().trim().equalsIgnoreCase("keep")) {
      return null;
    }
    try {
      Duration d = Duration.parse(configured.get().trim());
      if (d.toMillis() < 1) {
        throw new IllegalArgumentException(key + " must be at least 1 ms: " + configured.get());
      }
      return d;
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          key + " is \"" + configured.get() + "\"; use keep or an ISO-8601 duration such as PT10M",
          e);
    }
  }

  final String value;

  TransactionPush(String value) {
    this.value = value;
  }

  /**
   * The queue's mode: as configured, else in-transaction, the safest on every store: joined where
   * the store can join the transaction, held where it can't (a crash leaves a held job, never a
   * lost one).
   *
   * @param queue the queue's name
   * @param config the configuration
   * @throws IllegalArgumentException if the value is unknown
   */
  static TransactionPush of(String queue, KvmqConfig config) {
    String key = "kvmq.queue." + queue + "." + KEY;
    Optional<String> configured = config.get(key);
    if (configured.isEmpty()) {
      return IN_TRANSACTION;
    }
    String v = configured.get().trim().toLowerCase(Locale.ROOT);
    for (TransactionPush mode : values()) {
      if (mode.value.equals(v)) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        key + " is \"" + configured.get() + "\"; use in-transaction or after-commit");
  }
}
