package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One regression test per defect of the seed (design.md, "Known defects of the seed"), each named
 * for what it reproduces.
 */
class SeedDefectsTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final FaultyStore store = new FaultyStore(new InMemoryKvStore());
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8())
          .clock(clock)
          .random(new Random(3))
          .retention(Retention.none()) // the seed's completion: the job is gone
          .build();

  @AfterEach
  void close() {
    store.close();
  }

  /** Defect 1: completion deleted the job, then wrote the repeat; a crash in between lost it. */
  @Test
  void defect1_aCrashDuringCompletionLosesNeitherTheJobNorItsRepeat() {
    List<String> runs = new ArrayList<>();
    queue.worker((job, ctx) -> runs.add(job.id()), WorkerOptions.defaults(), scheduler).start();
    // The completion commit "crashes": the store fails it before it applies.
    store.failCommits(
        op ->
            op.mutations().stream().anyMatch(m -> m.isDelete() && m.key().parts().contains("job")),
        FaultyStore.Mode.BEFORE_APPLY);
    Job<String> job = queue.push("tick", JobOptions.defaults().repeat(1, Duration.ZERO));
    scheduler.runUntilIdle();
    assertThat(runs).containsExactly(job.id());
    // The store fails every try of the completion while the lease lasts (the worker tries again
    // until then), so the completion is lost, as when the process dies.
    scheduler.advance(Duration.ofMillis(4_500));
    assertThat(runs).containsExactly(job.id());
    assertThat(queue.job(job.id())).as("the job survives the failed completion").isPresent();
    // The store is back; the lease expires and the job runs again, then repeats once.
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofSeconds(6));
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(runs).hasSize(3);
    assertThat(runs.get(1)).isEqualTo(job.id());
    assertThat(runs.get(2)).isNotEqualTo(job.id());
    assertThat(queue.jobs()).isEmpty();
  }

  /**
   * Defect 2: a worker whose lease renewal failed kept running and could complete a job that
   * another worker now held. Here worker A stalls past its lease (its executor can't run its
   * renewals), B takes the job over and completes it; A is told, and its completion is refused.
   */
  @Test
  void defect2_aWorkerThatLostItsLeaseIsToldAndCannotCompleteTheJob() {
    ManualScheduler schedulerA = new ManualScheduler(clock);
    List<JobEvent<String>> eventsA = new ArrayList<>();
    List<JobEvent<String>> eventsB = new ArrayList<>();
    AtomicReference<JobContext<String>> contextA = new AtomicReference<>();
    AtomicBoolean cancelledInsideA = new AtomicBoolean();
    AtomicReference<Throwable> updateAfterLoss = new AtomicReference<>();
    Worker<String> b =
        queue.worker(
            (job, ctx) -> assertThat(ctx.token()).isEqualTo(2),
            WorkerOptions.defaults(),
            scheduler);
    b.addListener(eventsB::add);
    Worker<String> a =
        queue.worker(
            (job, ctx) -> {
              contextA.set(ctx);
              assertThat(ctx.token()).isEqualTo(1);
              b.start();
              clock.advance(Duration.ofSeconds(10)); // A stalls: no renewal runs on its executor
              scheduler.runUntilIdle(); // B reclaims the expired lease and completes the job
              schedulerA.runUntilIdle(); // A's renewal finally runs and finds the lease gone
              cancelledInsideA.set(ctx.isCancelled());
              try {
                ctx.update("overwrite");
              } catch (LeaseLostException e) {
                updateAfterLoss.set(e);
              }
            },
            WorkerOptions.defaults(),
            schedulerA);
    a.addListener(eventsA::add);
    queue.push("job");
    a.start();
    schedulerA.runUntilIdle();

    assertThat(cancelledInsideA).isTrue();
    assertThat(contextA.get().cancelReason()).contains(JobContext.CancelReason.LEASE_LOST);
    assertThat(updateAfterLoss.get()).isInstanceOf(LeaseLostException.class);
    assertThat(eventsB).singleElement().isInstanceOf(JobEvent.Completed.class);
    assertThat(eventsA).singleElement().isInstanceOf(JobEvent.LeaseLost.class);
    assertThat(queue.jobs()).isEmpty();
  }

  /** Defect 3: when retries ran out the job was deleted; nothing was kept to inspect or replay. */
  @Test
  void defect3_exhaustedRetriesKeepTheJobAsADeadLetterThatCanBeReplayed() {
    AtomicInteger attempts = new AtomicInteger();
    AtomicBoolean fail = new AtomicBoolean(true);
    queue
        .worker(
            (job, ctx) -> {
              attempts.incrementAndGet();
              if (fail.get()) {
                throw new IllegalArgumentException("bad input " + job.state());
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    Job<String> job = queue.push("x", JobOptions.defaults().retry(1, Backoff.NONE));
    scheduler.runUntilIdle();
    assertThat(attempts).hasValue(2);
    Job<String> dead = queue.deadLetters().get(0);
    assertThat(dead.id()).isEqualTo(job.id());
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.lastError().orElseThrow().message()).isEqualTo("bad input x");
    fail.set(false);
    assertThat(queue.replayDead(job.id())).isTrue();
    scheduler.runUntilIdle();
    assertThat(attempts).hasValue(3);
    assertThat(queue.deadLetters()).isEmpty();
    assertThat(queue.job(job.id())).isEmpty();
  }

  /** Defect 4: the retry delay was fixed; there was no backoff. */
  @Test
  void defect4_retriesBackOffExponentiallyUpToTheCap() {
    List<Long> attemptTimes = new ArrayList<>();
    long start = clock.millis();
    queue
        .worker(
            (job, ctx) -> {
              attemptTimes.add(clock.millis() - start);
              throw new RuntimeException("again");
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    queue.push(
        "x",
        JobOptions.defaults()
            .retry(4, Backoff.exponential(Duration.ofSeconds(1), 3, Duration.ofSeconds(5), 0)));
    scheduler.advance(Duration.ofMinutes(1));
    // waits 1 s, 3 s, then capped at 5 s, 5 s
    assertThat(attemptTimes).containsExactly(0L, 1_000L, 4_000L, 9_000L, 14_000L);
  }

  /** Defect 5: every claim scanned the whole queue, and idle workers polled every 3 s. */
  @Test
  void defect5_aClaimReadsABoundedRangeAndAnIdleWorkerWakesOnPush() {
    List<String> ran = new ArrayList<>();
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      many.add("later-" + i);
    }
    queue.pushAll(many, JobOptions.defaults().delay(Duration.ofDays(1)));
    queue.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    long listedBefore = store.listedEntries.get();
    queue.push("now");
    scheduler.runUntilIdle(); // no time passes: the push's notification wakes the worker
    assertThat(ran).containsExactly("now");
    assertThat(store.listedEntries.get() - listedBefore)
        .as("entries read to claim one job behind 5,000 delayed ones")
        .isLessThan(20);
  }

  /** Defect 6: deleteWaitingJobs was not atomic, and deleteJob deleted a job being processed. */
  @Test
  void defect6_deleteWaitingIsOneAtomicOperationAndSparesTheJobBeingProcessed() {
    AtomicReference<String> processingId = new AtomicReference<>();
    AtomicInteger deleted = new AtomicInteger();
    AtomicLong commitsDuringDelete = new AtomicLong();
    queue
        .worker(
            (job, ctx) -> {
              processingId.set(job.id());
              long before = store.commitCalls.get();
              deleted.set(queue.deleteWaiting());
              commitsDuringDelete.set(store.commitCalls.get() - before);
              assertThatThrownBy(() -> queue.delete(job.id()))
                  .isInstanceOf(JobProcessingException.class);
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    queue.push("first", JobOptions.defaults().priority(1));
    queue.pushAll(List.of("a", "b", "c"), JobOptions.defaults());
    queue.push("d", JobOptions.defaults().delay(Duration.ofHours(1)));
    scheduler.runUntilIdle();
    assertThat(deleted).hasValue(4);
    assertThat(commitsDuringDelete).hasValue(1);
    assertThat(queue.jobs()).isEmpty();
  }

  /** Defect 7: listenUpdates polled, and reported only when the list of ids changed. */
  @Test
  void defect7_listenersSeeStatusChangesWithoutPolling() {
    List<List<JobStatus>> seen = new ArrayList<>();
    queue.listen(
        scheduler,
        Duration.ofHours(1),
        entries -> seen.add(entries.stream().map(JobEntry::status).toList()));
    scheduler.runUntilIdle();
    assertThat(seen).containsExactly(List.of());
    queue.push("a", JobOptions.defaults().delay(Duration.ofSeconds(5)));
    scheduler.runUntilIdle();
    assertThat(seen).last().isEqualTo(List.of(JobStatus.DELAYED));
    scheduler.advance(
        Duration.ofSeconds(5)); // no commit: the listener's own timer sees the delay pass
    assertThat(seen).last().isEqualTo(List.of(JobStatus.WAITING));
    AtomicReference<List<JobStatus>> duringRun = new AtomicReference<>();
    queue
        .worker(
            (job, ctx) -> {
              scheduler.runUntilIdle();
              duringRun.set(seen.get(seen.size() - 1));
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(duringRun.get()).as("same id, new status").isEqualTo(List.of(JobStatus.PROCESSING));
    assertThat(seen).last().isEqualTo(List.of());
  }

  /** Defect 8: stopProcessing gave running handlers no signal. */
  @Test
  void defect8_stoppingTellsRunningHandlers() {
    AtomicReference<Worker<String>> worker = new AtomicReference<>();
    AtomicReference<JobContext.CancelReason> reason = new AtomicReference<>();
    AtomicBoolean callbackRan = new AtomicBoolean();
    worker.set(
        queue.worker(
            (job, ctx) -> {
              ctx.onCancel(() -> callbackRan.set(true));
              var stopped = worker.get().stop();
              assertThat(stopped).isNotDone(); // waits for this handler
              reason.set(ctx.cancelReason().orElse(null));
            },
            WorkerOptions.defaults(),
            scheduler));
    worker.get().start();
    queue.push("a");
    queue.push("b");
    scheduler.runUntilIdle();
    assertThat(reason.get()).isEqualTo(JobContext.CancelReason.WORKER_STOPPING);
    assertThat(callbackRan).isTrue();
    assertThat(worker.get().stop()).isDone();
    assertThat(worker.get().isProcessing()).isFalse();
    assertThat(queue.jobs()).extracting(e -> e.job().state()).containsExactly("b");
  }
}
