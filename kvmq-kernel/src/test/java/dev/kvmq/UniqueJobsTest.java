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
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Unique jobs on a queue of the in-memory store, with a real worker driven by the fake clock: each
 * scope's key is taken by the push and released by the commit that ends it, a duplicate push says
 * so and returns the holder, debounce, throttle, and two nodes pushing one key at once.
 */
class UniqueJobsTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final List<String> ran = new ArrayList<>();
  final List<PushResult<String>> pushedWhileRunning = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  Queue<String> queue(KvStore s) {
    return Queue.builder(s, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  }

  /**
   * A worker whose handler pushes {@code again} (if not null) while it runs, then fails if told.
   */
  void work(Queue<String> q, JobOptions again, boolean fail) {
    q.worker(
            (job, ctx) -> {
              ran.add(job.state());
              if (again != null && !job.state().startsWith("while")) {
                pushedWhileRunning.add(q.offer("while " + job.state(), again));
              }
              if (fail) {
                throw new IllegalStateException("boom");
              }
            },
            WorkerOptions.defaults().concurrency(1),
            scheduler)
        .start();
    scheduler.runUntilIdle();
  }

  @Test
  void aDuplicatePushReturnsTheJobHoldingTheKeyAndSaysSo() {
    Queue<String> q = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaiting("sync-42"));
    PushResult<String> first = q.offer("a", o);
    PushResult<String> second = q.offer("b", o);
    assertThat(first.outcome()).isEqualTo(PushResult.Outcome.CREATED);
    assertThat(first.created()).isTrue();
    assertThat(second.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(second.duplicate()).isTrue();
    assertThat(second.id()).isEqualTo(first.id());
    assertThat(second.job()).hasValueSatisfying(j -> assertThat(j.state()).isEqualTo("a"));
    assertThat(q.push("c", o).id()).as("push returns the holder too").isEqualTo(first.id());
    assertThat(q.pushAll(List.of("d"), o)).extracting(Job::id).containsExactly(first.id());
    assertThat(q.jobs()).hasSize(1);
    assertThat(q.job(first.id()).orElseThrow().unique())
        .contains(UniqueKey.whileWaiting("sync-42"));
    assertThat(q.job(first.id()).orElseThrow().holdsUniqueKey()).isTrue();
    assertThat(
            q.offer("other", JobOptions.defaults().unique(UniqueKey.whileWaiting("sync-43")))
                .created())
        .as("another key is another job")
        .isTrue();
    assertThat(q.offer("plain", JobOptions.defaults()).created()).isTrue();
  }

  @Test
  void aWaitingKeyIsFreeOnceTheJobStarts() {
    Queue<String> q = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaiting("k"));
    q.offer("a", o);
    work(q, o, false);
    assertThat(ran).startsWith("a");
    assertThat(pushedWhileRunning.get(0).created())
        .as("a push while the holder runs makes a new job")
        .isTrue();
    assertThat(store.count(q.keys.uniqueKeys())).as("no key left once all ran").isZero();
  }

  @Test
  void aWaitingOrRunningKeyIsTakenWhileItRunsAndFreeAfterItCompletes() {
    Queue<String> q = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaitingOrRunning("k"));
    String id = q.offer("a", o).id();
    work(q, o, false);
    assertThat(ran).containsExactly("a");
    assertThat(pushedWhileRunning)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
              assertThat(r.id()).isEqualTo(id);
              assertThat(r.job().orElseThrow().status()).isEqualTo(JobStatus.PROCESSING);
            });
    assertThat(q.offer("b", o).created()).as("free after the completion").isTrue();
  }

  @Test
  void aDeadLetterFreesItsKeyAndItsReplayRunsWithoutIt() {
    Queue<String> q = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaitingOrRunning("k"));
    String id = q.offer("a", o).id();
    work(q, null, true);
    assertThat(q.deadLetters()).extracting(Job::id).containsExactly(id);
    assertThat(q.job(id).orElseThrow().holdsUniqueKey()).isFalse();
    PushResult<String> next = q.offer("b", o);
    assertThat(next.created()).isTrue();
    assertThat(q.replayDead(id)).isTrue();
    assertThat(q.job(next.id()).orElseThrow().holdsUniqueKey()).as("the key stays with b").isTrue();
    assertThat(q.delete(id)).isTrue();
    assertThat(q.offer("c", o).id())
        .as("deleting the replayed job left b's key")
        .isEqualTo(next.id());
    assertThat(q.delete(next.id())).isTrue();
    assertThat(q.offer("d", o).created()).as("deleting the holder frees the key").isTrue();
  }

  @Test
  void debounceReplacesTheWaitingJobsStateAndPushesItsDueTimeBack() {
    Queue<String> q = queue(store);
    JobOptions o =
        JobOptions.defaults()
            .delay(Duration.ofSeconds(30))
            .unique(UniqueKey.whileWaiting("reindex").debounce());
    PushResult<String> first = q.offer("v1", o);
    clock.advance(Duration.ofSeconds(20));
    PushResult<String> second = q.offer("v2", o);
    assertThat(second.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
    assertThat(second.duplicate()).isTrue();
    assertThat(second.id()).isEqualTo(first.id());
    assertThat(second.job().orElseThrow().delayUntil()).isEqualTo(clock.instant().plusSeconds(30));
    work(q, null, false);
    clock.advance(Duration.ofSeconds(20));
    scheduler.runUntilIdle();
    assertThat(ran).as("not due at the first push's time").isEmpty();
    clock.advance(Duration.ofSeconds(10));
    scheduler.runUntilIdle();
    assertThat(ran).as("one run, with the last state").containsExactly("v2");
  }

  @Test
  void aThrottleKeyMakesOneJobPerPeriodEvenAfterItsJobFinished() {
    // a queue that keeps no completed jobs: the key's job is gone within the period
    Queue<String> q =
        Queue.builder(store, "q", Codecs.utf8())
            .clock(clock)
            .random(new Random(1))
            .retention(Retention.none())
            .build();
    JobOptions o =
        JobOptions.defaults().unique(UniqueKey.throttle("report", Duration.ofMinutes(10)));
    String id = q.offer("a", o).id();
    work(q, null, false);
    assertThat(ran).containsExactly("a");
    clock.advance(Duration.ofMinutes(9));
    PushResult<String> within = q.offer("b", o);
    assertThat(within.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(within.id()).isEqualTo(id);
    assertThat(within.job()).as("its job has completed").isEmpty();
    assertThatThrownBy(() -> q.push("b", o))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("throttle key \"report\"")
        .hasMessageContaining("Queue.offer");
    clock.advance(Duration.ofMinutes(1));
    assertThat(q.offer("c", o).created()).as("the period is over").isTrue();
    assertThat(store.count(q.keys.uniqueKeys())).isEqualTo(1);
  }

  /** With the default retention the completed holder is kept, and a duplicate returns it. */
  @Test
  void aThrottleKeysDuplicateReturnsItsFinishedJobWhileTheQueueKeepsIt() {
    Queue<String> q = queue(store);
    JobOptions o =
        JobOptions.defaults().unique(UniqueKey.throttle("report", Duration.ofMinutes(10)));
    String id = q.offer("a", o).id();
    work(q, null, false);
    clock.advance(Duration.ofMinutes(9));
    PushResult<String> within = q.offer("b", o);
    assertThat(within.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(within.job().map(Job::status)).contains(JobStatus.COMPLETED);
    assertThat(q.push("b", o).id()).isEqualTo(id);
    assertThat(q.delete(id)).isTrue();
    assertThat(q.offer("b", o).job()).as("gone: nothing to return").isEmpty();
    assertThatThrownBy(() -> q.push("b", o)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void twoNodesPushingOneKeyAtTheSameInstantMakeOneJob() {
    Queue<String> other = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaitingOrRunning("k"));
    List<PushResult<String>> theirs = new ArrayList<>();
    // node B pushes the same key between node A's read and its commit
    KvStore racing =
        new ForwardingKvStore(store) {
          @Override
          public CommitResult commit(AtomicOperation op) {
            if (theirs.isEmpty()) {
              theirs.add(other.offer("b", o));
            }
            return super.commit(op);
          }

          @Override
          public List<CommitResult> commitAll(List<AtomicOperation> ops) {
            if (theirs.isEmpty()) {
              theirs.add(other.offer("b", o));
            }
            return super.commitAll(ops);
          }
        };
    PushResult<String> ours = queue(racing).offer("a", o);
    assertThat(theirs).singleElement().satisfies(r -> assertThat(r.created()).isTrue());
    assertThat(ours.outcome())
        .as("A's commit failed its check; A read again")
        .isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(ours.id()).isEqualTo(theirs.get(0).id());
    assertThat(queue(store).jobs()).hasSize(1);
  }

  @Test
  void oneKeyForManyJobsHeldJobsAndSchedulesAreRefused() {
    Queue<String> q = queue(store);
    JobOptions o = JobOptions.defaults().unique(UniqueKey.whileWaiting("k"));
    assertThatThrownBy(() -> q.pushAll(List.of("a", "b"), o))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one by one");
    assertThatThrownBy(() -> q.holdAll(List.of("a"), o))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("held job can't have a unique key");
    assertThatThrownBy(
            () ->
                Schedule.builder(
                        "s", ScheduleSpec.fixedRate(Duration.ofMinutes(1), clock.instant()), "x")
                    .options(o))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unique key");
    assertThat(q.jobs()).isEmpty();
  }
}
