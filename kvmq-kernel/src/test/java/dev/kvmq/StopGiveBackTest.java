package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A handler told {@link JobContext.CancelReason#WORKER_STOPPING} that stops by throwing (what
 * jakarta.md advises for long handlers on undeploy) gives its job back: it waits again, due at
 * once, with no retry used, its attempt ended with the error; it is never made a dead letter by the
 * stop. A failure the handler or the queue calls permanent stays one.
 */
class StopGiveBackTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final Queue<String> queue =
      Queue.builder(new InMemoryKvStore(), "q", Codecs.utf8())
          .clock(clock)
          .random(new Random(5))
          .nonRetryable(List.of(IllegalArgumentException.class))
          .build();
  final List<JobEvent<String>> events = new ArrayList<>();

  /** A worker whose handler stops its own worker, then fails as {@code failure} says. */
  private Worker<String> stoppingWorker(Runnable failure) {
    AtomicReference<Worker<String>> self = new AtomicReference<>();
    self.set(
        queue.worker(
            (job, ctx) -> {
              self.get().stop(); // the application is being undeployed
              assertThat(ctx.cancelReason()).contains(JobContext.CancelReason.WORKER_STOPPING);
              failure.run();
            },
            WorkerOptions.defaults(),
            scheduler));
    self.get().addListener(events::add);
    return self.get();
  }

  @Test
  void aHandlerThatThrowsOnStoppingGivesItsJobBackWithNoRetryUsed() {
    Job<String> pushed = queue.push("report", JobOptions.defaults().retry(0, Backoff.NONE));
    Worker<String> worker =
        stoppingWorker(
            () -> {
              throw new IllegalStateException("stopped: WORKER_STOPPING");
            });
    worker.start();
    scheduler.runUntilIdle();

    assertThat(worker.stop()).isDone();
    Job<String> back = queue.job(pushed.id()).orElseThrow();
    assertThat(back.status()).as("not a dead letter: it waits again").isEqualTo(JobStatus.WAITING);
    assertThat(back.retriesLeft()).isZero();
    assertThat(back.lastError()).as("the job's last error is unchanged").isEmpty();
    assertThat(back.attempts()).hasSize(1);
    Attempt cut = back.attempts().get(0);
    assertThat(cut.endedAt()).contains(clock.instant());
    assertThat(cut.error().orElseThrow().type()).isEqualTo(IllegalStateException.class.getName());
    assertThat(cut.error().orElseThrow().message()).isEqualTo("stopped: WORKER_STOPPING");
    assertThat(events).hasSize(1).first().isInstanceOf(JobEvent.Snoozed.class);

    // the next deployment's worker runs it, as its second attempt
    List<Integer> attempts = new ArrayList<>();
    queue
        .worker((job, ctx) -> attempts.add(ctx.attempt()), WorkerOptions.defaults(), scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(attempts).containsExactly(2);
    assertThat(queue.job(pushed.id()).orElseThrow().status()).isEqualTo(JobStatus.COMPLETED);
  }

  @Test
  void aPermanentFailureOnStoppingStillMakesADeadLetter() {
    Job<String> nonRetryable = queue.push("a", JobOptions.defaults().retry(3, Backoff.NONE));
    stoppingWorker(
            () -> {
              throw new IllegalArgumentException("bad input, whatever the stop");
            })
        .start();
    scheduler.runUntilIdle();

    Job<String> dead = queue.job(nonRetryable.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.lastError().orElseThrow().type())
        .isEqualTo(IllegalArgumentException.class.getName());
    assertThat(events)
        .singleElement()
        .isInstanceOfSatisfying(JobEvent.Failed.class, f -> assertThat(f.dead()).isTrue());
  }

  @Test
  void aHandlerThatReturnsOnStoppingCompletesItsJob() {
    Job<String> pushed = queue.push("a");
    stoppingWorker(() -> {}).start();
    scheduler.runUntilIdle();

    assertThat(queue.job(pushed.id()).orElseThrow().status()).isEqualTo(JobStatus.COMPLETED);
    assertThat(events).singleElement().isInstanceOf(JobEvent.Completed.class);
  }

  @Test
  void aFailureWithoutAStopUsesARetryAsBefore() {
    Job<String> pushed = queue.push("a", JobOptions.defaults().retry(0, Backoff.NONE));
    queue
        .worker(
            (job, ctx) -> {
              throw new IllegalStateException("failed");
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();

    assertThat(queue.job(pushed.id()).orElseThrow().status()).isEqualTo(JobStatus.DEAD);
  }
}
