package dev.kvmq;

import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/** {@link Queue#listen}: lists again after a change, or when a status is due to change. */
final class QueueListener<S> implements Subscription {

  private static final System.Logger LOG = System.getLogger(QueueListener.class.getName());

  private final Queue<S> queue;
  private final ScheduledExecutorService executor;
  private final long pollMillis;
  private final Consumer<? super List<JobEntry<S>>> listener;
  private final AtomicInteger requests = new AtomicInteger();
  private final Object lock = new Object();
  private volatile boolean closed;
  private KvStore.Subscription subscription;
  private ScheduledFuture<?> timer;
  private List<JobEntry<S>> last;

  QueueListener(
      Queue<S> queue,
      ScheduledExecutorService executor,
      Duration pollInterval,
      Consumer<? super List<JobEntry<S>>> listener) {
    this.queue = queue;
    this.executor = Objects.requireNonNull(executor, "executor");
    this.listener = Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(pollInterval, "pollInterval");
    if (pollInterval.compareTo(JobOptions.MAX_DELAY) > 0 || pollInterval.toMillis() < 1) {
      throw new IllegalArgumentException(
          "pollInterval must be at least 1 ms and at most "
              + JobOptions.MAX_DELAY
              + ": "
              + pollInterval);
    }
    this.pollMillis = pollInterval.toMillis();
  }

  QueueListener<S> start() {
    if (queue.store.notifiesChanges()) {
      subscription = queue.store.subscribe(queue.keys.root, this::request);
    }
    request();
    return this;
  }

  private void request() {
    if (!closed && requests.getAndIncrement() == 0) {
      try {
        executor.execute(this::loop);
      } catch (RejectedExecutionException e) {
        requests.set(0);
      }
    }
  }

  private void loop() {
    int seen;
    do {
      seen = requests.get();
      listOnce();
    } while (requests.addAndGet(-seen) != 0);
  }

  private void listOnce() {
    if (closed) {
      return;
    }
    long now = queue.clock.millis();
    long next = queue.store.notifiesChanges() ? Long.MAX_VALUE : now + pollMillis;
    try {
      List<JobEntry<S>> entries = queue.jobs();
      for (JobEntry<S> e : entries) {
        Job<S> j = e.job();
        if (j.status() == JobStatus.DELAYED) {
          next = Math.min(next, j.delayUntil().toEpochMilli());
        } else if (j.status() == JobStatus.PROCESSING) {
          next = Math.min(next, j.leaseUntil().orElseThrow().toEpochMilli());
        }
      }
      if (!entries.equals(last)) {
        last = entries;
        listener.accept(entries);
      }
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "listing queue " + queue.name() + " for a listener failed",
          e);
      next = Math.min(next, now + pollMillis);
    }
    if (next != Long.MAX_VALUE) {
      synchronized (lock) {
        if (timer != null) {
          timer.cancel(false);
        }
        if (!closed) {
          timer = executor.schedule(this::request, Math.max(0, next - now), TimeUnit.MILLISECONDS);
        }
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    if (subscription != null) {
      subscription.close();
    }
    synchronized (lock) {
      if (timer != null) {
        timer.cancel(false);
      }
    }
  }
}
