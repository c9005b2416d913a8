package dev.kvmq.jakarta;

import java.util.Locale;
import java.util.Optional;

/**
 * How a queue's push made inside an active JTA transaction is stored ({@code
 * kvmq.queue.NAME.transaction-push}).
 */
enum TransactionPush {
  /**
   * Written through the transaction's own connection: the job exists exactly when the transaction
   * commits, and the push returns it at once. Needs {@code kvmq.store=postgres} with {@code
   * kvmq.postgres.jta-datasource}.
   */
  IN_TRANSACTION("in-transaction"),
  /**
   * Pushed right after the transaction commits, not at all if it rolls back; the push returns
   * nothing. Lost if the process dies between the commit and the push.
   */
  AFTER_COMMIT("after-commit");

  /** The end of the configuration key. */
  static final String KEY = "transaction-push";

  final String value;

  TransactionPush(String value) {
    this.value = value;
  }

  /**
   * The queue's mode: as configured, else the safest the store allows (in-transaction where it can
   * join the transaction).
   *
   * @param queue the queue's name
   * @param config the configuration
   * @param canJoin whether the store can write in the JTA transaction (PostgreSQL with {@code
   *     kvmq.postgres.jta-datasource})
   * @throws IllegalArgumentException if the value is unknown, or in-transaction where the store
   *     can't join
   */
  static TransactionPush of(String queue, KvmqConfig config, boolean canJoin) {
    String key = "kvmq.queue." + queue + "." + KEY;
    Optional<String> configured = config.get(key);
    if (configured.isEmpty()) {
      return canJoin ? IN_TRANSACTION : AFTER_COMMIT;
    }
    String v = configured.get().trim().toLowerCase(Locale.ROOT);
    for (TransactionPush mode : values()) {
      if (mode.value.equals(v)) {
        if (mode == IN_TRANSACTION && !canJoin) {
          throw new IllegalArgumentException(
              key
                  + " is in-transaction, which needs kvmq.store=postgres and"
                  + " kvmq.postgres.jta-datasource (the JNDI name of a transactional DataSource"
                  + " on kvmq's database); the store in use can't join a JTA transaction");
        }
        return mode;
      }
    }
    throw new IllegalArgumentException(
        key + " is \"" + configured.get() + "\"; use in-transaction or after-commit");
  }
}
