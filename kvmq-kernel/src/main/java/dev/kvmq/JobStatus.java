package dev.kvmq;

/** Where a job stands, as the seed defines it, plus dead letters, held and completed jobs. */
public enum JobStatus {
  /** Due and not leased: a worker may take it next (in queue order). */
  WAITING,
  /** Waiting for its delay ({@link Job#delayUntil()}) to pass. */
  DELAYED,
  /** Leased by a worker whose lease has not expired: being processed. */
  PROCESSING,
  /** Failed with no retries left; kept with its last error until replayed or deleted. */
  DEAD,
  /**
   * Pushed in an application's transaction that has not ended: run by no worker until the commit
   * releases it; removed by a rollback. One left by a crash waits for the queue's held-job policy
   * or an operator (docs/semantics.md, "Held jobs").
   */
  HELD,
  /**
   * Cancelled by an operator ({@link Queue#cancel}): it will not run (again); a worker that was
   * running it has lost its lease, so its completion or failure is refused. Kept, with the time of
   * the cancel, until deleted or pruned (docs/semantics.md, "Cancel").
   */
  CANCELLED,
  /**
   * Completed, kept for the queue's {@link Retention#completed() retention} with its result and
   * attempts (docs/semantics.md, "History"); runs no more.
   */
  COMPLETED
}
