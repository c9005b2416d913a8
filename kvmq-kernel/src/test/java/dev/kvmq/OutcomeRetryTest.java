package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.LogCapture;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An outcome the worker could not record (the store failed its commit, or planning it threw) is
 * tried again while the worker runs and the job's lease lasts, so a passing failure does not make a
 * job that ran run again (docs/semantics.md, "Recording an outcome"). Leases here are the default 5
 * s; the tries wait 100 ms, 200 ms, 400 ms, 800 ms, 1.6 s, then at most 2 s.
 */
class OutcomeRetryTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final FaultyStore store = new FaultyStore(new InMemoryKvStore());
  final Queue<String> queue =
      Queue.builder(store, "retry", Codecs.utf8()).clock(clock).groupLimit(2).build();
  final List<JobEvent<String>> events = new CopyOnWriteArrayList<>();
  final AtomicInteger runs = new AtomicInteger();
  final LogCapture log = new LogCapture(Worker.class.getName());
  final List<LogRecord> logged = log.records();

  @AfterEach
  void close() {
    log.close();
    store.close();
  }

  /** Starts a worker whose handler runs {@code onFirstRun} in its first run only. */
  Worker<String> worker(Runnable onFirstRun) {
    Worker<String> w =
        queue
            .worker(
                (job, ctx) -> {
                  if (runs.incrementAndGet() == 1) {
                    onFirstRun.run();
                  }
                },
                WorkerOptions.defaults(),
                scheduler)
            .addListener(events::add);
    w.start();
    return w;
  }

  @Test
  void aCompletionWhoseCommitTheStoreFailedIsRecordedOnTheNextTryAndTheJobRunsOnce() {
    Job<String> job = queue.push("a");
    worker(() -> store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY));
    scheduler.runUntilIdle();
    assertThat(events).as("nothing recorded yet").isEmpty();
    assertThat(queue.counts().processing()).isEqualTo(1);

    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMillis(100));

    assertThat(events)
        .singleElement()
        .isInstanceOfSatisfying(
            JobEvent.Completed.class, e -> assertThat(e.job().id()).isEqualTo(job.id()));
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    scheduler.advance(Duration.ofMinutes(1)); // past every lease: nothing runs again
    assertThat(runs).hasValue(1);
    assertThat(logged)
        .filteredOn(r -> r.getLevel().intValue() >= Level.WARNING.intValue())
        .singleElement()
        .satisfies(r -> assertThat(r.getMessage()).contains("the store of queue retry is failing"));
  }

  @Test
  void aFailureWhoseCommitTheStoreFailedIsRecordedOnALaterTryWithItsAttemptCountedOnce() {
    queue.push("a", JobOptions.defaults().retry(3, Backoff.fixed(Duration.ofHours(1))));
    worker(
        () -> {
          store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY);
          throw new IllegalStateException("handler failed");
        });
    scheduler.runUntilIdle();
    scheduler.advance(Duration.ofMillis(300)); // tries 2 and 3 fail too
    assertThat(events).isEmpty();
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMillis(400)); // try 4, 700 ms after the first

    assertThat(events)
        .singleElement()
        .isInstanceOfSatisfying(
            JobEvent.Failed.class,
            e -> {
              assertThat(e.dead()).isFalse();
              assertThat(e.job().attempt()).isEqualTo(1);
              assertThat(e.error().message()).isEqualTo("handler failed");
            });
    assertThat(runs).hasValue(1);
    assertThat(logged)
        .filteredOn(r -> r.getMessage().startsWith("could not record the outcome of job"))
        .extracting(LogRecord::getMessage)
        .allMatch(m -> m.contains("trying again while its lease lasts"))
        .hasSize(3);
  }

  @Test
  void anOutcomeTheStoreRefusesUntilTheLeaseEndsIsGivenUpAndTheJobRunsAgain() {
    Job<String> job = queue.push("a");
    worker(() -> store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY));
    scheduler.runUntilIdle();
    // tries at 0.1, 0.3, 0.7, 1.5 and 3.1 s; the next would come at 5.1 s, after the lease's end
    scheduler.advance(Duration.ofMillis(4_000));
    assertThat(logged)
        .filteredOn(r -> r.getMessage().contains("trying again while its lease lasts"))
        .hasSize(5);
    assertThat(logged)
        .filteredOn(r -> r.getMessage().endsWith("it runs again when its lease expires"))
        .singleElement()
        .satisfies(r -> assertThat(r.getMessage()).contains(job.id()));
    assertThat(events).isEmpty();

    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(runs).as("the lease expired: it ran again").hasValue(2);
    assertThat(events)
        .singleElement()
        .isInstanceOfSatisfying(
            JobEvent.Completed.class, e -> assertThat(e.job().attempt()).isEqualTo(2));
  }

  @Test
  void aCommitThatFailedAfterTakingEffectIsNotRecordedAgainNorReportedAsALostLease() {
    queue.push("a");
    worker(() -> store.failCommits(op -> true, FaultyStore.Mode.AFTER_APPLY));
    scheduler.runUntilIdle();
    assertThat(queue.counts())
        .as("the completion took effect")
        .isEqualTo(new QueueCounts(0, 0, 0, 0));
    long commits = store.commitCalls.get();

    scheduler.advance(Duration.ofMillis(100)); // the try reads the job: gone, so not tried again
    assertThat(store.commitCalls.get()).isEqualTo(commits);
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(runs).hasValue(1);
    assertThat(logged).noneMatch(r -> r.getMessage().startsWith("lost the lease"));
    assertThat(logged)
        .filteredOn(r -> r.getMessage().endsWith("it runs again when its lease expires"))
        .singleElement()
        .satisfies(r -> assertThat(r.getLevel()).isEqualTo(Level.FINE));
  }

  @Test
  void aPlanningThatThrowsIsTriedAgainAndTheJobRunsOnce() {
    // a job of a group: planning its outcome reads the group's record, and that read fails
    Job<String> job = queue.push("a", JobOptions.defaults().group("g"));
    worker(() -> store.failReads(true));
    scheduler.runUntilIdle();
    assertThat(events).isEmpty();
    assertThat(log.at(Level.WARNING))
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getMessage())
                  .startsWith("could not record the outcome of job")
                  .contains("of queue retry (try 1); trying again while its lease lasts");
              assertThat(r.getThrown()).hasMessage("injected read failure");
            });
    scheduler.advance(Duration.ofMillis(100)); // try 2 fails as well: its read is the outage's
    assertThat(log.at(Level.WARNING))
        .extracting(LogRecord::getMessage)
        .hasSize(2)
        .last()
        .satisfies(m -> assertThat(m).startsWith("the store of queue retry is failing"));

    store.failReads(false);
    scheduler.advance(Duration.ofMillis(200));
    assertThat(events).singleElement().isInstanceOf(JobEvent.Completed.class);
    assertThat(log.at(Level.INFO))
        .extracting(LogRecord::getMessage)
        .containsExactly(
            "the store of queue retry works again",
            "recorded the outcome of job " + job.id() + " of queue retry at try 3");
    assertThat(log.at(Level.SEVERE)).isEmpty();
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(runs).hasValue(1);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void aWorkerThatStopsWhileAnOutcomeWaitsForItsNextTryGivesItUpAndFinishesStopping() {
    queue.push("a");
    Worker<String> w = worker(() -> store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY));
    scheduler.runUntilIdle();
    var stopped = w.stop();
    assertThat(stopped).as("the outcome still waits").isNotDone();

    scheduler.advance(Duration.ofMillis(100));
    assertThat(stopped).isDone();
    long commits = store.commitCalls.get();
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(store.commitCalls.get()).as("no try after the stop").isEqualTo(commits);
    assertThat(queue.counts().processing()).as("left to its lease, as after a crash").isZero();
    assertThat(queue.counts().waiting()).isEqualTo(1);
  }
}
