package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.util.List;

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
}
