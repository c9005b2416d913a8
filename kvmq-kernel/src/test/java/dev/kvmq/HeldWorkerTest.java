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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Held jobs with a real worker on the in-memory store, driven by the fake clock: a held job never
 * runs, a released one does, a dropped one never does, and the two held-job policies.
 */
class HeldWorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final List<String> ran = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  Queue<String> queue(Duration heldTimeout) {
    return Queue.builder(store, "q", Codecs.utf8())
        .clock(clock)
        .random(new Random(1))
        .heldTimeout(heldTimeout)
        .build();
  }

  void work(Queue<String> q) {
    q.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
  }

  @Test
  void aHeldJobRunsOnlyOnceReleasedAndADroppedOneNever() {
    Queue<String> q = queue(null);
    List<Job<String>> committed = q.holdAll(List.of("c1", "c2"), JobOptions.defaults());
    List<Job<String>> rolledBack = q.holdAll(List.of("r1"), JobOptions.defaults());
    assertThat(committed).extracting(Job::status).containsOnly(JobStatus.HELD);
    assertThat(q.job(committed.get(0).id()))
        .hasValueSatisfying(j -> assertThat(j.status()).isEqualTo(JobStatus.HELD));
    work(q);
    clock.advance(Duration.ofHours(1));
    scheduler.runUntilIdle();
    assertThat(ran).as("held jobs don't run").isEmpty();
    assertThat(q.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 3));
    assertThat(q.jobs(JobStatus.HELD, 0, 10)).extracting(e -> e.place()).containsOnly(0);

    assertThat(q.releaseHeld(committed.stream().map(Job::id).toList())).isEqualTo(2);
    assertThat(q.dropHeld(rolledBack.stream().map(Job::id).toList())).isEqualTo(1);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("c1", "c2");
    assertThat(q.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 0));
    assertThat(q.job(rolledBack.get(0).id())).isEmpty();
    assertThat(q.releaseHeld(committed.stream().map(Job::id).toList()))
        .as("released already")
        .isZero();
    assertThat(q.dropHeld(List.of("not-an-id"))).isZero();
  }

  @Test
  void keptHeldJobsWaitForAnOperatorWhoReleasesOrDeletesThem() {
    Queue<String> q = queue(null);
    Job<String> keep = q.holdAll(List.of("k"), JobOptions.defaults()).get(0);
    Job<String> delete = q.holdAll(List.of("d"), JobOptions.defaults()).get(0);
    work(q);
    clock.advance(Duration.ofHours(2));
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    assertThat(q.deleteWaiting()).as("held jobs are not waiting").isZero();
    assertThat(q.delete(delete.id())).isTrue();
    assertThat(q.releaseHeld(List.of(keep.id()))).isEqualTo(1);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("k");
  }

  @Test
  void withATimeoutAWorkerReleasesAJobHeldThatLongAndNoSooner() {
    Queue<String> q = queue(Duration.ofMinutes(5));
    Job<String> left = q.holdAll(List.of("left by a crash"), JobOptions.defaults()).get(0);
    work(q);
    clock.advance(Duration.ofMinutes(5).minusMillis(1));
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    assertThat(q.job(left.id()))
        .hasValueSatisfying(j -> assertThat(j.status()).isEqualTo(JobStatus.HELD));
    clock.advance(Duration.ofMillis(1));
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("left by a crash");
    assertThat(q.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 0));
  }

  @Test
  void theTimeoutReleasesManyHeldJobsInBoundedBatches() {
    Queue<String> q = queue(Duration.ofSeconds(1));
    int n = HeldResolver.BATCH * 2 + 5;
    List<String> states = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      states.add("j" + i);
    }
    q.holdAll(states, JobOptions.defaults());
    HeldResolver resolver = new HeldResolver(q.keys, store, q.heldTimeout(), 10);
    long now = clock.millis() + 1_000;
    int calls = 0;
    while (resolver.resolveDue(now)) {
      assertThat(++calls).isLessThan(100);
    }
    assertThat(calls).isEqualTo(n / 10);
    assertThat(q.counts().held()).isZero();
    assertThat(q.counts().waiting()).isEqualTo(n);
  }

  @Test
  void aTimeoutUnderOneMillisecondIsRefused() {
    assertThatThrownBy(() -> queue(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("held timeout");
  }
}
