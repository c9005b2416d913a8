package dev.kvmq;

import dev.kvmq.store.KvStoreException;
import java.util.List;
import java.util.Objects;

/**
 * The store failed the commit of a push ({@link Queue#push}, {@link Queue#pushAll}, {@link
 * Queue#offer}) or a hold ({@link Queue#holdAll}): it threw, so unless its exception (the cause)
 * says the commit was not applied, the jobs may have been stored (a connection lost while the
 * commit was sent or run leaves its outcome unknown). {@link #jobIds()} names the jobs that commit
 * wrote, by the ids they have if it was applied: once the store works again, look each one up with
 * {@link Queue#job(String)} before pushing it again, so that a job that was stored does not run
 * twice. For a debounce ({@link UniqueKey#debounce()}) it names the job that holds the key.
 *
 * <p>It is a {@link KvStoreException}, so code that catches that catches this too.
 */
public final class PushFailedException extends KvStoreException {

  private static final long serialVersionUID = 1L;

  /** How many ids the message lists; {@link #jobIds()} has them all. */
  private static final int LISTED = 5;

  /** The ids (an immutable list, serializable). */
  private final List<String> jobIds;

  /**
   * Makes the exception; the queue makes it when a push's commit fails, and a test of an
   * application's handling of a failed push can make one too.
   *
   * @param queue the queue's name
   * @param jobIds the ids of the jobs the failed commit wrote, in push order; not empty
   * @param cause the store's exception
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code jobIds} is empty
   */
  public PushFailedException(String queue, List<String> jobIds, KvStoreException cause) {
    super(message(queue, jobIds, cause), Objects.requireNonNull(cause, "cause"));
    this.jobIds = List.copyOf(jobIds);
  }

  private static String message(String queue, List<String> ids, KvStoreException cause) {
    Objects.requireNonNull(queue, "queue");
    if (ids.isEmpty()) {
      throw new IllegalArgumentException("a failed push names at least one job");
    }
    StringBuilder m = new StringBuilder("the store failed the commit of ");
    if (ids.size() == 1) {
      m.append("job ").append(ids.get(0));
    } else {
      m.append(ids.size()).append(" jobs (");
      m.append(String.join(", ", ids.subList(0, Math.min(LISTED, ids.size()))));
      if (ids.size() > LISTED) {
        m.append(", and ").append(ids.size() - LISTED).append(" more");
      }
      m.append(")");
    }
    return m.append(" of queue ")
        .append(queue)
        .append(": ")
        .append(cause.getMessage())
        .append(". Unless that says it was not applied, ")
        .append(ids.size() == 1 ? "the job" : "they")
        .append(" may be stored: look ")
        .append(ids.size() == 1 ? "it" : "them")
        .append(" up by id (Queue.job) before pushing again")
        .toString();
  }

  /**
   * The ids of the jobs the failed commit wrote, in push order.
   *
   * @return the ids, an immutable list of at least one
   */
  public List<String> jobIds() {
    return jobIds;
  }
}
