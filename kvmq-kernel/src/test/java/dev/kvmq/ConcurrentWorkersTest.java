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
      w.addListener(
          e -> {
            if (e instanceof JobEvent.Completed) {
              completedEvents.incrementAndGet();
            }
          });
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
