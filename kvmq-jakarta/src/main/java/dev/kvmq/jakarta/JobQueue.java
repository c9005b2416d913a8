package dev.kvmq.jakarta;

import dev.kvmq.Job;
import dev.kvmq.JobEntry;
import dev.kvmq.JobOptions;
import dev.kvmq.JobProcessingException;
import dev.kvmq.PushResult;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A queue as a Jakarta EE application uses it: inject it by name,
 * {@code @Inject @QueueName("emails") JobQueue<Email> emails;}, and push, list, pause, resume and
 * delete. {@link #offer} pushes a job with a {@link dev.kvmq.UniqueKey unique key} and says whether
 * it made a new job or found the one that holds the key.
 *
 * <h2>Transactions</h2>
 *
 * A push made while a JTA transaction is active joins it as the queue's {@code
 * kvmq.queue.NAME.transaction-push} says:
 *
 * <ul>
 *   <li>{@code in-transaction} (the default): the jobs are returned at once. On the PostgreSQL
 *       store with {@code kvmq.postgres.jta-datasource} they are written through the transaction's
 *       own connection: they exist exactly when the transaction commits, atomic with its other
 *       writes to that database, and vanish if it rolls back. On the other stores, which can't join
 *       a transaction, they are written held at once (status {@link dev.kvmq.JobStatus#HELD}, run
 *       by no worker), released by the commit and removed by the rollback; a crash in between
 *       leaves them held for the queue's {@code kvmq.queue.NAME.held-timeout} policy or an operator
 *       (docs/semantics.md, "Held jobs").
 *   <li>{@code after-commit}: the jobs are pushed right after the commit, and not at all if it
 *       rolls back; the push returns nothing. Not atomic with the transaction: if the process dies
 *       between the commit and the push, the push is lost.
 * </ul>
 *
 * A push in a transaction that is marked for rollback is refused with {@link
 * IllegalStateException}, and nothing is written. Outside a transaction a push is stored before the
 * call returns.
 *
 * <p>Everything else delegates to the kernel's {@link Queue} (see its documentation for each
 * method's exceptions).
 *
 * @param <S> the state type
 */
public final class JobQueue<S> {

  private static final System.Logger LOG = System.getLogger(JobQueue.class.getName());

  private final Queue<S> queue;
  private final TransactionSynchronizationRegistry transactions;
  private final JobOptions defaults;
  private final Runnable pushed;
  private final InTransactionPush inTransaction; // null: after-commit

  JobQueue(
      Queue<S> queue,
      TransactionSynchronizationRegistry transactions,
      JobOptions defaults,
      Runnable pushed) {
    this(queue, transactions, defaults, pushed, null);
  }

  /**
   * @param inTransaction how a push joins an active transaction, or null to push after its commit
   */
  JobQueue(
      Queue<S> queue,
      TransactionSynchronizationRegistry transactions,
      JobOptions defaults,
      Runnable pushed,
      InTransactionPush inTransaction) {
    this.queue = Objects.requireNonNull(queue, "queue");
    this.transactions = transactions;
    this.defaults = Objects.requireNonNull(defaults, "defaults");
    this.pushed = Objects.requireNonNull(pushed, "pushed");
    this.inTransaction = inTransaction;
  }

  /**
   * Returns the options of a push that gives none: the queue's priority and retries as its {@link
   * QueueHandler} declares them, changed by {@code kvmq.queue.NAME.*} configuration (see {@link
   * QueueHandler}); {@link JobOptions#defaults()} for a queue with neither. Start from them to keep
   * them in a push with options of its own: {@code bills.push(bill,
   * bills.defaultOptions().delay(Duration.ofHours(1)))}.
   *
   * @return the queue's default job options
   */
  public JobOptions defaultOptions() {
    return defaults;
  }

  /**
   * Returns the queue's name.
   *
   * @return the name
   */
  public String name() {
    return queue.name();
  }

  /**
   * Returns the kernel queue behind this one (pushes on it ignore transactions).
   *
   * @return the queue
   */
  public Queue<S> queue() {
    return queue;
  }

  /**
   * Pushes a job with the queue's {@link #defaultOptions()}.
   *
   * @param state the state
   * @return the stored (or held) job, or empty when the push waits for the current transaction to
   *     commit ({@code after-commit})
   * @throws NullPointerException if {@code state} is null
   * @throws IllegalArgumentException if the encoded state is too large
   * @throws IllegalStateException if the current transaction is marked for rollback
   * @throws dev.kvmq.store.KvStoreException if the store fails; a {@link
   *     dev.kvmq.PushFailedException} if it failed the commit, naming the jobs, which may or may
   *     not be stored
   */
  public Optional<Job<S>> push(S state) {
    return push(state, defaults);
  }

  /**
   * Pushes a job with these options, in place of the queue's {@link #defaultOptions()}.
   *
   * @param state the state
   * @param options priority, delay, repeats, retries
   * @return the stored (or held) job, or empty when the push waits for the current transaction to
   *     commit ({@code after-commit})
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the encoded state is too large
   * @throws IllegalStateException if the current transaction is marked for rollback
   * @throws dev.kvmq.store.KvStoreException if the store fails; a {@link
   *     dev.kvmq.PushFailedException} if it failed the commit, naming the jobs, which may or may
   *     not be stored
   */
  public Optional<Job<S>> push(S state, JobOptions options) {
    Objects.requireNonNull(state, "state");
    List<Job<S>> jobs = pushAll(List.of(state), options);
    return jobs.isEmpty() ? Optional.empty() : Optional.of(jobs.get(0));
  }

  /**
   * Pushes a job and says what the push did, as the kernel's {@link Queue#offer} does: with a
   * {@link JobOptions#unique unique key} whose key another job holds, nothing is stored and the
   * result names that job ({@link PushResult.Outcome#DUPLICATE}), or, for a {@link
   * dev.kvmq.UniqueKey#debounce() debounce} key held by a waiting job, that job gets this push's
   * state and due time ({@link PushResult.Outcome#DEBOUNCED}); otherwise the job is stored ({@link
   * PushResult.Outcome#CREATED}). A duplicate is no error: {@code emails.offer(e,
   * emails.defaultOptions().unique(UniqueKey.whileWaiting("welcome-" + user)))} pushes one welcome
   * mail per user however often it is called.
   *
   * <p>In a JTA transaction ({@code in-transaction}, see the class documentation), on the
   * PostgreSQL store with {@code kvmq.postgres.jta-datasource} the offer is written in the
   * transaction: its key is taken, and its job exists, exactly when the transaction commits. Other
   * stores can't join a transaction, and a job held for one can't take a unique key: there an offer
   * in a transaction is refused ({@link IllegalStateException}); offer outside it. With {@code
   * after-commit} the offer runs after the commit, and nothing is returned.
   *
   * @param state the state
   * @param options the job's options, usually with a unique key; {@link #defaultOptions()} are not
   *     added to them (start from them to keep them)
   * @return what the push did and the job, or empty when the offer waits for the current
   *     transaction to commit ({@code after-commit})
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the encoded state is too large
   * @throws IllegalStateException if the current transaction is marked for rollback, or is active
   *     on a store that can't join it; if the key's holder kept changing (see {@link Queue#offer})
   * @throws dev.kvmq.store.KvStoreException if the store fails; a {@link
   *     dev.kvmq.PushFailedException} if it failed the commit, naming the jobs, which may or may
   *     not be stored
   */
  public Optional<PushResult<S>> offer(S state, JobOptions options) {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(options, "options");
    int status = refuseDoomed();
    PushResult<S> result;
    if (status == Status.STATUS_ACTIVE && inTransaction != null) {
      result = inTransaction.offer(queue, state, options, transactions);
    } else if (status == Status.STATUS_ACTIVE) {
      queue.codec().encode(state); // fail now, in the caller, if the state can't be encoded
      afterCommit(List.of(state), () -> queue.offer(state, options));
      return Optional.empty();
    } else {
      result = queue.offer(state, options);
    }
    if (result.outcome() != PushResult.Outcome.DUPLICATE) {
      pushed.run();
    }
    return Optional.of(result);
  }

  /**
   * Pushes many jobs with the queue's {@link #defaultOptions()} in one atomic commit (all or none).
   *
   * @param states the states
   * @return the stored jobs, or an empty list when the push waits for the current transaction to
   *     commit ({@code after-commit})
   * @throws NullPointerException if {@code states} or a state is null
   * @throws IllegalArgumentException if an encoded state is too large
   * @throws IllegalStateException if the current transaction is marked for rollback
   * @throws dev.kvmq.store.KvStoreException if the store fails; a {@link
   *     dev.kvmq.PushFailedException} if it failed the commit, naming the jobs, which may or may
   *     not be stored
   */
  public List<Job<S>> pushAll(Collection<? extends S> states) {
    return pushAll(states, defaults);
  }

  /**
   * Pushes many jobs in one atomic commit (all or none), with these options in place of the queue's
   * {@link #defaultOptions()}.
   *
   * @param states the states
   * @param options the options of every job
   * @return the stored jobs, or an empty list when the push waits for the current transaction to
   *     commit ({@code after-commit})
   * @throws NullPointerException if an argument or a state is null
   * @throws IllegalArgumentException if an encoded state is too large
   * @throws IllegalStateException if the current transaction is marked for rollback
   * @throws dev.kvmq.store.KvStoreException if the store fails; a {@link
   *     dev.kvmq.PushFailedException} if it failed the commit, naming the jobs, which may or may
   *     not be stored
   */
  public List<Job<S>> pushAll(Collection<? extends S> states, JobOptions options) {
    Objects.requireNonNull(states, "states");
    Objects.requireNonNull(options, "options");
    int status = refuseDoomed();
    if (status == Status.STATUS_ACTIVE && inTransaction != null) {
      List<Job<S>> jobs = inTransaction.pushAll(queue, List.copyOf(states), options, transactions);
      if (!jobs.isEmpty()) {
        pushed.run();
      }
      return jobs;
    }
    if (status == Status.STATUS_ACTIVE) {
      List<S> copy = List.copyOf(states);
      copy.forEach(
          s -> queue.codec().encode(s)); // fail now, in the caller, if a state can't be encoded
      afterCommit(copy, () -> queue.pushAll(copy, options));
      return List.of();
    }
    List<Job<S>> jobs = queue.pushAll(states, options);
    if (!jobs.isEmpty()) {
      pushed.run();
    }
    return jobs;
  }

  /**
   * The status of the current transaction ({@link Status#STATUS_NO_TRANSACTION} without a
   * registry); refuses a push in a transaction marked for rollback.
   */
  private int refuseDoomed() {
    int status =
        transactions == null ? Status.STATUS_NO_TRANSACTION : transactions.getTransactionStatus();
    if (status == Status.STATUS_MARKED_ROLLBACK) {
      throw new IllegalStateException(
          "queue "
              + name()
              + ": the current transaction is marked for rollback, so a job pushed in it would"
              + " never exist; nothing was pushed");
    }
    return status;
  }

  /**
   * Runs {@code push} (of {@code states}) after the current transaction commits, not at all else.
   */
  private void afterCommit(List<S> states, Runnable push) {
    InTransactionPush.whenEnded(
        transactions,
        committed -> {
          if (!committed) {
            return;
          }
          try {
            push.run();
            pushed.run();
          } catch (RuntimeException e) {
            LOG.log(
                System.Logger.Level.ERROR,
                "could not push "
                    + states.size()
                    + " job(s) to queue "
                    + name()
                    + " after their transaction committed; they are lost",
                e);
          }
        });
  }

  /**
   * Reads one job.
   *
   * @param id the job's id
   * @return the job, or empty
   */
  public Optional<Job<S>> job(String id) {
    return queue.job(id);
  }

  /**
   * Lists the jobs in queue order with place and status.
   *
   * @return the listing
   */
  public List<JobEntry<S>> jobs() {
    return queue.jobs();
  }

  /**
   * Counts the jobs per status.
   *
   * @return the counts
   */
  public QueueCounts counts() {
    return queue.counts();
  }

  /** Pauses the queue for every worker. */
  public void pause() {
    queue.pause();
  }

  /** Resumes the queue. */
  public void resume() {
    queue.resume();
  }

  /**
   * Tells whether the queue is paused.
   *
   * @return true if paused
   */
  public boolean isPaused() {
    return queue.isPaused();
  }

  /**
   * Deletes a job that is not being processed.
   *
   * @param id the job's id
   * @return true if deleted, false if there was none
   * @throws JobProcessingException if it is being processed
   */
  public boolean delete(String id) {
    return queue.delete(id);
  }

  /**
   * Deletes every waiting and delayed job in one atomic operation.
   *
   * @return how many were deleted
   */
  public int deleteWaiting() {
    return queue.deleteWaiting();
  }

  /**
   * Lists the dead letters.
   *
   * @return the dead jobs, oldest failure first
   */
  public List<Job<S>> deadLetters() {
    return queue.deadLetters();
  }

  /**
   * Lists one page of the dead letters.
   *
   * @param offset how many to skip, 0 or more
   * @param limit the most to return, 0 or more
   * @return the page, oldest failure first
   * @throws IllegalArgumentException if {@code offset} or {@code limit} is negative
   */
  public List<Job<S>> deadLetters(int offset, int limit) {
    return queue.deadLetters(offset, limit);
  }

  /**
   * Puts a dead letter back in the queue with its retries restored.
   *
   * @param id the dead job's id
   * @return true if replayed
   */
  public boolean replayDead(String id) {
    return queue.replayDead(id);
  }

  /**
   * Deletes a dead letter.
   *
   * @param id the dead job's id
   * @return true if deleted
   */
  public boolean deleteDead(String id) {
    return queue.deleteDead(id);
  }

  @Override
  public String toString() {
    return "JobQueue[" + name() + "]";
  }
}
