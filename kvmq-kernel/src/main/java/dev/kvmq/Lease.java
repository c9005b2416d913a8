package dev.kvmq;

import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvEntry;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A job a {@link Worker} claimed: the lease it holds (the record as last read or written, its
 * versionstamp, the fencing token), and the handler's view of it ({@link JobContext}).
 *
 * <p>Locking: this object's monitor guards {@code record}, {@code versionstamp}, {@code finishing}
 * and {@code lost}; it is held while planning from them and, in {@link #update}, while committing
 * the update (so no renewal is planned from a record the update is replacing). No other lock is
 * taken while holding it, except the store's. Cancellation is a latch and a copy-on-write list of
 * actions, run outside the monitor.
 *
 * @param <S> the state type
 */
final class Lease<S> implements JobContext<S> {

  /** How often a holder's write is planned again after its record changed under it. */
  static final int RETRIES = 5;

  private static final System.Logger LOG = System.getLogger(Worker.class.getName());

  /** The longest wait {@code awaitCancellation} passes on in milliseconds; longer waits as long. */
  private static final Duration LONGEST_WAIT = Duration.ofMillis(Long.MAX_VALUE);

  final String id;
  final long token;
  final int attempt;

  /** When this worker claimed the job, from the queue's clock. */
  final long claimedAt;

  /** The tracing hook's view of the handler run; set when the handler starts. */
  volatile JobTracing.Span span = Tracer.NoTracing.SPAN;

  private final WorkerCore<S> core;
  // guarded by this
  private JobRecord record;
  private long versionstamp;

  /** The job ran (or is given back): no more renewals. */
  private boolean finishing;

  /** The result the handler set (its thread writes, the settler reads after it returns). */
  private volatile String result;

  /** Someone else has the job now: nothing more is written under this lease. */
  private boolean lost;

  private final CountDownLatch cancelled = new CountDownLatch(1);
  private volatile CancelReason reason;
  private final List<Runnable> onCancel = new CopyOnWriteArrayList<>();

  /** The run went over its timeout: the attempt fails with a timeout, whatever the handler does. */
  private volatile boolean timedOut;

  /** The outcome the handler asked for ({@link #snooze}, {@link #failPermanently}), or null. */
  private volatile Requested requested;

  // guarded by this
  /** The thread running the handler, while it runs. */
  private Thread runner;

  /** This lease interrupted {@code runner}: its flag is cleared when the handler returns. */
  private boolean interruptedRunner;

  /** An outcome a handler asked for. */
  sealed interface Requested permits Snooze, Permanent {}

  /** Put the job back for {@code delayMillis}, without using a retry. */
  record Snooze(long delayMillis) implements Requested {}

  /** Fail the job for good with {@code message}. */
  record Permanent(String message) implements Requested {}

  Lease(WorkerCore<S> core, JobRecord record, long versionstamp) {
    this.core = core;
    this.id = record.id;
    this.token = record.token;
    this.attempt = record.attempt;
    this.claimedAt = core.now();
    this.record = record;
    this.versionstamp = versionstamp;
  }

  synchronized JobRecord record() {
    return record;
  }

  synchronized long versionstamp() {
    return versionstamp;
  }

  /** What this lease holds now, for a holder's transition. */
  synchronized Transitions.Holding holding() {
    return new Transitions.Holding(record, versionstamp, token);
  }

  synchronized boolean isLost() {
    return lost;
  }

  /** Marks the lease lost and tells the handler; true the first time. */
  boolean lose() {
    boolean first;
    synchronized (this) {
      first = !lost;
      lost = true;
    }
    cancel(CancelReason.LEASE_LOST);
    return first;
  }

  /**
   * Marks the job finished (no more renewals) and returns what it holds, or empty when the lease is
   * already lost.
   */
  synchronized Optional<Transitions.Holding> finish() {
    finishing = true;
    return lost ? Optional.empty() : Optional.of(holding());
  }

  /**
   * Whether the job ran or is given back: its settler's commit decides what becomes of it, and
   * reports a lost lease itself.
   */
  synchronized boolean isFinishing() {
    return finishing;
  }

  /**
   * What a renewal plans from, or empty when the job is finishing, the lease lost, or the run over
   * its timeout (a handler that does not stop then loses its lease when it expires).
   */
  synchronized Optional<Transitions.Holding> renewable() {
    return finishing || lost || timedOut ? Optional.empty() : Optional.of(holding());
  }

  /**
   * How long one run of this job may take: its own timeout, else the queue's default; -1 for none.
   */
  long timeoutMillis() {
    long own = record().timeoutMillis;
    if (own != -1) {
      return own;
    }
    Duration d = core.queue.defaultTimeout;
    return d == null ? -1 : d.toMillis();
  }

  /** The run went over its timeout: the handler is told (and interrupted if the job says so). */
  void timeOut() {
    timedOut = true;
    cancel(CancelReason.TIMED_OUT);
  }

  Requested requested() {
    return requested;
  }

  /** When the handler started (the queue's clock), or -1 before. */
  private volatile long startedAt = -1;

  /** The handler starts on {@code thread} at {@code now}. */
  synchronized void running(Thread thread, long now) {
    runner = thread;
    startedAt = now;
  }

  /**
   * Whether the run went over its timeout by {@code now}: its timer fired, or the handler returned
   * later than its timeout allows before the timer could run.
   */
  boolean overran(long now) {
    long timeout = timeoutMillis();
    return timedOut || (timeout >= 0 && startedAt >= 0 && now - startedAt > timeout);
  }

  /** The handler returned: no more interrupts; the flag this lease set is cleared. */
  void ran() {
    boolean clear;
    synchronized (this) {
      clear = interruptedRunner && runner == Thread.currentThread();
      runner = null;
      interruptedRunner = false;
    }
    if (clear) {
      Thread.interrupted(); // what we set must not reach the next job on this thread
    }
  }

  private synchronized void interruptRunner() {
    if (runner != null && !interruptedRunner) {
      interruptedRunner = true;
      runner.interrupt();
    }
  }

  /** Takes a renewal's result, unless the record was written again since it was planned. */
  synchronized void adopt(JobRecord renewed, long plannedAt, long committedAt) {
    if (versionstamp == plannedAt) {
      record = renewed;
      versionstamp = committedAt;
    }
  }

  /** Reads the job again; true if this lease still holds it (and adopts what was read). */
  boolean refresh() {
    Optional<KvEntry> e = core.store.get(core.keys.job(id));
    if (e.isEmpty()) {
      return false;
    }
    JobRecord r = JobRecord.decode(e.get().value());
    if (r.state == JobRecord.State.CANCELLED && r.token == token) {
      cancel(CancelReason.CANCELLED); // an operator cancelled the job while this lease held it
    }
    if (r.state != JobRecord.State.LEASED || r.token != token) {
      return false;
    }
    synchronized (this) {
      record = r;
      versionstamp = e.get().versionstamp();
    }
    return true;
  }

  void cancel(CancelReason why) {
    synchronized (this) {
      if (reason != null) {
        return;
      }
      reason = why;
    }
    cancelled.countDown();
    for (Runnable r : onCancel) {
      if (onCancel.remove(r)) {
        runQuietly(r);
      }
    }
    if ((why == CancelReason.CANCELLED || why == CancelReason.TIMED_OUT)
        && record().interruptOnCancel) {
      interruptRunner();
    }
  }

  @Override
  public long token() {
    return token;
  }

  @Override
  public int attempt() {
    return attempt;
  }

  @Override
  public void update(S state) {
    update(state, JobChange.none());
  }

  @Override
  public void update(S state, JobChange change) {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(change, "change");
    byte[] payload = core.queue.encode(state);
    for (int i = 0; i < RETRIES; i++) {
      synchronized (this) {
        if (lost) {
          throw lostException();
        }
        if (Transitions.update(core.keys, holding(), core.now(), core.leaseMillis, change, payload)
            instanceof Transitions.Applied plan) {
          CommitResult result = core.store.commit(plan.operation());
          if (result.ok()) {
            record = plan.record();
            versionstamp = result.versionstamp();
            return;
          }
        }
      }
      if (!refresh()) {
        break;
      }
    }
    core.reporter.leaseLost(this, JobEvent.RefusedOutcome.UPDATE);
    throw lostException();
  }

  private LeaseLostException lostException() {
    return new LeaseLostException(
        "the lease on job "
            + id
            + " of queue "
            + core.queue.name()
            + " (token "
            + token
            + ") is lost: another worker may be running it");
  }

  @Override
  public boolean isCancelled() {
    return reason != null;
  }

  @Override
  public Optional<CancelReason> cancelReason() {
    return Optional.ofNullable(reason);
  }

  @Override
  public boolean awaitCancellation(Duration timeout) throws InterruptedException {
    return cancelled.await(
        timeout.compareTo(LONGEST_WAIT) > 0 ? Long.MAX_VALUE : timeout.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public void onCancel(Runnable action) {
    Objects.requireNonNull(action, "action");
    onCancel.add(action);
    if (reason != null && onCancel.remove(action)) {
      runQuietly(action);
    }
  }

  @Override
  public void failPermanently(String message) {
    requested = new Permanent(Objects.requireNonNull(message, "message"));
  }

  @Override
  public void snooze(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative() || delay.compareTo(JobOptions.MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "a snooze must be zero or more and at most " + JobOptions.MAX_DELAY + ": " + delay);
    }
    requested = new Snooze(delay.toMillis());
  }

  @Override
  public void result(String value) {
    Objects.requireNonNull(value, "value");
    int bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    if (bytes > Queue.MAX_RESULT_BYTES) {
      throw new IllegalArgumentException(
          "the result of job "
              + id
              + " of queue "
              + core.queue.name()
              + " is "
              + bytes
              + " bytes in UTF-8, over the limit of "
              + Queue.MAX_RESULT_BYTES);
    }
    result = value;
  }

  /** The result the handler set, or null. */
  String result() {
    return result;
  }

  @Override
  public void stopProcessing() {
    core.stopWorker();
  }

  /** Until when the handler asked that no job of the queue starts; 0 when it did not. */
  private volatile long pauseQueueUntil;

  @Override
  public void pauseQueueStarts(Duration pause) {
    Objects.requireNonNull(pause, "pause");
    if (pause.compareTo(JobOptions.MAX_DELAY) > 0 || pause.toMillis() < 1) {
      throw new IllegalArgumentException(
          "a pause of the queue's starts is 1 ms to " + JobOptions.MAX_DELAY + ": " + pause);
    }
    long until = core.now() + pause.toMillis();
    synchronized (this) {
      pauseQueueUntil = Math.max(pauseQueueUntil, until);
    }
  }

  /** Until when the handler paused the queue's starts ({@link #pauseQueueStarts}); 0 if not. */
  long pauseQueueUntil() {
    return pauseQueueUntil;
  }

  /** Until when the handler asked that no job of its group starts; 0 when it did not. */
  private volatile long pauseGroupUntil;

  @Override
  public void pauseGroupStarts(Duration pause) {
    Objects.requireNonNull(pause, "pause");
    if (pause.compareTo(JobOptions.MAX_DELAY) > 0 || pause.toMillis() < 1) {
      throw new IllegalArgumentException(
          "a pause of a group's starts is 1 ms to " + JobOptions.MAX_DELAY + ": " + pause);
    }
    if (record().group == null) {
      throw new IllegalStateException(
          "job "
              + id
              + " belongs to no group: pause the queue's starts (pauseQueueStarts) instead");
    }
    long until = core.now() + pause.toMillis();
    synchronized (this) {
      pauseGroupUntil = Math.max(pauseGroupUntil, until);
    }
  }

  /** Until when the handler paused its group's starts ({@link #pauseGroupStarts}); 0 if not. */
  long pauseGroupUntil() {
    return pauseGroupUntil;
  }

  private void runQuietly(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.ERROR,
          "a cancel action of job " + id + " of queue " + core.queue.name() + " failed; ignored",
          e);
    }
  }
}
