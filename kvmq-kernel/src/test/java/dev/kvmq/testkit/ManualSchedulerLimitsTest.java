package dev.kvmq.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run of the {@link ManualScheduler} is bounded: a handler that fails or repeats forever makes
 * the test fail with a message saying what was still running, instead of hanging it. Each case also
 * runs under a preemptive timeout, so that a regression fails instead of hanging the build.
 */
class ManualSchedulerLimitsTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "flaky", Codecs.utf8()).clock(clock).build();
  final AtomicInteger runs = new AtomicInteger();

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void aHandlerThatFailsForeverFailsTheRunWithWhatWasRunning() {
    ManualScheduler scheduler = new ManualScheduler(clock, 1_000, Duration.ofHours(1));
    queue
        .worker(
            (job, ctx) -> {
              runs.incrementAndGet();
              throw new IllegalStateException("always");
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    queue.push("x", JobOptions.defaults().retry(Integer.MAX_VALUE, Backoff.NONE));
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () ->
            assertThatThrownBy(scheduler::runUntilIdle)
                .isInstanceOf(ManualScheduler.RunawayException.class)
                .hasMessageContaining("it ran 1000 tasks (limit 1000)")
                .hasMessageContaining("of queue flaky")
                .hasMessageContaining("Still scheduled: ")
                .hasMessageContaining("due " + clock.instant())
                .hasMessageContaining("new ManualScheduler(clock, maxTasks, maxSpan)"));
    assertThat(runs.get())
        .as("the handler ran, over and over, then the run stopped")
        .isGreaterThan(10);
  }

  @Test
  void aJobThatRepeatsForeverWithNoDelayFailsTheRunAtTheDefaultLimit() {
    ManualScheduler scheduler = new ManualScheduler(clock);
    queue.worker((job, ctx) -> runs.incrementAndGet(), WorkerOptions.defaults(), scheduler).start();
    queue.push("again", JobOptions.defaults().repeat(JobOptions.REPEAT_FOREVER, Duration.ZERO));
    assertTimeoutPreemptively(
        Duration.ofSeconds(120),
        () ->
            assertThatThrownBy(scheduler::runUntilIdle)
                .isInstanceOf(ManualScheduler.RunawayException.class)
                .hasMessageContaining("it ran " + ManualScheduler.DEFAULT_MAX_TASKS + " tasks")
                .hasMessageContaining("of queue flaky"));
    assertThat(runs.get()).isGreaterThan(1_000);
  }

  @Test
  void aHandlerThatKeepsMovingTheClockFailsTheRunPastTheSpan() {
    ManualScheduler scheduler = new ManualScheduler(clock, Integer.MAX_VALUE, Duration.ofDays(1));
    Instant start = clock.instant();
    queue
        .worker(
            (job, ctx) -> scheduler.advance(Duration.ofHours(1)),
            WorkerOptions.defaults(),
            scheduler)
        .start();
    queue.push("slow", JobOptions.defaults().repeat(JobOptions.REPEAT_FOREVER, Duration.ZERO));
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () ->
            assertThatThrownBy(() -> scheduler.advance(Duration.ofHours(2)))
                .isInstanceOf(ManualScheduler.RunawayException.class)
                .hasMessageContaining(
                    "past the limit " + start.plus(Duration.ofHours(2)).plus(Duration.ofDays(1))));
  }

  /**
   * A long advance over an idle worker's periodic tasks reaches the task limit too; the message
   * says the clock moved and how to pass the time, and an advance in steps passes it.
   */
  @Test
  void aLongAdvanceOverAnIdleWorkerSaysItMayBeItsPeriodicTasksAndStepsPassIt() {
    ManualScheduler scheduler = new ManualScheduler(clock, 1_000, Duration.ofDays(30));
    queue.worker((job, ctx) -> runs.incrementAndGet(), WorkerOptions.defaults(), scheduler).start();
    queue.push("x");
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () ->
            assertThatThrownBy(() -> scheduler.advance(Duration.ofHours(1)))
                .isInstanceOf(ManualScheduler.RunawayException.class)
                .hasMessageContaining("it ran 1000 tasks (limit 1000)")
                .hasMessageContaining("may be a worker's periodic tasks")
                .hasMessageContaining("Advance in smaller steps"));
    Instant before = clock.instant();
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> {
          for (int i = 0; i < 12; i++) {
            scheduler.advance(Duration.ofMinutes(5));
          }
        });
    assertThat(clock.instant()).isEqualTo(before.plus(Duration.ofHours(1)));
    assertThat(runs).hasValue(1);
  }

  @Test
  void runsWithinTheLimitsAreUnchanged() {
    ManualScheduler scheduler = new ManualScheduler(clock, 10, Duration.ZERO);
    AtomicInteger ticks = new AtomicInteger();
    scheduler.schedule(ticks::incrementAndGet, 5, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(scheduler.advance(Duration.ofSeconds(5))).isEqualTo(1);
    assertThat(ticks).hasValue(1);
    assertThat(scheduler.runUntilIdle()).isZero();
  }

  @Test
  void limitsAreChecked() {
    assertThatThrownBy(() -> new ManualScheduler(clock, 0, Duration.ofHours(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxTasks");
    assertThatThrownBy(() -> new ManualScheduler(clock, 1, Duration.ofHours(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxSpan");
  }
}
