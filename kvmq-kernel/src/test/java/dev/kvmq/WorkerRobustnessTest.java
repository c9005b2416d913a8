package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression tests for worker bugs found in review, each named for what it reproduced. Without its
 * fix, each of these fails.
 */
class WorkerRobustnessTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final FaultyStore store = new FaultyStore(new InMemoryKvStore());
  final Queue<String> queue =
      Queue.builder(store, "r", Codecs.utf8()).clock(clock).random(new Random(5)).build();
  final List<JobEvent<String>> events = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  /**
   * On a multi-threaded executor the pass started by a timed wake could run before the wake task
   * returned; it then saw a wake "still pending" and scheduled none, and a delayed job waited for a
   * commit that never came.
   */
  @Test
  void aDelayedJobRunsOnAMultiThreadedExecutorWithNothingElseHappening() throws Exception {
    ScheduledExecutorService pool = Executors.newScheduledThreadPool(4);
    try {
      Queue<String> q = Queue.builder(new InMemoryKvStore(), "wake", Codecs.utf8()).build();
      CountDownLatch ran = new CountDownLatch(1);
      q.worker(
              (job, ctx) -> ran.countDown(),
              WorkerOptions.defaults().pollInterval(Duration.ofMillis(50)),
              pool)
          .start();
      q.push("later", JobOptions.defaults().delay(Duration.ofMillis(600)));
      assertThat(ran.await(30, TimeUnit.SECONDS)).as("the delayed job ran").isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  /** A failure whose error text pushed the record over the store's limit was never recorded. */
  @Test
  void aFailureOfAJobNearTheSizeLimitIsStillRecorded() {
    queue
        .worker(
            (job, ctx) -> {
              throw new IllegalStateException("x".repeat(100_000));
            },
            WorkerOptions.defaults(),
            scheduler)
        .addListener(events::add)
        .start();
    Job<String> job = queue.push("s".repeat(Queue.MAX_STATE_BYTES));
    scheduler.runUntilIdle();
    assertThat(events).singleElement().isInstanceOf(JobEvent.Failed.class);
    Job<String> dead = queue.deadLetters().get(0);
    assertThat(dead.id()).isEqualTo(job.id());
    assertThat(dead.lastError().orElseThrow().type())
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(queue.push("small")).isNotNull();
  }

  /**
   * A job of the largest state, with the longest group, unique key and node name (in characters of
   * 3 bytes in UTF-8, the most a {@code char} takes) and errors longer than a record holds, failed
   * until its claims outgrew the store's value limit: at the 10th claim the new attempt did not
   * fit, the claim failed on every pass, the job stayed waiting with its unique key held, and the
   * worker called the store failing. Every claim and failure must fit, and the job end as a dead
   * letter after its 13 attempts.
   */
  @Test
  void aJobOfTheLargestFieldsThatAlwaysFailsBecomesADeadLetter() {
    String wide = "\u20AC"; // 3 bytes in UTF-8
    Queue<String> big =
        Queue.builder(store, "big", Codecs.utf8())
            .clock(clock)
            .node(wide.repeat(Queue.MAX_NODE_LENGTH))
            .build();
    big.worker(
            (job, ctx) -> {
              if (!job.state().equals("small")) {
                throw new IllegalStateException(wide.repeat(10_000));
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .addListener(events::add)
        .start();
    Job<String> job =
        big.push(
            "z".repeat(Queue.MAX_STATE_BYTES),
            JobOptions.defaults()
                .retry(12, Backoff.NONE)
                .group(wide.repeat(JobOptions.MAX_GROUP_LENGTH))
                .unique(UniqueKey.whileWaitingOrRunning(wide.repeat(UniqueKey.MAX_KEY_LENGTH))));
    scheduler.runUntilIdle();

    Job<String> dead = big.job(job.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(JobStatus.DEAD);
    assertThat(dead.attempt()).isEqualTo(13);
    assertThat(dead.attempts())
        .isNotEmpty()
        .last()
        .satisfies(a -> assertThat(a.number()).isEqualTo(13));
    assertThat(dead.lastError().orElseThrow().type())
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(dead.holdsUniqueKey()).as("a dead letter's key is free").isFalse();
    assertThat(events).filteredOn(e -> e instanceof JobEvent.Failed).hasSize(13);
    assertThat(store.get(big.keys.job(job.id())).orElseThrow().value().length)
        .isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_VALUE_BYTES);

    Job<String> small = big.push("small");
    scheduler.runUntilIdle();
    assertThat(events)
        .as("the queue keeps running")
        .anyMatch(e -> e instanceof JobEvent.Completed && e.job().id().equals(small.id()));
  }

  /** A store error while renewing ended the repeating renewal task for good. */
  @Test
  void renewalsGoOnAfterAStoreErrorDuringARenewal() {
    AtomicBoolean cancelled = new AtomicBoolean();
    queue
        .worker(
            (job, ctx) -> {
              if (ctx.attempt() > 1) {
                return; // a second run means the lease was lost: the assertions below catch it
              }
              // someone rewrites the record behind the worker's back: its next renewal's check
              // fails...
              Key key = queue.keys.job(job.id());
              KvEntry e = store.get(key).orElseThrow();
              store.commit(AtomicOperation.builder().set(key, e.value()).build());
              // ...and the re-read that follows fails too
              store.failReads(true);
              scheduler.advance(Duration.ofSeconds(2));
              store.failReads(false);
              scheduler.advance(
                  Duration.ofSeconds(20)); // four lease lengths: renewals must keep it
              cancelled.set(ctx.isCancelled());
            },
            WorkerOptions.defaults(),
            scheduler)
        .addListener(events::add)
        .start();
    queue.push("long");
    scheduler.runUntilIdle();
    assertThat(cancelled).isFalse();
    assertThat(events).singleElement().isInstanceOf(JobEvent.Completed.class);
  }

  /** An unexpected exception in a pass left the pump counter set and the worker silent for good. */
  @Test
  void aCorruptRecordDoesNotStallTheWorker() {
    List<String> ran = new ArrayList<>();
    queue
        .worker(
            (job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(2), scheduler)
        .start();
    Job<String> bad = queue.push("bad", JobOptions.defaults().priority(10));
    Key key = queue.keys.job(bad.id());
    byte[] corrupt = store.get(key).orElseThrow().value();
    corrupt[corrupt.length - bad.state().length() - 5] = 0x7f; // breaks the record's framing
    corrupt[1 + 2 + 26 + 8] = 99; // an unknown state ordinal
    store.commit(AtomicOperation.builder().set(key, corrupt).build());
    queue.push("good");
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("good");
    queue.push("later");
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("good", "later");
    assertThat(store.get(queue.keys.corrupt(bad.id()))).as("moved aside").isPresent();
    assertThat(store.get(key)).as("kept for inspection").isPresent();
    assertThat(queue.jobs()).isEmpty();
    assertThat(queue.counts().queued()).isZero();
  }

  /**
   * Breaks {@code job}'s record so that it can't be read (as {@link
   * #aCorruptRecordDoesNotStallTheWorker}).
   */
  private void corrupt(Queue<String> q, Job<String> job) {
    Key key = q.keys.job(job.id());
    byte[] bytes = store.get(key).orElseThrow().value();
    bytes[1 + 2 + 26 + 8] = 99; // an unknown state ordinal
    store.commit(AtomicOperation.builder().set(key, bytes).build());
  }

  /**
   * An unreadable delayed record failed every promote, and claims wait for promotes: the whole
   * queue stopped. It is moved aside, and the other delayed and ready jobs run.
   */
  @Test
  void anUnreadableDelayedRecordIsMovedAsideAndTheOthersRun() {
    List<String> ran = new ArrayList<>();
    queue.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    Job<String> bad = queue.push("bad", JobOptions.defaults().delay(Duration.ofSeconds(1)));
    queue.push("later", JobOptions.defaults().delay(Duration.ofSeconds(2)));
    corrupt(queue, bad);
    scheduler.advance(Duration.ofSeconds(3));
    queue.push("now");
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("later", "now");
    assertThat(store.get(queue.keys.corrupt(bad.id()))).as("moved aside").isPresent();
    assertThat(store.get(queue.keys.job(bad.id()))).as("kept for inspection").isPresent();
    assertThat(queue.counts().delayed()).isZero();
  }

  /**
   * An unreadable held record failed every pass of a queue with a held timeout. It is moved aside,
   * and the other held job past the timeout is released and runs.
   */
  @Test
  void anUnreadableHeldRecordIsMovedAsideAndTheOthersAreReleased() {
    Queue<String> q =
        Queue.builder(store, "h", Codecs.utf8())
            .clock(clock)
            .heldTimeout(Duration.ofMinutes(1))
            .build();
    List<String> ran = new ArrayList<>();
    q.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    List<Job<String>> held = q.holdAll(List.of("bad", "left"), JobOptions.defaults());
    corrupt(q, held.get(0));
    scheduler.advance(Duration.ofMinutes(2));
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("left");
    assertThat(store.get(q.keys.corrupt(held.get(0).id()))).as("moved aside").isPresent();
    assertThat(store.get(q.keys.job(held.get(0).id()))).as("kept for inspection").isPresent();
    assertThat(store.list(q.keys.held(), 10, false)).isEmpty();
  }

  /**
   * A renewal planned while the job ran, whose commit came after the job's own completion, was
   * refused (the completion had changed the record), read the job again, found it completed and
   * reported the lease lost: a warning and a {@link JobEvent.LeaseLost} for a job that completed.
   * kvmq-bench's PostgreSQL drain logged about 30 such warnings per renewal round.
   */
  @Test
  void aRenewalThatLosesTheRaceWithTheJobsCompletionReportsNoLostLease() throws Exception {
    CountDownLatch renewalPlanned = new CountDownLatch(1);
    CountDownLatch jobCompleted = new CountDownLatch(1);
    AtomicReference<Thread> renewing = new AtomicReference<>();
    ForwardingKvStore racing =
        new ForwardingKvStore(store) {
          @Override
          public List<CommitResult> commitAll(List<AtomicOperation> operations) {
            if (Thread.currentThread() == renewing.get()) { // the renewal: planned, not committed
              renewalPlanned.countDown();
              awaitOrFail(jobCompleted, "the job's completion");
            }
            return super.commitAll(operations);
          }
        };
    Queue<String> q = Queue.builder(racing, "race", Codecs.utf8()).clock(clock).build();
    AtomicReference<Worker<String>> worker = new AtomicReference<>();
    worker.set(
        q.worker(
            (job, ctx) -> {
              Thread t = new Thread(() -> worker.get().renewer.renewAll(), "renewal");
              renewing.set(t);
              t.start();
              awaitOrFail(renewalPlanned, "the renewal's plan"); // then the job completes
            },
            WorkerOptions.defaults(),
            scheduler));
    worker.get().addListener(events::add).start();
    Job<String> job = q.push("raced");
    scheduler.runUntilIdle(); // runs the job and commits its completion
    assertThat(q.job(job.id()).orElseThrow().status()).isEqualTo(JobStatus.COMPLETED);
    jobCompleted.countDown(); // now the renewal's commit runs, and is refused
    renewing.get().join(TimeUnit.SECONDS.toMillis(30));
    assertThat(renewing.get().isAlive()).as("the renewal finished").isFalse();
    assertThat(events).singleElement().isInstanceOf(JobEvent.Completed.class);
  }

  private static void awaitOrFail(CountDownLatch latch, String what) {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("timed out waiting for " + what);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted waiting for " + what, e);
    }
  }
}
