package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Job control end to end on the in-memory store, driven by the fake clock (docs/semantics.md,
 * "Cancel", "Timeouts", "Permanent failures", "Snooze", "Poison jobs"). A handler that "runs for a
 * while" moves the clock itself with {@code scheduler.advance}, so the worker's timers and renewals
 * run nested in it, on the test's thread.
 */
class ControlWorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore memory = new InMemoryKvStore();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    memory.close();
    Thread.interrupted(); // a failed test must not leave the flag to the next one
  }

  Queue.Builder<String> builder(KvStore store) {
    return Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(1));
  }

  Worker<String> start(Queue<String> queue, JobHandler<String> handler) {
    Worker<String> w = queue.worker(handler, WorkerOptions.defaults(), scheduler);
    w.addListener(events::add);
    w.start();
    return w;
  }

  // ---- cancel

  @Test
  void aJobThatHasNotRunIsCancelledKeptAndNeverRun() {
    Queue<String> queue = builder(memory).build();
    Job<String> waiting = queue.push("waiting");
    Job<String> delayed = queue.push("delayed", JobOptions.defaults().delay(Duration.ofMinutes(1)));
    Job<String> held = queue.holdAll(List.of("held"), JobOptions.defaults()).get(0);
    clock.advance(Duration.ofSeconds(3));
    for (Job<String> j : List.of(waiting, delayed, held)) {
      assertThat(queue.cancel(j.id())).isTrue();
      Job<String> c = queue.job(j.id()).orElseThrow();
      assertThat(c.status()).isEqualTo(JobStatus.CANCELLED);
      assertThat(c.cancelledAt()).contains(clock.instant());
      assertThat(c.state()).isEqualTo(j.state());
    }
    assertThat(queue.releaseHeld(List.of(held.id()))).as("a cancelled job is not held").isZero();
    List<String> ran = new ArrayList<>();
    start(queue, (job, ctx) -> ran.add(job.state()));
    scheduler.advance(Duration.ofMinutes(2));
    assertThat(ran).isEmpty();
    assertThat(queue.jobs()).as("cancelled jobs have left the queue").isEmpty();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(memory.count(queue.keys.cancelled())).isEqualTo(3);
    assertThatThrownBy(() -> queue.jobs(JobStatus.CANCELLED, 0, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("job(id)");
  }

  @Test
  void aDeadLetterACancelledJobAndNoJobAreNotCancelledAndACancelledJobCanBeDeleted() {
    Queue<String> queue = builder(memory).build();
    start(
        queue,
        (job, ctx) -> {
          throw new IllegalStateException("no");
        });
    Job<String> dead = queue.push("dead");
    scheduler.runUntilIdle();
    assertThat(queue.job(dead.id()).orElseThrow().status()).isEqualTo(JobStatus.DEAD);
    assertThat(queue.cancel(dead.id())).isFalse();
    assertThat(queue.cancel(Ulid.format(1, 2, 3))).isFalse();
    assertThat(queue.cancel("not an id")).isFalse();
    queue.pause();
    Job<String> j = queue.push("j");
    assertThat(queue.cancel(j.id())).isTrue();
    assertThat(queue.cancel(j.id())).as("cancelled already").isFalse();
    assertThat(queue.delete(j.id())).isTrue();
    assertThat(queue.job(j.id())).isEmpty();
    assertThat(memory.count(queue.keys.cancelled())).isZero();
  }

  /**
   * The fencing, end to end: the cancel's commit revokes the running job's lease; the handler is
   * told at once (the store notifies), and its completion is refused: the job stays CANCELLED.
   */
  @Test
  void cancellingARunningJobTellsItsHandlerAndRefusesItsCompletion() {
    Queue<String> queue = builder(memory).build();
    AtomicReference<Optional<JobContext.CancelReason>> seen = new AtomicReference<>();
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    AtomicInteger actions = new AtomicInteger();
    start(
        queue,
        (job, ctx) -> {
          ctx.onCancel(actions::incrementAndGet);
          assertThat(queue.cancel(job.id())).isTrue();
          scheduler.runUntilIdle(); // the worker hears of it
          seen.set(ctx.cancelReason());
          interrupted.set(Thread.currentThread().isInterrupted());
        });
    Job<String> j = queue.push("x");
    scheduler.runUntilIdle();
    assertThat(seen.get()).contains(JobContext.CancelReason.CANCELLED);
    assertThat(interrupted.get()).as("not asked to interrupt").isFalse();
    assertThat(actions.get()).isEqualTo(1);
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
    assertThat(events)
        .singleElement()
        .satisfies(
            e -> {
              JobEvent.LeaseLost<String> lost = (JobEvent.LeaseLost<String>) e;
              assertThat(lost.refusedOutcome()).isEqualTo(JobEvent.RefusedOutcome.COMPLETE);
              assertThat(lost.cancelled()).as("a cancel, not a lost lease").isTrue();
            });
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
  }

  @Test
  void aCancelInterruptsTheHandlersThreadWhenTheJobSaysSoAndTheFlagDoesNotOutliveTheRun() {
    Queue<String> queue = builder(memory).build();
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    start(
        queue,
        (job, ctx) -> {
          queue.cancel(job.id());
          scheduler.runUntilIdle();
          interrupted.set(Thread.currentThread().isInterrupted());
        });
    queue.push("x", JobOptions.defaults().interruptOnCancel(true));
    scheduler.runUntilIdle();
    assertThat(interrupted.get()).isTrue();
    assertThat(Thread.currentThread().isInterrupted())
        .as("the worker clears the interrupt it set once the handler returned")
        .isFalse();
  }

  @Test
  void onAStoreThatCannotNotifyTheNextRenewalFindsTheCancel() {
    Queue<String> queue = builder(quiet()).build();
    AtomicReference<Optional<JobContext.CancelReason>> right = new AtomicReference<>();
    AtomicReference<Optional<JobContext.CancelReason>> later = new AtomicReference<>();
    start(
        queue,
        (job, ctx) -> {
          queue.cancel(job.id());
          scheduler.runUntilIdle();
          right.set(ctx.cancelReason());
          scheduler.advance(WorkerOptions.defaults().renewInterval());
          later.set(ctx.cancelReason());
        });
    Job<String> j = queue.push("x");
    scheduler.runUntilIdle();
    assertThat(right.get()).as("no notification: not yet").isEmpty();
    assertThat(later.get()).contains(JobContext.CancelReason.CANCELLED);
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
  }

  /**
   * A cancel the worker has not heard of when the handler returns (no notification, no renewal yet)
   * is found by the refused completion's read of the record: the event says cancelled, not a lease
   * lost.
   */
  @Test
  void aCancelFoundOnlyByTheRefusedCompletionIsReportedAsACancel() {
    Queue<String> queue = builder(quiet()).build();
    AtomicReference<Optional<JobContext.CancelReason>> atReturn = new AtomicReference<>();
    start(
        queue,
        (job, ctx) -> {
          queue.cancel(job.id());
          atReturn.set(ctx.cancelReason());
        });
    Job<String> j = queue.push("x");
    scheduler.runUntilIdle();
    assertThat(atReturn.get()).as("not heard before the handler returned").isEmpty();
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
    assertThat(events)
        .singleElement()
        .satisfies(
            e -> {
              JobEvent.LeaseLost<String> lost = (JobEvent.LeaseLost<String>) e;
              assertThat(lost.refusedOutcome()).isEqualTo(JobEvent.RefusedOutcome.COMPLETE);
              assertThat(lost.cancelled()).isTrue();
            });
  }

  @Test
  void aJobClaimedAheadAndCancelledBeforeItStartsDoesNotRun() {
    Queue<String> queue = builder(memory).build();
    List<String> ran = new ArrayList<>();
    AtomicReference<String> second = new AtomicReference<>();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              ran.add(job.state());
              if (job.state().equals("first")) {
                queue.cancel(second.get()); // claimed ahead, waiting for this slot
                scheduler.runUntilIdle();
              }
            },
            WorkerOptions.defaults().concurrency(1).prefetch(1),
            scheduler);
    w.addListener(events::add);
    queue.push("first");
    second.set(queue.push("second").id());
    w.start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("first");
    assertThat(queue.job(second.get()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
    assertOneRefusedStart();
  }

  /**
   * As above, with nothing run between the cancel and the next start: the handler thread takes the
   * job claimed ahead before the cancel check the store's notification scheduled has run. It once
   * started the job (only its completion was refused), found by a new user's test.
   */
  @Test
  void aJobClaimedAheadIsNotStartedOnceItsCancelHasReturnedEvenBeforeTheWorkersCheckRan() {
    Queue<String> queue = builder(memory).build();
    List<String> ran = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              ran.add(job.state());
              if (job.state().equals("p0")) {
                assertThat(queue.cancel(ids.get(1))).isTrue(); // claimed ahead, waiting
              }
            },
            WorkerOptions.defaults().concurrency(1).prefetch(2),
            scheduler);
    w.addListener(events::add);
    queue.pushAll(List.of("p0", "p1", "p2"), JobOptions.defaults()).forEach(j -> ids.add(j.id()));
    w.start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("p0", "p2");
    assertThat(queue.job(ids.get(1)).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
    assertOneRefusedStart();
  }

  /** The test's store, seen as one that cannot notify changes. */
  private KvStore quiet() {
    return new ForwardingKvStore(memory) {
      @Override
      public boolean notifiesChanges() {
        return false;
      }
    };
  }

  /** The worker reported one lost lease, and the outcome it refused was the start. */
  private void assertOneRefusedStart() {
    assertThat(events)
        .filteredOn(e -> e instanceof JobEvent.LeaseLost)
        .singleElement()
        .satisfies(
            e -> {
              JobEvent.LeaseLost<String> lost = (JobEvent.LeaseLost<String>) e;
              assertThat(lost.refusedOutcome()).isEqualTo(JobEvent.RefusedOutcome.START);
              assertThat(lost.cancelled()).as("a cancel, not a lost lease").isTrue();
            });
  }

  // ---- timeouts

  @Test
  void aRunOverItsTimeoutIsToldToStopFailsWithATimeoutIsRetriedThenDead() {
    Queue<String> queue = builder(memory).build();
    List<Optional<JobContext.CancelReason>> seen = new ArrayList<>();
    start(
        queue,
        (job, ctx) -> {
          scheduler.advance(Duration.ofSeconds(11)); // the handler overruns its 10 s
          seen.add(ctx.cancelReason());
        });
    Job<String> j =
        queue.push(
            "slow",
            JobOptions.defaults()
                .timeout(Duration.ofSeconds(10))
                .retry(1, Backoff.fixed(Duration.ofMinutes(1))));
    scheduler.runUntilIdle();
    assertThat(seen).containsExactly(Optional.of(JobContext.CancelReason.TIMED_OUT));
    Job<String> retried = queue.job(j.id()).orElseThrow();
    assertThat(retried.status()).isEqualTo(JobStatus.DELAYED);
    assertThat(retried.lastError().orElseThrow().type())
        .isEqualTo(JobTimeoutException.class.getName());
    assertThat(retried.lastError().orElseThrow().message()).contains("PT10S");
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(seen).hasSize(2);
    Job<String> dead = queue.job(j.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.lastError().orElseThrow().type())
        .isEqualTo(JobTimeoutException.class.getName());
    assertThat(events).hasSize(2).allMatch(e -> e instanceof JobEvent.Failed);
    assertThat(((JobEvent.Failed<String>) events.get(1)).cause())
        .isInstanceOf(JobTimeoutException.class);
  }

  @Test
  void theQueuesDefaultTimeoutAppliesToJobsWithoutTheirOwnAndARunWithinItCompletes() {
    Queue<String> queue = builder(memory).defaultTimeout(Duration.ofSeconds(2)).build();
    List<Optional<JobContext.CancelReason>> seen = new ArrayList<>();
    start(
        queue,
        (job, ctx) -> {
          scheduler.advance(Duration.ofSeconds(Long.parseLong(job.state())));
          seen.add(ctx.cancelReason());
        });
    Job<String> quick = queue.push("1");
    Job<String> slow = queue.push("3");
    Job<String> allowed = queue.push("3", JobOptions.defaults().timeout(Duration.ofSeconds(4)));
    scheduler.runUntilIdle();
    assertThat(queue.job(quick.id()).map(Job::status))
        .as("completed")
        .hasValue(JobStatus.COMPLETED);
    assertThat(queue.job(allowed.id()).map(Job::status))
        .as("its own timeout comes first")
        .hasValue(JobStatus.COMPLETED);
    assertThat(queue.job(slow.id()).orElseThrow().status()).isEqualTo(JobStatus.DEAD);
    assertThat(seen)
        .containsExactly(
            Optional.empty(), Optional.of(JobContext.CancelReason.TIMED_OUT), Optional.empty());
  }

  @Test
  void aTimeoutInterruptsTheHandlerWhenTheJobSaysSo() {
    Queue<String> queue = builder(memory).build();
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    start(
        queue,
        (job, ctx) -> {
          scheduler.advance(Duration.ofSeconds(2));
          interrupted.set(Thread.currentThread().isInterrupted());
        });
    queue.push("x", JobOptions.defaults().timeout(Duration.ofSeconds(1)).interruptOnCancel(true));
    scheduler.runUntilIdle();
    assertThat(interrupted.get()).isTrue();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  // ---- permanent failures

  @Test
  void failPermanentlyMakesADeadLetterWhateverRetriesAreLeft() {
    Queue<String> queue = builder(memory).build();
    start(queue, (job, ctx) -> ctx.failPermanently("the address does not exist"));
    Job<String> j = queue.push("x", JobOptions.defaults().retry(5, Backoff.NONE));
    scheduler.runUntilIdle();
    Job<String> dead = queue.job(j.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.attempt()).isEqualTo(1);
    assertThat(dead.lastError().orElseThrow().type()).isEqualTo(JobError.PERMANENT_FAILURE);
    assertThat(dead.lastError().orElseThrow().message()).isEqualTo("the address does not exist");
    assertThat(((JobEvent.Failed<String>) events.get(0)).dead()).isTrue();
  }

  @Test
  void aNonRetryableExceptionTypeOrASubclassMakesADeadLetterAtOnceOthersAreRetried() {
    Queue<String> queue =
        builder(memory).nonRetryable(List.of(IllegalArgumentException.class)).build();
    assertThat(queue.nonRetryable()).containsExactly(IllegalArgumentException.class);
    start(
        queue,
        (job, ctx) -> {
          if (job.state().equals("bad number")) {
            throw new NumberFormatException("x");
          }
          throw new IllegalStateException("try again");
        });
    Job<String> bad = queue.push("bad number", JobOptions.defaults().retry(3, Backoff.NONE));
    Job<String> flaky =
        queue.push("flaky", JobOptions.defaults().retry(3, Backoff.fixed(Duration.ofHours(1))));
    scheduler.runUntilIdle();
    Job<String> dead = queue.job(bad.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.lastError().orElseThrow().type())
        .isEqualTo(NumberFormatException.class.getName());
    assertThat(queue.job(flaky.id()).orElseThrow().status()).isEqualTo(JobStatus.DELAYED);
  }

  // ---- snooze

  @Test
  void aSnoozedJobComesBackLaterWithoutUsingARetry() {
    Queue<String> queue = builder(memory).build();
    List<Integer> attempts = new ArrayList<>();
    start(
        queue,
        (job, ctx) -> {
          attempts.add(ctx.attempt());
          if (attempts.size() < 3) {
            ctx.snooze(Duration.ofMinutes(5));
          }
        });
    Job<String> j = queue.push("x", JobOptions.defaults().retry(1, Backoff.NONE));
    scheduler.runUntilIdle();
    Job<String> snoozed = queue.job(j.id()).orElseThrow();
    assertThat(snoozed.status()).isEqualTo(JobStatus.DELAYED);
    assertThat(snoozed.retriesLeft()).isEqualTo(1);
    assertThat(snoozed.delayUntil()).isEqualTo(clock.instant().plus(Duration.ofMinutes(5)));
    scheduler.advance(Duration.ofMinutes(4));
    assertThat(attempts).containsExactly(1);
    scheduler.advance(Duration.ofMinutes(6));
    assertThat(attempts).containsExactly(1, 2, 3);
    assertThat(queue.job(j.id()).map(Job::status))
        .as("completed on the third run")
        .hasValue(JobStatus.COMPLETED);
    assertThat(events)
        .extracting(e -> e.getClass().getSimpleName())
        .as("each snooze is reported (SnoozeEventTest), then the completion")
        .containsExactly("Snoozed", "Snoozed", "Completed");
  }

  @Test
  void aHandlerThatThrowsAfterASnoozeFailsAsUsualAndABadSnoozeIsRefused() {
    Queue<String> queue = builder(memory).build();
    List<Throwable> refused = new ArrayList<>();
    start(
        queue,
        (job, ctx) -> {
          try {
            ctx.snooze(Duration.ofMillis(-1));
          } catch (IllegalArgumentException e) {
            refused.add(e);
          }
          ctx.snooze(Duration.ofMinutes(1));
          throw new IllegalStateException("boom");
        });
    Job<String> j = queue.push("x");
    scheduler.runUntilIdle();
    assertThat(refused).hasSize(1);
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.DEAD);
  }

  // ---- poison jobs

  @Test
  void aJobWhoseLeaseExpiresTheLimitTimesBecomesADeadLetterThatSaysSo() {
    Queue<String> queue = builder(memory).maxLeaseExpiries(2).build();
    assertThat(queue.maxLeaseExpiries()).isEqualTo(2);
    Job<String> j = queue.push("kills its worker");
    Claimer dying = new Claimer(queue.keys, memory, 10, 2); // a node that dies after each claim
    assertThat(dying.claim(1, clock.millis(), 1_000).claimed()).hasSize(1);
    clock.advance(Duration.ofSeconds(2));
    dying.moveDue(clock.millis());
    assertThat(queue.job(j.id()).orElseThrow().leaseExpiries()).isEqualTo(1);
    assertThat(dying.claim(1, clock.millis(), 1_000).claimed()).hasSize(1);
    clock.advance(Duration.ofSeconds(2));
    List<String> ran = new ArrayList<>();
    start(queue, (job, ctx) -> ran.add(job.id())); // its pass reclaims the second expiry
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    Job<String> dead = queue.job(j.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.leaseExpiries()).isEqualTo(2);
    assertThat(dead.lastError().orElseThrow().type()).isEqualTo(JobError.LEASE_EXPIRED);
    assertThat(dead.lastError().orElseThrow().message()).contains("expired 2 times");
    assertThat(queue.replayDead(j.id())).isTrue();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly(j.id());
  }

  @Test
  void theBuilderRefusesABadLimitAndABadTimeout() {
    assertThatThrownBy(() -> builder(memory).maxLeaseExpiries(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxLeaseExpiries");
    assertThatThrownBy(() -> builder(memory).defaultTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> JobOptions.defaults().timeout(Duration.ofNanos(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThat(builder(memory).build().maxLeaseExpiries())
        .isEqualTo(Queue.DEFAULT_MAX_LEASE_EXPIRIES);
  }

  // ---- many at once

  /** Records the size of every commitAll: a bulk change never commits more than one batch. */
  static final class Counting extends ForwardingKvStore {
    int largest;

    Counting(KvStore delegate) {
      super(delegate);
    }

    @Override
    public List<CommitResult> commitAll(List<AtomicOperation> operations) {
      largest = Math.max(largest, operations.size());
      return super.commitAll(operations);
    }
  }

  @Test
  void cancelAndDeleteManyByStatusInBoundedBatches() {
    Counting counting = new Counting(memory);
    Queue<String> queue = builder(counting).build();
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      many.add("w" + i);
    }
    queue.pushAll(many, JobOptions.defaults());
    queue.pushAll(List.of("d1", "d2"), JobOptions.defaults().delay(Duration.ofHours(1)));
    Claimer other = new Claimer(queue.keys, memory, 10);
    List<Claimer.Claimed> running = other.claim(2, clock.millis(), 60_000).claimed();
    assertThat(running).hasSize(2);
    assertThat(queue.deleteAll(JobFilter.status(JobStatus.PROCESSING)))
        .as("a job under a live lease is never deleted")
        .isZero();
    counting.largest = 0;
    assertThat(queue.cancelAll(JobFilter.status(JobStatus.WAITING))).isEqualTo(248);
    assertThat(counting.largest).isLessThanOrEqualTo(Queue.BULK_BATCH);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 2, 2, 0));
    assertThat(queue.cancelAll(JobFilter.status(JobStatus.PROCESSING, JobStatus.DEAD)))
        .isEqualTo(2);
    assertThat(queue.job(running.get(0).record().id).orElseThrow().status())
        .isEqualTo(JobStatus.CANCELLED);
    counting.largest = 0;
    assertThat(queue.deleteAll(JobFilter.status(JobStatus.CANCELLED))).isEqualTo(250);
    assertThat(counting.largest).isLessThanOrEqualTo(Queue.BULK_BATCH);
    assertThat(memory.count(queue.keys.cancelled())).isZero();
    assertThat(queue.deleteAll(JobFilter.status(JobStatus.DELAYED))).isEqualTo(2);
    assertThat(memory.count(queue.keys.jobs())).isZero();
  }
}
