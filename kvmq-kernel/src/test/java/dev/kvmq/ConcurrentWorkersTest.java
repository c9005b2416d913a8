package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real threads and the system clock: several workers share a queue and drain it. Waits poll with a
 * deadline; nothing here asserts speed.
 */
class ConcurrentWorkersTest {

  final InMemoryKvStore store = new InMemoryKvStore();
  final ScheduledExecutorService pool = Executors.newScheduledThreadPool(8);

  @AfterEach
  void close() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    store.close();
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Object monitor = new Object();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      synchronized (monitor) {
        monitor.wait(10);
      }
    }
  }

  /** A worker listener that counts completions into {@code count}. */
  static java.util.function.Consumer<JobEvent<String>> countingCompletions(AtomicInteger count) {
    return e -> {
      if (e instanceof JobEvent.Completed) {
        count.incrementAndGet();
      }
    };
  }

  @Test
  void threeWorkersRunEveryJobExactlyOnceWhenNothingFails() throws Exception {
    Queue<String> queue = Queue.builder(store, "drain", Codecs.utf8()).build();
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    AtomicInteger completedEvents = new AtomicInteger();
    List<Worker<String>> workers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Worker<String> w =
          queue.worker(
              (job, ctx) ->
                  runs.computeIfAbsent(job.state(), k -> new AtomicInteger()).incrementAndGet(),
              WorkerOptions.defaults().concurrency(4),
              pool);
      w.addListener(countingCompletions(completedEvents));
      workers.add(w);
      w.start();
    }
    int n = 3_000;
    List<String> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      batch.add("job-" + i);
      if (batch.size() == 100) {
        queue.pushAll(batch, JobOptions.defaults());
        batch.clear();
      }
    }
    await("all jobs completed", () -> completedEvents.get() == n);
    assertThat(runs).hasSize(n);
    assertThat(runs.values()).allMatch(c -> c.get() == 1);
    await("queue empty", () -> queue.counts().queued() == 0);
    for (Worker<String> w : workers) {
      assertThat(w.stop(Duration.ofSeconds(10))).isTrue();
      assertThat(w.activeJobs()).isEmpty();
    }
  }

  /**
   * Handoff under real threads: four threads push one job at a time while two workers of the same
   * queue object take handoffs and a third does not; a worker stops halfway and another starts.
   * Every job runs exactly once (handed off or claimed), and no worker ever runs more handlers at
   * once than its concurrency.
   */
  @Test
  void pushersHandingOffToRacingWorkersRunEveryJobExactlyOnce() throws Exception {
    Queue<String> queue = Queue.builder(store, "handoff", Codecs.utf8()).build();
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    AtomicInteger completedEvents = new AtomicInteger();
    AtomicInteger handedOff = new AtomicInteger();
    List<AtomicInteger> mostAtOnce = new ArrayList<>();
    List<Worker<String>> workers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      AtomicInteger running = new AtomicInteger();
      AtomicInteger most = new AtomicInteger();
      mostAtOnce.add(most);
      Worker<String> w =
          queue.worker(
              (job, ctx) -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                runs.computeIfAbsent(job.state(), k -> new AtomicInteger()).incrementAndGet();
                running.decrementAndGet();
              },
              WorkerOptions.defaults().concurrency(2).prefetch(2).handoff(i != 1),
              pool);
      w.addListener(countingCompletions(completedEvents));
      workers.add(w);
    }
    workers.get(0).start();
    workers.get(1).start();
    workers.get(2).start();
    int perThread = 500;
    int n = 4 * perThread;
    List<Thread> pushers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int from = t * perThread;
      Thread pusher =
          new Thread(
              () -> {
                for (int i = from; i < from + perThread; i++) {
                  if (queue.push("job-" + i).status() == JobStatus.PROCESSING) {
                    handedOff.incrementAndGet();
                  }
                  if (from == 0 && i == perThread / 2) {
                    workers.get(0).stop(); // one taker stops while pushes go on
                    workers.get(3).start(); // and another starts
                  }
                }
              });
      pushers.add(pusher);
      pusher.start();
    }
    for (Thread pusher : pushers) {
      pusher.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(pusher.isAlive()).as("a pusher still running").isFalse();
    }
    await("all jobs completed", () -> completedEvents.get() == n);
    assertThat(runs).hasSize(n);
    assertThat(runs.values()).allMatch(c -> c.get() == 1);
    assertThat(handedOff.get()).as("pushes handed off").isPositive();
    assertThat(mostAtOnce).allMatch(most -> most.get() <= 2);
    await("queue empty", () -> queue.counts().queued() == 0);
    for (Worker<String> w : workers) {
      assertThat(w.stop(Duration.ofSeconds(10))).isTrue();
      assertThat(w.activeJobs()).isEmpty();
    }
  }

  @Test
  void stopWaitsForRunningHandlersAndTellsThem() throws Exception {
    Queue<String> queue = Queue.builder(store, "stop", Codecs.utf8()).build();
    CountDownLatch started = new CountDownLatch(2);
    AtomicInteger toldToStop = new AtomicInteger();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              started.countDown();
              if (ctx.awaitCancellation(Duration.ofSeconds(30))) {
                toldToStop.incrementAndGet();
              }
            },
            WorkerOptions.defaults().concurrency(2),
            pool);
    w.start();
    queue.pushAll(List.of("a", "b", "c"), JobOptions.defaults());
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(w.stop(Duration.ofSeconds(30))).isTrue();
    assertThat(toldToStop).hasValue(2);
    assertThat(queue.jobs()).extracting(e -> e.job().state()).containsExactly("c");
  }

  /** A wait too long for a long of milliseconds (FOREVER's) is the longest wait, not an error. */
  @Test
  void waitsBeyondMillisecondsAreTheLongestWait() throws Exception {
    Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
    Queue<String> queue = Queue.builder(store, "forever", Codecs.utf8()).build();
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger toldToStop = new AtomicInteger();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              started.countDown();
              if (ctx.awaitCancellation(forever)) {
                toldToStop.incrementAndGet();
              }
            },
            WorkerOptions.defaults(),
            pool);
    w.start();
    queue.push("a");
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(w.stop(forever)).isTrue();
    assertThat(toldToStop).hasValue(1);
  }

  @Test
  void anIdleWorkerPicksUpAPushWithoutWaitingForItsPollInterval() throws Exception {
    Queue<String> queue = Queue.builder(store, "wake", Codecs.utf8()).build();
    CountDownLatch ran = new CountDownLatch(1);
    Worker<String> w =
        queue.worker(
            (job, ctx) -> ran.countDown(),
            WorkerOptions.defaults().pollInterval(Duration.ofHours(1)),
            pool);
    w.start();
    await("worker idle", () -> w.isProcessing());
    queue.push("x");
    assertThat(ran.await(30, TimeUnit.SECONDS))
        .as("woken by the store's notification, not a poll")
        .isTrue();
    w.stop();
  }
}
