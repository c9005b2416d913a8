package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Handoff (docs/semantics.md, "Handoff"): a job pushed through a queue object whose started worker
 * takes handoffs and has an idle slot is leased to that worker in the push's own commit and started
 * there, with no claim; in every other case the push is the plain one. The in-memory store, the
 * fake clock, no threads.
 */
class HandoffWorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore memory = new InMemoryKvStore();
  final FaultyStore store = new FaultyStore(memory);
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(3)).build();
  final List<String> ran = new ArrayList<>();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    memory.close();
  }

  Worker<String> started(WorkerOptions options) {
    Worker<String> w =
        queue.worker((job, ctx) -> ran.add(job.state() + "@" + ctx.token()), options, scheduler);
    w.addListener(events::add);
    w.start();
    scheduler.runUntilIdle(); // its first pass has looked: the ready index is empty
    return w;
  }

  WorkerOptions handoff(int concurrency) {
    return WorkerOptions.defaults().concurrency(concurrency).handoff(true);
  }

  @Test
  void anIdleWorkerTakesThePushedJobInThePushsCommitAndRunsItWithoutAClaim() {
    started(handoff(1));
    long commits = store.commitCalls.get();
    long lists = store.listCalls.get();
    Job<String> job = queue.push("a");
    assertThat(job.status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(job.token()).isEqualTo(1);
    assertThat(job.attempt()).isEqualTo(1);
    assertThat(store.commitCalls.get() - commits).as("commits of the push").isEqualTo(1);
    assertThat(store.listCalls.get() - lists).as("index ranges read by the push").isZero();
    assertThat(queue.job(job.id()).orElseThrow().status()).isEqualTo(JobStatus.PROCESSING);
    long beforeRun = store.commitCalls.get();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a@1");
    assertThat(events).singleElement().isInstanceOf(JobEvent.Completed.class);
    assertThat(store.commitCalls.get() - beforeRun)
        .as("commits after the push: the completion only, no claim")
        .isEqualTo(1);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void withoutHandoffThePushedJobWaitsForAClaim() {
    started(WorkerOptions.defaults());
    Job<String> job = queue.push("a");
    assertThat(job.status()).isEqualTo(JobStatus.WAITING);
    assertThat(job.token()).isZero();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a@1");
  }

  @Test
  void aWorkerWithNoIdleSlotTakesNoneAndTheJobRunsAfterTheOneItHolds() {
    started(handoff(2));
    assertThat(queue.push("a").status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(queue.push("b").status()).isEqualTo(JobStatus.PROCESSING);
    Job<String> c = queue.push("c"); // both slots promised, their handlers not run yet
    assertThat(c.status()).isEqualTo(JobStatus.WAITING);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactlyInAnyOrder("a@1", "b@1", "c@1");
    assertThat(ran.get(2)).isEqualTo("c@1");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void aWorkerThatHasReadyJobsToClaimTakesNoHandoff() {
    Worker<String> w = started(handoff(1));
    // another node's push: the worker is told, and its pass has not run yet
    Queue<String> otherNode =
        Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(4)).build();
    otherNode.push("older");
    clock.advance(Duration.ofMillis(1));
    assertThat(queue.push("newer").status())
        .as("a pass is asked for: the older job goes first")
        .isEqualTo(JobStatus.WAITING);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("older@1", "newer@1");
    assertThat(w.isProcessing()).isTrue();
  }

  @Test
  void jobsDueLaterOfAGroupOrWithAUniqueKeyAreNotHandedOff() {
    started(handoff(6));
    assertThat(queue.push("plain").status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(queue.push("later", JobOptions.defaults().delay(Duration.ofSeconds(1))).status())
        .isEqualTo(JobStatus.DELAYED);
    assertThat(queue.push("grouped", JobOptions.defaults().group("g")).status())
        .isEqualTo(JobStatus.WAITING);
    assertThat(
            queue
                .push("unique", JobOptions.defaults().unique(UniqueKey.whileWaiting("k")))
                .status())
        .isEqualTo(JobStatus.WAITING);
    assertThat(queue.pushAll(List.of("x", "y"), JobOptions.defaults()))
        .as("a batch: one commit for all, claimed as usual")
        .allMatch(j -> j.status() == JobStatus.WAITING);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ran)
        .containsExactlyInAnyOrder("later@1", "grouped@1", "unique@1", "x@1", "y@1", "plain@1");
  }

  @Test
  void aRateLimitedQueueTakesNone() {
    Queue<String> limited =
        Queue.builder(store, "limited", Codecs.utf8())
            .clock(clock)
            .random(new Random(5))
            .rateLimit(new RateLimit(10, Duration.ofSeconds(1)))
            .build();
    Worker<String> w = limited.worker((job, ctx) -> ran.add(job.state()), handoff(1), scheduler);
    w.start();
    scheduler.runUntilIdle();
    assertThat(limited.push("a").status()).isEqualTo(JobStatus.WAITING);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a");
  }

  @Test
  void noHandoffWhileTheQueueIsPausedAndTheJobRunsOnResume() {
    started(handoff(1));
    queue.pause();
    scheduler.runUntilIdle();
    assertThat(queue.push("a").status()).isEqualTo(JobStatus.WAITING);
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    queue.resume();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a@1");
  }

  /**
   * A pause the worker has not heard of (its notification lost, as one can be: notifications are
   * hints) is still exact: the handoff's commit checks the queue's and its starts' pauses, is
   * refused, and the push is the plain one.
   */
  @Test
  void aPauseTheWorkerHasNotHeardOfRefusesTheHandoffsCommitAndThePushIsPlain() {
    KvStore deaf =
        new ForwardingKvStore(memory) {
          @Override
          public Subscription subscribe(Key prefix, Runnable listener) {
            return () -> {}; // every notification lost
          }
        };
    Queue<String> q = Queue.builder(deaf, "deaf", Codecs.utf8()).clock(clock).build();
    Worker<String> w = q.worker((job, ctx) -> ran.add(job.state()), handoff(1), scheduler);
    w.start();
    scheduler.runUntilIdle();
    for (var pause : List.of(q.keys.paused, q.keys.startsPaused())) {
      memory.commit(
          AtomicOperation.builder()
              .set(pause, Transitions.encodeTime(clock.millis() + 60_000))
              .build());
      Job<String> job = q.push("while " + pause);
      assertThat(job.status()).isEqualTo(JobStatus.WAITING);
      assertThat(ran).isEmpty();
      memory.commit(AtomicOperation.builder().delete(pause).build());
    }
    scheduler.advance(Duration.ofSeconds(3)); // the worker's poll
    assertThat(ran).hasSize(2);
  }

  /** A worker on a store that does not notify would not know of jobs other nodes push. */
  @Test
  void aWorkerOnAStoreThatDoesNotNotifyTakesNone() {
    KvStore polling =
        new ForwardingKvStore(memory) {
          @Override
          public boolean notifiesChanges() {
            return false;
          }
        };
    Queue<String> q = Queue.builder(polling, "polled", Codecs.utf8()).clock(clock).build();
    q.worker((job, ctx) -> ran.add(job.state()), handoff(1), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(q.push("a").status()).isEqualTo(JobStatus.WAITING);
    scheduler.advance(Duration.ofSeconds(3)); // its poll
    assertThat(ran).containsExactly("a");
  }

  @Test
  void aStoppedWorkerTakesNone() {
    Worker<String> w = started(handoff(1));
    w.stop();
    scheduler.runUntilIdle();
    assertThat(queue.push("a").status()).isEqualTo(JobStatus.WAITING);
    assertThat(queue.takers).isEmpty();
  }

  /**
   * A worker whose executor refuses the handed-off job (shut down before the worker stopped, as an
   * undeployed application's may be) reports it as any claimed job it could not start, and takes no
   * more handoffs: the job stays leased until its lease expires, and later pushes are plain.
   */
  @Test
  void aWorkerWhoseExecutorRefusedAJobTakesNoMoreHandoffs() {
    ManualScheduler dying = new ManualScheduler(clock);
    Worker<String> w = queue.worker((job, ctx) -> ran.add(job.state()), handoff(2), dying);
    w.start();
    dying.runUntilIdle();
    dying.shutdownNow();
    Job<String> refused = queue.push("refused");
    assertThat(refused.status()).as("handed off, then refused").isEqualTo(JobStatus.PROCESSING);
    assertThat(queue.push("next").status()).isEqualTo(JobStatus.WAITING);
    assertThat(w.activeJobs()).isEmpty();
    assertThat(queue.counts().processing()).isEqualTo(1);
    started(WorkerOptions.defaults()); // a worker that claims, on a running executor
    scheduler.advance(Duration.ofSeconds(6)); // past the 5 s lease: reclaimed, run
    assertThat(ran).containsExactlyInAnyOrder("next@1", "refused@2");
  }

  /**
   * A handoff whose commit fails before it applies throws, as a push that fails does, and gives the
   * slot back: the next push is handed off. One that fails after it applied leaves the job leased
   * to the worker and not run: its lease expires, it is reclaimed and runs once, with the next
   * token.
   */
  @Test
  void aFailedCommitGivesTheSlotBackAndAJobStoredAnywayRunsOnceItsLeaseExpires() {
    started(handoff(1));
    store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY);
    assertThatThrownBy(() -> queue.push("lost")).isInstanceOf(KvStoreException.class);
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    assertThat(queue.push("next").status()).isEqualTo(JobStatus.PROCESSING);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("next@1");
    store.failCommits(op -> true, FaultyStore.Mode.AFTER_APPLY);
    assertThatThrownBy(() -> queue.push("stored")).isInstanceOf(KvStoreException.class);
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    assertThat(queue.counts().processing()).isEqualTo(1);
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("next@1");
    scheduler.advance(Duration.ofSeconds(6)); // past the 5 s lease: reclaimed, run
    assertThat(ran).containsExactly("next@1", "stored@2");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void aJobHandedOffBeforeTheWorkerStopsFinishesAsAClaimedJobWould() {
    Worker<String> w = started(handoff(1));
    Job<String> job = queue.push("a");
    assertThat(job.status()).isEqualTo(JobStatus.PROCESSING);
    w.stop();
    scheduler.runUntilIdle();
    assertThat(w.stop().isDone()).isTrue();
    assertThat(ran).as("dispatched before the stop: it runs, as a claimed job would").hasSize(1);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void twoWorkersOfOneQueueObjectShareThePushesWhileIdle() {
    List<String> second = new ArrayList<>();
    started(handoff(1));
    Worker<String> other =
        queue.worker((job, ctx) -> second.add(job.state()), handoff(1), scheduler);
    other.start();
    scheduler.runUntilIdle();
    assertThat(queue.push("a").status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(queue.push("b").status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(queue.push("c").status()).isEqualTo(JobStatus.WAITING);
    scheduler.runUntilIdle();
    assertThat(ran).contains("a@1");
    assertThat(second).contains("b");
    assertThat(ran.size() + second.size()).isEqualTo(3);
  }
}
