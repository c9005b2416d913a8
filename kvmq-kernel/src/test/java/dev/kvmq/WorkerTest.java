package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The worker end to end on the in-memory store, driven by the fake clock: no threads, no sleeps. */
class WorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  final List<String> ran = new ArrayList<>();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  Worker<String> worker(JobHandler<String> handler, WorkerOptions options) {
    Worker<String> w = queue.worker(handler, options, scheduler);
    w.addListener(events::add);
    w.start();
    return w;
  }

  Worker<String> recording(int concurrency) {
    return worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(concurrency));
  }

  @Test
  void runsJobsInPriorityThenCreationOrder() {
    queue.push("low-1", JobOptions.defaults().priority(-1));
    queue.push("mid-1");
    queue.push("high", JobOptions.defaults().priority(7.5));
    queue.push("mid-2");
    queue.push("low-2", JobOptions.defaults().priority(-1));
    recording(1);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("high", "mid-1", "mid-2", "low-1", "low-2");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(events).hasSize(5).allMatch(e -> e instanceof JobEvent.Completed);
  }

  @Test
  void aDelayedJobDoesNotBlockTheJobsBehindIt() {
    queue.push("delayed", JobOptions.defaults().priority(10).delay(Duration.ofSeconds(30)));
    queue.push("now");
    recording(1);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("now");
    assertThat(queue.counts().delayed()).isEqualTo(1);
    scheduler.advance(Duration.ofSeconds(29));
    assertThat(ran).containsExactly("now");
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ran).containsExactly("now", "delayed");
  }

  @Test
  void failedJobsRetryWithBackoffThenBecomeDeadLetters() {
    AtomicReference<Integer> attempts = new AtomicReference<>(0);
    worker((job, ctx) -> {
      attempts.set(ctx.attempt());
      throw new IllegalStateException("boom " + ctx.attempt());
    }, WorkerOptions.defaults());
    Job<String> job = queue.push("x", JobOptions.defaults().retry(2, Backoff.exponential(Duration.ofSeconds(10), 2, Duration.ofMinutes(1), 0)));
    scheduler.runUntilIdle();
    assertThat(attempts.get()).isEqualTo(1);
    assertThat(queue.job(job.id()).orElseThrow().status()).isEqualTo(JobStatus.DELAYED);
    scheduler.advance(Duration.ofSeconds(9));
    assertThat(attempts.get()).isEqualTo(1);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(attempts.get()).isEqualTo(2);
    scheduler.advance(Duration.ofSeconds(19));
    assertThat(attempts.get()).isEqualTo(2);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(attempts.get()).isEqualTo(3);
    scheduler.advance(Duration.ofHours(1));
    assertThat(attempts.get()).isEqualTo(3);
    List<Job<String>> dead = queue.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).lastError().orElseThrow().message()).isEqualTo("boom 3");
    assertThat(dead.get(0).lastError().orElseThrow().type()).isEqualTo(IllegalStateException.class.getName());
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 1));
    assertThat(events).hasSize(3).allMatch(e -> e instanceof JobEvent.Failed);
    assertThat(((JobEvent.Failed<String>) events.get(2)).dead()).isTrue();
    assertThat(((JobEvent.Failed<String>) events.get(0)).dead()).isFalse();
  }

  @Test
  void repeatsRunAsNewJobsAfterTheirDelay() {
    recording(1);
    queue.push("tick", JobOptions.defaults().repeat(2, Duration.ofMinutes(1)));
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("tick");
    scheduler.advance(Duration.ofMinutes(1));
    scheduler.advance(Duration.ofMinutes(1));
    scheduler.advance(Duration.ofMinutes(5));
    assertThat(ran).containsExactly("tick", "tick", "tick");
    assertThat(queue.jobs()).isEmpty();
  }

  @Test
  void pauseStopsClaimsAndResumeWakesTheWorker() {
    recording(1);
    queue.pause();
    queue.push("a");
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(ran).isEmpty();
    assertThat(queue.isPaused()).isTrue();
    queue.resume();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a");
  }

  @Test
  void deletingAJobBeingProcessedIsRefused() {
    AtomicReference<String> id = new AtomicReference<>();
    worker((job, ctx) -> {
      assertThatThrownBy(() -> queue.delete(job.id())).isInstanceOf(JobProcessingException.class)
          .hasMessageContaining("being processed");
      id.set(job.id());
    }, WorkerOptions.defaults());
    queue.push("a");
    scheduler.runUntilIdle();
    assertThat(id.get()).isNotNull();
    assertThat(events).hasSize(1).allMatch(e -> e instanceof JobEvent.Completed);
  }
}
