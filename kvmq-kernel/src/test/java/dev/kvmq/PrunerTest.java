package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.util.Collections;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pruner's pace: an idle worker prunes batch after batch; a busy one at most a batch per {@link
 * Pruner#BUSY_GAP_MILLIS}, asking for no extra pass, so that a drain beside a large history is not
 * spent removing it (docs/operations.md).
 */
class PrunerTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore store = new InMemoryKvStore();

  @AfterEach
  void close() {
    store.close();
  }

  /** Seven completed jobs kept by a queue that keeps them all. */
  Queue<String> queueWithSevenCompleted() {
    Queue<String> q =
        Queue.builder(store, "q", Codecs.utf8())
            .clock(clock)
            .random(new Random(1))
            .retention(Retention.defaults().completed(Retention.Keep.unlimited()))
            .build();
    ManualScheduler scheduler = new ManualScheduler(clock);
    q.worker((job, ctx) -> {}, WorkerOptions.defaults(), scheduler).start();
    q.pushAll(Collections.nCopies(7, "job"), JobOptions.defaults());
    scheduler.runUntilIdle();
    scheduler.shutdownNow();
    assertThat(store.count(q.keys.completed())).isEqualTo(7);
    return q;
  }

  @Test
  void aBusyGapEndsOnceTheWorkerHasFinishedHalfABatchMoreJobs() {
    Queue<String> q = queueWithSevenCompleted();
    java.util.concurrent.atomic.AtomicLong finished = new java.util.concurrent.atomic.AtomicLong();
    Pruner pruner = new Pruner(q.keys, store, Retention.none(), 1_000, 4, finished::get);
    long now = clock.millis();

    assertThat(pruner.pruneDue(now, true)).isFalse();
    assertThat(store.count(q.keys.completed())).isEqualTo(3);
    finished.addAndGet(1);
    assertThat(pruner.pruneDue(now + 1, true)).isFalse();
    assertThat(store.count(q.keys.completed())).as("one finished job: the gap holds").isEqualTo(3);
    finished.addAndGet(1);
    assertThat(pruner.pruneDue(now + 1, true)).isFalse();
    assertThat(store.count(q.keys.completed()))
        .as("half a batch of finished jobs ends the gap: the history shrinks while jobs finish")
        .isZero();
  }

  @Test
  void aBusyWorkerPrunesABatchPerGapAndAnIdleOneBatchAfterBatch() {
    Queue<String> q = queueWithSevenCompleted();
    Pruner pruner = new Pruner(q.keys, store, Retention.none(), 1_000, 2);
    long now = clock.millis();

    assertThat(pruner.pruneDue(now, true)).as("busy: no extra pass asked").isFalse();
    assertThat(store.count(q.keys.completed())).isEqualTo(5);
    assertThat(pruner.pruneDue(now + Pruner.BUSY_GAP_MILLIS - 1, true)).isFalse();
    assertThat(pruner.pruneDue(now + Pruner.BUSY_GAP_MILLIS - 1, false))
        .as("within the gap, idle or not")
        .isFalse();
    assertThat(store.count(q.keys.completed())).isEqualTo(5);

    long later = now + Pruner.BUSY_GAP_MILLIS;
    assertThat(pruner.pruneDue(later, false)).as("idle: more asks for a pass").isTrue();
    assertThat(store.count(q.keys.completed())).isEqualTo(3);
    assertThat(pruner.pruneDue(later, false)).isTrue();
    assertThat(pruner.pruneDue(later, false)).as("the last one").isFalse();
    assertThat(store.count(q.keys.completed())).isZero();
    assertThat(pruner.pruneDue(later + 1, false))
        .as("nothing left: the next look is an interval later")
        .isFalse();
  }
}
