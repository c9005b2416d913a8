package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Jobs claimed ahead ({@link WorkerOptions#prefetch()}), on the fake clock. */
class PrefetchTest {

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

  Worker<String> worker(JobHandler<String> handler, WorkerOptions options, ManualScheduler on) {
    Worker<String> w = queue.worker(handler, options, on);
    w.addListener(events::add);
    w.start();
    return w;
  }

  void push(String... states) {
    for (String s : states) {
      queue.push(s);
    }
  }

  @Test
  void aWorkerHoldsUpToPrefetchJobsBeyondItsRunningOnesAndRunsThemInQueueOrder() {
    push("a", "b", "c", "d", "e", "f");
    List<Long> leasedWhileRunning = new ArrayList<>();
    worker((job, ctx) -> {
      ran.add(job.state());
      leasedWhileRunning.add(queue.counts().processing());
    }, WorkerOptions.defaults().concurrency(1).prefetch(2), scheduler);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a", "b", "c", "d", "e", "f");
    // one running and two claimed ahead while jobs were left to claim; none beyond that
    assertThat(leasedWhileRunning.get(0)).isEqualTo(3);
    assertThat(leasedWhileRunning).allMatch(n -> n <= 3);
    assertThat(events).hasSize(6).allMatch(e -> e instanceof JobEvent.Completed);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void withoutPrefetchAWorkerClaimsOnlyForFreeSlots() {
    push("a", "b", "c", "d");
    List<Long> leasedWhileRunning = new ArrayList<>();
    worker((job, ctx) -> leasedWhileRunning.add(queue.counts().processing()),
        WorkerOptions.defaults().concurrency(1), scheduler);
    scheduler.runUntilIdle();
    assertThat(leasedWhileRunning).containsExactly(1L, 1L, 1L, 1L);
  }

  @Test
  void stoppingPutsTheJobsClaimedAheadBackInTheirPlaceWithTheirAttemptUncounted() {
    push("a", "b", "c", "d");
    Worker<String> first = worker((job, ctx) -> {
      ran.add(job.state());
      ctx.stopProcessing(); // the worker stops while "b", "c" and "d" wait for its one slot
    }, WorkerOptions.defaults().concurrency(1).prefetch(3), scheduler);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a");
    assertThat(first.stop()).isCompleted();
    assertThat(first.activeJobs()).isEmpty();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(3, 0, 0, 0));
    assertThat(queue.jobs()).extracting(e -> e.job().attempt()).containsOnly(0);

    List<Integer> attempts = new ArrayList<>();
    ManualScheduler next = new ManualScheduler(clock);
    worker((job, ctx) -> {
      ran.add(job.state());
      attempts.add(ctx.attempt());
    }, WorkerOptions.defaults(), next);
    next.runUntilIdle();
    assertThat(ran).containsExactly("a", "b", "c", "d");
    assertThat(attempts).containsExactly(1, 1, 1);
  }

  @Test
  void aPausePutsTheJobsClaimedAheadBackAndStartsNoMoreUntilResumed() {
    push("a", "b", "c", "d", "e");
    worker((job, ctx) -> {
      ran.add(job.state());
      if (job.state().equals("a")) {
        queue.pause(); // while "b" and "c" wait, claimed ahead
      }
    }, WorkerOptions.defaults().concurrency(1).prefetch(2), scheduler);
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
    worker((job, ctx) -> {
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
    }, WorkerOptions.defaults().concurrency(1).prefetch(1).lease(Duration.ofSeconds(5), Duration.ofSeconds(2)),
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
    worker((job, ctx) -> {
      ran.add(job.state());
      // this worker stalls (no renewals) past both leases; another worker takes both jobs
      clock.advance(Duration.ofSeconds(6));
      worker((j, c) -> ranByOther.add(j.state()), WorkerOptions.defaults(), other);
      other.runUntilIdle();
    }, WorkerOptions.defaults().concurrency(1).prefetch(1).lease(Duration.ofSeconds(5), Duration.ofSeconds(2)),
        scheduler);
    scheduler.runUntilIdle();
    assertThat(ranByOther).containsExactly("a", "b");
    assertThat(ran).as("b was taken over while it waited, so it did not run here").containsExactly("a");
    assertThat(events).filteredOn(e -> e instanceof JobEvent.LeaseLost)
        .extracting(e -> ((JobEvent.LeaseLost<String>) e).refusedOutcome())
        .containsExactlyInAnyOrder("complete", "start");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }
}
