package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.util.List;

/**
 * A push in the JTA transaction on a store that can't join it (EclipseStore, in memory): the jobs
 * are written held at once, durably, and returned; an interposed synchronization releases them
 * after the commit and drops them after a rollback (docs/semantics.md, "Held jobs"). Not atomic
 * with the transaction: a crash between the hold and the end of the transaction leaves them held,
 * for the queue's held-job policy ({@code kvmq.queue.NAME.held-timeout}) or an operator.
 */
final class HeldInTransaction implements InTransactionPush {

  static final HeldInTransaction INSTANCE = new HeldInTransaction();

  private static final System.Logger LOG = System.getLogger(JobQueue.class.getName());

  private HeldInTransaction() {}

  @Override
  public <S> List<Job<S>> pushAll(
      Queue<S> queue,
      List<S> states,
      JobOptions options,
      TransactionSynchronizationRegistry transactions) {
    List<Job<S>> jobs = queue.holdAll(states, options);
    List<String> ids = jobs.stream().map(Job::id).toList();
    try {
      InTransactionPush.whenEnded(transactions, committed -> end(queue, ids, committed));
    } catch (RuntimeException e) {
      queue.dropHeld(ids); // the transaction can't tell us its end: don't leave them held
      throw e;
    }
    return jobs;
  }

  /** Releases the jobs after a commit, drops them after a rollback; logs what it could not do. */
  static void end(Queue<?> queue, List<String> ids, boolean committed) {
    try {
      int moved = committed ? queue.releaseHeld(ids) : queue.dropHeld(ids);
      if (moved < ids.size()) {
        LOG.log(
            committed ? System.Logger.Level.WARNING : System.Logger.Level.ERROR,
            "kvmq: queue "
                + queue.name()
                + ": "
                + (ids.size() - moved)
                + " of the "
                + ids.size()
                + " job(s) held for a transaction that "
                + (committed ? "committed" : "rolled back")
                + " were no longer held (released by the held timeout, or deleted by an operator)"
                + (committed ? "" : "; a released one runs although its transaction rolled back")
                + ": "
                + ids);
      }
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.ERROR,
          "kvmq: queue "
              + queue.name()
              + ": could not "
              + (committed ? "release" : "drop")
              + " the job(s) "
              + ids
              + " held for a transaction that "
              + (committed ? "committed" : "rolled back")
              + ": "
              + e
              + "; they stay held for the queue's held-job policy or an operator");
    }
  }
}
