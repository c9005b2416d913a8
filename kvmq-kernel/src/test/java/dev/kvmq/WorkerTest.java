package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The worker end to end on the in-memory store, driven by the fake clock: no threads, no sleeps.
 */
class WorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  final List<String> ran = new ArrayList<>();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  Worker<String> worker(JobHandler<String> handler, WorkerOptions options) {
    return worker(handler, options, scheduler);
  }

  Worker<String> worker(JobHandler<String> handler, WorkerOptions options, ManualScheduler on) {
    Worker<String> w = queue.worker(handler, options, on);
    w.addListener(events::add);
    w.start();
    return w;
  }

  Worker<String> recording(int concurrency) {
    return worker(
        (job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(concurrency));
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

  /**
   * More delayed jobs fall due at once than one promotion batch moves ({@link
   * Claimer#MAINTENANCE_BATCH}): 300 low-priority jobs due at t, one high-priority job due at t + 1
   * ms, and the clock jumps past both. The high one runs first (priority, then age), not after the
   * low ones that happened to be promoted in the first batch.
   */
  @Test
  void jobsThatFallDueTogetherRunInPriorityOrderEvenBeyondOnePromotionBatch() {
    int low = Claimer.MAINTENANCE_BATCH + 44;
    List<String> lows = new ArrayList<>();
    for (int i = 0; i < low; i++) {
      lows.add("low-" + i);
    }
    queue.pushAll(lows, JobOptions.defaults().priority(-1).delay(Duration.ofSeconds(10)));
    clock.advance(Duration.ofMillis(1));
    queue.push("high", JobOptions.defaults().priority(5).delay(Duration.ofSeconds(10)));
    worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(1).prefetch(0));
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    clock.advance(Duration.ofSeconds(11));
    scheduler.runUntilIdle();
    assertThat(ran).hasSize(low + 1);
    assertThat(ran.get(0)).as("the high-priority job runs first").isEqualTo("high");
    assertThat(ran.subList(1, ran.size())).containsExactlyElementsOf(lows);
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
    worker(
        (job, ctx) -> {
          attempts.set(ctx.attempt());
          throw new IllegalStateException("boom " + ctx.attempt());
        },
        WorkerOptions.defaults());
    Job<String> job =
        queue.push(
            "x",
            JobOptions.defaults()
                .retry(
                    2, Backoff.exponential(Duration.ofSeconds(10), 2, Duration.ofMinutes(1), 0)));
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
    assertThat(dead.get(0).lastError().orElseThrow().type())
        .isEqualTo(IllegalStateException.class.getName());
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
  void passesReadThePausedKeyAndLookForDueWorkOnlyWhenEitherMayHaveChanged() {
    List<String> reads = new ArrayList<>();
    QueueKeys keys = new QueueKeys("q");
    KvStore counting =
        new ForwardingKvStore(store) {
          @Override
          public Optional<KvEntry> get(Key key) {
            if (key.equals(keys.paused)) {
              reads.add("paused");
            }
            return super.get(key);
          }

          @Override
          public List<KvEntry> list(KeyRange range, int limit, boolean reverse) {
            if (limit == Claimer.MAINTENANCE_BATCH) {
              reads.add("due");
            } else if (limit == 1
                && (sameRange(range, keys.delayed()) || sameRange(range, keys.leased()))) {
              reads.add("next one"); // a first delayUntil or leaseUntil read on its own
            }
            return super.list(range, limit, reverse);
          }

          @Override
          public List<Optional<KvEntry>> firstEntries(List<KeyRange> ranges) {
            if (ranges.stream().anyMatch(r -> sameRange(r, keys.delayed()))
                && ranges.stream().anyMatch(r -> sameRange(r, keys.leased()))) {
              reads.add("next"); // the first delayUntil and leaseUntil, for the next wake
            }
            return super.firstEntries(ranges);
          }
        };
    Queue<String> counted =
        Queue.builder(counting, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
    for (int i = 0; i < 50; i++) {
      counted.push("job-" + i);
    }
    Worker<String> w =
        counted.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler);
    w.start();
    scheduler.runUntilIdle();
    assertThat(ran).hasSize(50);
    // 50 jobs, one at a time: 100 passes or more, which read the paused key once, and look
    // for due delayed jobs, blocked groups to wake and expired leases once (three reads)
    assertThat(reads.stream().filter(r -> !r.equals("next")))
        .containsExactly("paused", "due", "due", "due");

    reads.clear();
    scheduler.advance(WorkerOptions.defaults().pollInterval());
    assertThat(reads)
        .as("an idle pass at its poll reads everything once, the next change in one read")
        .containsExactly("paused", "due", "due", "due", "next");

    reads.clear();
    counted.push("later", JobOptions.defaults().delay(Duration.ofSeconds(10)));
    scheduler.runUntilIdle();
    assertThat(reads.stream().filter(r -> !r.equals("next")))
        .as("a new delayed job is looked at")
        .containsExactly("due", "due", "due");
    scheduler.advance(Duration.ofSeconds(10));
    assertThat(ran).hasSize(51).last().isEqualTo("later");

    reads.clear();
    counted.pause();
    counted.push("paused");
    scheduler.runUntilIdle();
    assertThat(reads).as("a pause is read").contains("paused");
    assertThat(ran).hasSize(51);
    counted.resume();
    scheduler.runUntilIdle();
    assertThat(ran).hasSize(52).last().isEqualTo("paused");
  }

  private static boolean sameRange(KeyRange a, KeyRange b) {
    return java.util.Arrays.equals(a.lowerBound(), b.lowerBound())
        && java.util.Arrays.equals(a.upperBound(), b.upperBound());
  }

  @Test
  void deletingAJobBeingProcessedIsRefused() {
    AtomicReference<String> id = new AtomicReference<>();
    worker(
        (job, ctx) -> {
          assertThatThrownBy(() -> queue.delete(job.id()))
              .isInstanceOf(JobProcessingException.class)
              .hasMessageContaining("being processed");
          id.set(job.id());
        },
        WorkerOptions.defaults());
    queue.push("a");
    scheduler.runUntilIdle();
    assertThat(id.get()).isNotNull();
    assertThat(events).hasSize(1).allMatch(e -> e instanceof JobEvent.Completed);
  }

  /** Jobs claimed ahead ({@link WorkerOptions#prefetch()}). */
  @Nested
  class ClaimingAhead {

    void push(String... states) {
      for (String s : states) {
        queue.push(s);
      }
    }

    @Test
    void aWorkerHoldsUpToPrefetchJobsBeyondItsRunningOnesAndRunsThemInQueueOrder() {
      push("a", "b", "c", "d", "e", "f");
      List<Long> leasedWhileRunning = new ArrayList<>();
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            leasedWhileRunning.add(queue.counts().processing());
          },
          WorkerOptions.defaults().concurrency(1).prefetch(2),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(ran).containsExactly("a", "b", "c", "d", "e", "f");
      // one running and two claimed ahead while jobs were left to claim; none beyond that
      assertThat(leasedWhileRunning.get(0)).isEqualTo(3);
      assertThat(leasedWhileRunning).allMatch(n -> n <= 3);
      assertThat(events).hasSize(6).allMatch(e -> e instanceof JobEvent.Completed);
      assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    }

    @Test
    void aBusyWorkerRefillsItsPrefetchOnlyOnceHalfOfItIsUsed() {
      // concurrency 1, prefetch 4: while "a" runs, each push announces a change of the ready
      // index and the worker's pass runs (nested, on the manual scheduler). It claims the new
      // job while fewer than half of the 4 jobs it may claim ahead are waiting (2 free of 4 is
      // half: claimed), and not once 3 wait: claims of a job or two each would cost a commit
      // each. Handlers that finish ask for the refill.
      queue.push("a");
      List<Long> leasedAfterPush = new ArrayList<>();
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            if (job.state().equals("a")) {
              for (String s : List.of("b", "c", "d", "e", "f", "g")) {
                queue.push(s);
                scheduler.runUntilIdle();
                leasedAfterPush.add(queue.counts().processing());
              }
            }
          },
          WorkerOptions.defaults().concurrency(1).prefetch(4),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(leasedAfterPush).containsExactly(2L, 3L, 4L, 4L, 4L, 4L);
      assertThat(ran).containsExactly("a", "b", "c", "d", "e", "f", "g");
      assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    }

    @Test
    void withoutPrefetchAWorkerClaimsOnlyForFreeSlots() {
      push("a", "b", "c", "d");
      List<Long> leasedWhileRunning = new ArrayList<>();
      worker(
          (job, ctx) -> leasedWhileRunning.add(queue.counts().processing()),
          WorkerOptions.defaults().concurrency(1),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(leasedWhileRunning).containsExactly(1L, 1L, 1L, 1L);
    }

    @Test
    void stoppingPutsTheJobsClaimedAheadBackInTheirPlaceWithTheirAttemptUncounted() {
      push("a", "b", "c", "d");
      Worker<String> first =
          worker(
              (job, ctx) -> {
                ran.add(job.state());
                ctx.stopProcessing(); // the worker stops while "b", "c" and "d" wait for its one
                // slot
              },
              WorkerOptions.defaults().concurrency(1).prefetch(3),
              scheduler);
      scheduler.runUntilIdle();
      assertThat(ran).containsExactly("a");
      assertThat(first.stop()).isCompleted();
      assertThat(first.activeJobs()).isEmpty();
      assertThat(queue.counts()).isEqualTo(new QueueCounts(3, 0, 0, 0));
      assertThat(queue.jobs()).extracting(e -> e.job().attempt()).containsOnly(0);

      List<Integer> attempts = new ArrayList<>();
      ManualScheduler next = new ManualScheduler(clock);
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            attempts.add(ctx.attempt());
          },
          WorkerOptions.defaults(),
          next);
      next.runUntilIdle();
      assertThat(ran).containsExactly("a", "b", "c", "d");
      assertThat(attempts).containsExactly(1, 1, 1);
    }

    @Test
    void aPausePutsTheJobsClaimedAheadBackAndStartsNoMoreUntilResumed() {
      push("a", "b", "c", "d", "e");
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            if (job.state().equals("a")) {
              queue.pause(); // while "b" and "c" wait, claimed ahead
            }
          },
          WorkerOptions.defaults().concurrency(1).prefetch(2),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(ran).containsExactly("a");
      assertThat(queue.counts()).isEqualTo(new QueueCounts(4, 0, 0, 0));
      scheduler.advance(Duration.ofMinutes(1));
      assertThat(ran).containsExactly("a");
      queue.resume();
      scheduler.runUntilIdle();
      assertThat(ran).containsExactly("a", "b", "c", "d", "e");
      assertThat(events).hasSize(5).allMatch(e -> e instanceof JobEvent.Completed);
    }

    @Test
    void leasesOfJobsClaimedAheadAreRenewedWhileTheyWait() {
      push("long", "next");
      List<String> ranByOther = new ArrayList<>();
      ManualScheduler other = new ManualScheduler(clock);
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            if (job.state().equals("long")) {
              // works for 20 s, four leases long; the renewals due meanwhile run nested
              for (int i = 0; i < 20; i++) {
                scheduler.advance(Duration.ofSeconds(1));
              }
              // another worker finds nothing to take: both leases are live
              worker((j, c) -> ranByOther.add(j.state()), WorkerOptions.defaults(), other);
              other.runUntilIdle();
            }
          },
          WorkerOptions.defaults()
              .concurrency(1)
              .prefetch(1)
              .lease(Duration.ofSeconds(5), Duration.ofSeconds(2)),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(ranByOther).isEmpty();
      assertThat(ran).containsExactly("long", "next");
      assertThat(events).hasSize(2).allMatch(e -> e instanceof JobEvent.Completed);
    }

    @Test
    void aJobClaimedAheadThatAnotherWorkerTookOverIsNotRun() {
      push("a", "b");
      List<String> ranByOther = new ArrayList<>();
      ManualScheduler other = new ManualScheduler(clock);
      worker(
          (job, ctx) -> {
            ran.add(job.state());
            // this worker stalls (no renewals) past both leases; another worker takes both jobs
            clock.advance(Duration.ofSeconds(6));
            worker((j, c) -> ranByOther.add(j.state()), WorkerOptions.defaults(), other);
            other.runUntilIdle();
          },
          WorkerOptions.defaults()
              .concurrency(1)
              .prefetch(1)
              .lease(Duration.ofSeconds(5), Duration.ofSeconds(2)),
          scheduler);
      scheduler.runUntilIdle();
      assertThat(ranByOther).containsExactly("a", "b");
      assertThat(ran)
          .as("b was taken over while it waited, so it did not run here")
          .containsExactly("a");
      assertThat(events)
          .filteredOn(e -> e instanceof JobEvent.LeaseLost)
          .extracting(e -> ((JobEvent.LeaseLost<String>) e).refusedOutcome())
          .containsExactlyInAnyOrder(
              JobEvent.RefusedOutcome.COMPLETE, JobEvent.RefusedOutcome.START);
      assertThat(events)
          .filteredOn(e -> e instanceof JobEvent.LeaseLost)
          .as("taken over, not cancelled")
          .noneMatch(e -> ((JobEvent.LeaseLost<String>) e).cancelled());
      assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    }
  }
}
