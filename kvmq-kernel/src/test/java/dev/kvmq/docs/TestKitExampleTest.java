package dev.kvmq.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The examples of docs/testkit.md, as a real test: if this fails to compile or pass, the docs are
 * wrong. It uses only the public API, the way a user's test would.
 */
class TestKitExampleTest {

  // One fake clock for the queue and the scheduler; no threads, no sleeps.
  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "mail", Codecs.utf8()).clock(clock).build();

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Test
  void aDelayedJobRunsWhenItsTimeComes() {
    List<String> sent = new ArrayList<>();
    Worker<String> worker =
        queue.worker((job, ctx) -> sent.add(job.state()), WorkerOptions.defaults(), scheduler);
    worker.start();

    Job<String> job = queue.push("hello", JobOptions.defaults().delay(Duration.ofMinutes(5)));
    scheduler.runUntilIdle(); // runs everything due now: the job is not due yet
    assertEquals(List.of(), sent);
    assertEquals(JobStatus.DELAYED, queue.job(job.id()).orElseThrow().status());

    scheduler.advance(Duration.ofMinutes(5)); // moves the clock, running what falls due on the way
    assertEquals(List.of("hello"), sent);
    // a completed job is kept for the queue's retention (a day by default), with its outcome
    assertEquals(JobStatus.COMPLETED, queue.job(job.id()).orElseThrow().status());
  }

  @Test
  void failedAttemptsRetryWithBackoffThenBecomeADeadLetter() {
    AtomicBoolean broken = new AtomicBoolean(true);
    List<Integer> attempts = new ArrayList<>();
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              attempts.add(ctx.attempt());
              if (broken.get()) {
                throw new IllegalStateException("mail server down");
              }
            },
            WorkerOptions.defaults(),
            scheduler);
    worker.start();

    // 2 retries: 3 attempts in all, 10 s then 20 s apart (exponential, no jitter).
    Job<String> job =
        queue.push(
            "hello",
            JobOptions.defaults()
                .retry(
                    2, Backoff.exponential(Duration.ofSeconds(10), 2, Duration.ofMinutes(1), 0)));
    scheduler.runUntilIdle();
    assertEquals(List.of(1), attempts);
    assertEquals(JobStatus.DELAYED, queue.job(job.id()).orElseThrow().status());

    scheduler.advance(Duration.ofSeconds(10));
    assertEquals(List.of(1, 2), attempts);
    scheduler.advance(Duration.ofSeconds(20));
    assertEquals(List.of(1, 2, 3), attempts);

    // No retries left: a dead letter, kept with its last error.
    List<Job<String>> dead = queue.deadLetters();
    assertEquals(1, dead.size());
    assertEquals(JobStatus.DEAD, dead.get(0).status());
    assertEquals("mail server down", dead.get(0).lastError().orElseThrow().message());
    assertEquals(new QueueCounts(0, 0, 0, 1), queue.counts());
    assertEquals(List.of(), queue.jobs()); // listings leave dead letters out

    // Fix the cause and replay: the job is due at once, with its retries restored.
    broken.set(false);
    assertTrue(queue.replayDead(job.id()));
    scheduler.runUntilIdle();
    assertEquals(List.of(1, 2, 3, 4), attempts);
    assertEquals(JobStatus.COMPLETED, queue.job(job.id()).orElseThrow().status());
    assertEquals(new QueueCounts(0, 0, 0, 0), queue.counts());
  }

  @Test
  void aListenerSeesEventsAfterTheirCommits() {
    List<JobEvent<String>> events = new ArrayList<>();
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              if (job.state().equals("bad")) {
                throw new IllegalArgumentException("no such address");
              }
            },
            WorkerOptions.defaults(),
            scheduler);
    worker.addListener(events::add);
    worker.start();

    // A job that runs twice: its completion and its repeat are one commit.
    queue.push("digest", JobOptions.defaults().repeat(1, Duration.ofHours(1)));
    scheduler.runUntilIdle();
    assertEquals(1, events.size());
    JobEvent.Completed<String> first = (JobEvent.Completed<String>) events.get(0);
    Job<String> next = first.next().orElseThrow();
    assertEquals(JobStatus.DELAYED, next.status());
    assertEquals(0, next.repeatCount());

    scheduler.advance(Duration.ofHours(1));
    assertEquals(2, events.size());
    JobEvent.Completed<String> second = (JobEvent.Completed<String>) events.get(1);
    assertEquals(next.id(), second.job().id());
    assertEquals(Optional.empty(), second.next());

    // A job with one retry and no backoff: retried at once, then dead.
    queue.push("bad", JobOptions.defaults().retry(1, Backoff.NONE));
    scheduler.runUntilIdle();
    assertEquals(4, events.size());
    JobEvent.Failed<String> retried = (JobEvent.Failed<String>) events.get(2);
    JobEvent.Failed<String> died = (JobEvent.Failed<String>) events.get(3);
    assertFalse(retried.dead());
    assertTrue(died.dead());
    assertEquals(JobStatus.DEAD, died.job().status());
    assertInstanceOf(IllegalArgumentException.class, died.cause());
    assertEquals(IllegalArgumentException.class.getName(), died.error().type());
  }

  @Test
  void aHandlerThatTakesLongerThanItsLeaseKeepsItByRenewal() {
    List<JobEvent<String>> events = new ArrayList<>();
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              // Simulate 30 s of work: the tasks due meanwhile (lease renewals every 2 s) run
              // nested in this call, so the 5 s lease never runs out.
              scheduler.advance(Duration.ofSeconds(30));
            },
            WorkerOptions.defaults(),
            scheduler);
    worker.addListener(events::add);
    worker.start();

    queue.push("slow");
    scheduler.runUntilIdle();
    assertEquals(1, events.size());
    JobEvent.Completed<String> done = (JobEvent.Completed<String>) events.get(0);
    assertEquals(1, done.job().attempt());
  }

  @Test
  void aHandlerThatOutlivesItsLeaseCannotCompleteTheJob() {
    List<JobEvent<String>> events = new ArrayList<>();
    AtomicReference<JobContext<String>> context = new AtomicReference<>();
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              context.set(ctx);
              // Simulate a stall: the lease (5 s by default) runs out while the handler works,
              // and meanwhile the job is deleted (allowed: its lease is no longer live).
              clock.advance(Duration.ofSeconds(6));
              queue.delete(job.id());
            },
            WorkerOptions.defaults(),
            scheduler);
    worker.addListener(events::add);
    worker.start();

    queue.push("hello");
    scheduler.runUntilIdle();
    assertEquals(1, events.size());
    JobEvent.LeaseLost<String> lost = (JobEvent.LeaseLost<String>) events.get(0);
    assertEquals(JobEvent.RefusedOutcome.COMPLETE, lost.refusedOutcome());
    assertEquals(Optional.of(JobContext.CancelReason.LEASE_LOST), context.get().cancelReason());
  }

  @Test
  void stoppingTellsTheRunningHandler() {
    AtomicReference<Optional<JobContext.CancelReason>> seen = new AtomicReference<>();
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              ctx.stopProcessing(); // as if the application were shutting down
              seen.set(ctx.cancelReason());
            },
            WorkerOptions.defaults(),
            scheduler);
    worker.start();

    queue.push("a");
    queue.push("b");
    scheduler.runUntilIdle();
    assertEquals(Optional.of(JobContext.CancelReason.WORKER_STOPPING), seen.get());
    assertFalse(worker.isProcessing());
    CompletableFuture<Void> stopped =
        worker.stop(); // already stopping: completes when all is settled
    scheduler.runUntilIdle();
    assertTrue(stopped.isDone());
    assertEquals(1, queue.counts().waiting()); // "b" was not claimed
  }
}
