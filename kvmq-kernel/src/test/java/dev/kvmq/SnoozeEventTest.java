package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JobEvent.Snoozed}: a worker reports each snooze once, after its commit, with the job as it
 * now waits and the time it runs again; a snooze refused under a lost lease is a {@link
 * JobEvent.LeaseLost} and no snooze (docs/semantics.md, "Snooze").
 */
class SnoozeEventTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore memory = new InMemoryKvStore();
  final Queue<String> queue =
      Queue.builder(memory, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    memory.close();
  }

  void start(JobHandler<String> handler) {
    Worker<String> w = queue.worker(handler, WorkerOptions.defaults(), scheduler);
    w.addListener(events::add);
    w.start();
  }

  @Test
  void eachSnoozeIsReportedOnceWithTheTimeTheJobRunsAgain() {
    List<Instant> snoozedAt = new ArrayList<>();
    start(
        (job, ctx) -> {
          if (ctx.attempt() < 3) {
            snoozedAt.add(clock.instant());
            ctx.snooze(Duration.ofMinutes(ctx.attempt() * 5L));
          }
        });
    Job<String> j = queue.push("x");

    scheduler.runUntilIdle();
    assertThat(events).singleElement().isInstanceOf(JobEvent.Snoozed.class);
    JobEvent.Snoozed<String> first = (JobEvent.Snoozed<String>) events.get(0);
    assertThat(first.runsAt()).isEqualTo(snoozedAt.get(0).plus(Duration.ofMinutes(5)));
    assertThat(first.job().id()).isEqualTo(j.id());
    assertThat(first.job().status()).as("the job as it now is").isEqualTo(JobStatus.DELAYED);
    assertThat(first.job().delayUntil()).isEqualTo(first.runsAt());
    assertThat(queue.job(j.id()).orElseThrow().delayUntil()).isEqualTo(first.runsAt());

    scheduler.advance(Duration.ofMinutes(4));
    assertThat(events).as("nothing more while it waits").hasSize(1);
    scheduler.advance(Duration.ofMinutes(20));

    assertThat(events)
        .extracting(e -> e.getClass().getSimpleName())
        .containsExactly("Snoozed", "Snoozed", "Completed");
    JobEvent.Snoozed<String> second = (JobEvent.Snoozed<String>) events.get(1);
    assertThat(second.runsAt()).isEqualTo(snoozedAt.get(1).plus(Duration.ofMinutes(10)));
    assertThat(second.job().attempt()).isEqualTo(2);
  }

  @Test
  void aSnoozeOfZeroIsReportedWithTheJobWaitingAndDueAtOnce() {
    List<Instant> snoozedAt = new ArrayList<>();
    start(
        (job, ctx) -> {
          if (ctx.attempt() == 1) {
            snoozedAt.add(clock.instant());
            ctx.snooze(Duration.ZERO);
          }
        });
    queue.push("x");

    scheduler.runUntilIdle();

    assertThat(events)
        .extracting(e -> e.getClass().getSimpleName())
        .containsExactly("Snoozed", "Completed");
    JobEvent.Snoozed<String> s = (JobEvent.Snoozed<String>) events.get(0);
    assertThat(s.runsAt()).isEqualTo(snoozedAt.get(0));
    assertThat(s.job().status()).isEqualTo(JobStatus.WAITING);
  }

  @Test
  void aSnoozeUnderALostLeaseIsReportedAsTheLeaseLostNotAsASnooze() {
    start(
        (job, ctx) -> {
          assertThat(queue.cancel(job.id())).isTrue();
          scheduler.runUntilIdle(); // the worker hears of the cancel
          ctx.snooze(Duration.ofMinutes(1));
        });
    Job<String> j = queue.push("x");

    scheduler.runUntilIdle();

    assertThat(events)
        .singleElement()
        .satisfies(
            e ->
                assertThat(((JobEvent.LeaseLost<String>) e).refusedOutcome())
                    .isEqualTo(JobEvent.RefusedOutcome.SNOOZE));
    assertThat(queue.job(j.id()).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
  }

  @Test
  void theEventRefusesNullComponents() {
    Job<String> j = queue.push("x");
    org.assertj.core.api.Assertions.assertThatNullPointerException()
        .isThrownBy(() -> new JobEvent.Snoozed<>(j, null))
        .withMessage("runsAt");
    org.assertj.core.api.Assertions.assertThatNullPointerException()
        .isThrownBy(() -> new JobEvent.Snoozed<String>(null, Instant.EPOCH))
        .withMessage("job");
  }
}
