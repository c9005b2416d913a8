package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.PushResult;
import dev.kvmq.Queue;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.util.List;
import java.util.function.Consumer;

/** Writes a push in the active JTA transaction, through a store that can join it. */
interface InTransactionPush {

  /**
   * Pushes {@code states} in the active transaction: the jobs exist when it commits.
   *
   * @param queue the queue (on kvmq's own store)
   * @param states the states
   * @param options the options of every job
   * @param transactions the registry of the active transaction, for what must happen after it
   * @return the jobs, as they will be once the transaction commits
   */
  <S> List<Job<S>> pushAll(
      Queue<S> queue,
      List<S> states,
      JobOptions options,
      TransactionSynchronizationRegistry transactions);

  /**
   * Offers one job in the active transaction ({@link Queue#offer}): the new job, or the duplicate,
   * as the transaction sees the queue. A store that can't join the transaction can't take a unique
   * key in it, so the default refuses.
   *
   * @param queue the queue (on kvmq's own store)
   * @param state the state
   * @param options the job's options
   * @param transactions the registry of the active transaction
   * @return what the push did, as it will be once the transaction commits
   * @throws IllegalStateException always, for a store that can't join the transaction
   */
  default <S> PushResult<S> offer(
      Queue<S> queue,
      S state,
      JobOptions options,
      TransactionSynchronizationRegistry transactions) {
    throw new IllegalStateException(
        "queue "
            + queue.name()
            + ": offer can't run in a JTA transaction on this store, which can't join it (a job"
            + " held for the transaction can't take a unique key); offer outside the transaction,"
            + " or use kvmq.store=postgres with "
            + PostgresInTransaction.KEY
            + "; nothing was pushed");
  }

  /**
   * Runs {@code then} once the active transaction has ended, with whether it committed (an
   * interposed synchronization, so after the application's own).
   *
   * @param transactions the registry of the active transaction
   * @param then told true after a commit, false after a rollback
   * @throws IllegalStateException if no transaction is active
   */
  static void whenEnded(TransactionSynchronizationRegistry transactions, Consumer<Boolean> then) {
    transactions.registerInterposedSynchronization(
        new Synchronization() {
          @Override
          public void beforeCompletion() {}

          @Override
          public void afterCompletion(int status) {
            then.accept(status == Status.STATUS_COMMITTED);
          }
        });
  }
}
