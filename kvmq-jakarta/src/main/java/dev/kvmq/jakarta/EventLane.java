package dev.kvmq.jakarta;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The CDI events of one queue, fired one at a time in the order its worker reported them, on a
 * thread of their own. A worker reports on the thread that commits its jobs' outcomes, so an
 * observer called there would hold up every outcome committed after it: a slow synchronous observer
 * made other jobs of its queue lose their leases and run twice. Here it delays only the queue's
 * later events.
 *
 * <p>The thread comes from the container's managed thread factory (the application's context) and
 * ends after {@link #IDLE} without events; the next event makes a new one. Events wait in an
 * unbounded queue; the first time more than {@link #BACKLOG_WARNING} wait, kvmq logs that the
 * queue's observers are slower than its jobs.
 *
 * <p>Locking: none of its own; the executor's queue orders the events.
 */
final class EventLane {

  private static final System.Logger LOG = System.getLogger(KvmqRuntime.class.getName());

  /** How many events waiting make kvmq say, once, that the observers fall behind. */
  static final int BACKLOG_WARNING = 10_000;

  private final String queue;
  private final ThreadPoolExecutor thread;
  private volatile boolean warned;

  /** How long the lane's thread lives without events. */
  static final Duration IDLE = Duration.ofMinutes(1);

  EventLane(String queue, ThreadFactory factory) {
    this(queue, factory, IDLE);
  }

  /** A lane whose thread ends after {@code idle} without events (tests shorten it). */
  EventLane(String queue, ThreadFactory factory, Duration idle) {
    this.queue = queue;
    this.thread =
        new ThreadPoolExecutor(
            1, 1, idle.toMillis(), TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory);
    thread.allowCoreThreadTimeOut(true);
  }

  /** Fires {@code event} after every event given before it; after {@link #close}, not at all. */
  void fire(Runnable event) {
    try {
      thread.execute(event);
    } catch (RejectedExecutionException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "kvmq: an event of queue " + queue + " came after its observers stopped; not fired");
      return;
    }
    if (!warned && thread.getQueue().size() > BACKLOG_WARNING) {
      warned = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "kvmq: more than "
              + BACKLOG_WARNING
              + " events of queue "
              + queue
              + " wait for their observers: the synchronous observers of its events are slower"
              + " than its jobs");
    }
  }

  /**
   * Fires the events given so far, waiting up to {@code timeout}, then drops what is left.
   *
   * @return how many events were dropped
   */
  int close(Duration timeout) throws InterruptedException {
    thread.shutdown();
    if (thread.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return 0;
    }
    return thread.shutdownNow().size();
  }
}
