package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvEntry;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Schedules fired by real {@link Worker}s on the in-memory store, driven by the fake clock and
 * {@link ManualScheduler}: no threads, no sleeps. The idle worker wakes at each slot by itself (its
 * "when to look again" includes the schedules' next due time), so each job runs at its slot.
 */
class ScheduleWorkerTest {

  static final ZoneId PARIS = ZoneId.of("Europe/Paris");

  final FakeClock clock = new FakeClock(Instant.parse("2026-01-01T00:00:00Z"));
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = queue(store);

  /** What the handler saw: the job's slot and the time it ran. */
  record Run(String state, Instant slot, Instant at, String id) {}

  final List<Run> runs = new ArrayList<>();

  @AfterEach
  void close() {
    scheduler.shutdownNow();
    store.close();
  }

  Queue<String> queue(InMemoryKvStore on) {
    return Queue.builder(on, "q", Codecs.utf8()).clock(clock).random(new Random(7)).build();
  }

  /** Long leases and polls: a simulated year stays a few thousand tasks. */
  static WorkerOptions quiet() {
    return WorkerOptions.defaults()
        .concurrency(2)
        .lease(Duration.ofHours(2), Duration.ofHours(1))
        .pollInterval(Duration.ofHours(6));
  }

  Worker<String> recordingWorker(Queue<String> q, ManualScheduler on) {
    Worker<String> w =
        q.worker(
            (job, ctx) -> {
              assertThat(job.schedule()).isPresent();
              runs.add(new Run(job.state(), job.slot().orElseThrow(), clock.instant(), job.id()));
            },
            quiet(),
            on);
    w.start();
    return w;
  }

  Schedule<String> daily(String cron) {
    return Schedule.builder("nightly", ScheduleSpec.cron(cron, PARIS), "report").build();
  }

  /**
   * The instant a daily cron slot at {@code time} runs on {@code date} in {@code zone}, by the
   * documented rule: a local time in a gap runs where the gap ends; one in an overlap at its first
   * occurrence.
   */
  static Instant documentedSlot(LocalDate date, LocalTime time, ZoneId zone) {
    ZoneRules rules = zone.getRules();
    LocalDateTime local = date.atTime(time);
    List<ZoneOffset> offsets = rules.getValidOffsets(local);
    if (offsets.isEmpty()) {
      return rules.getTransition(local).getInstant();
    }
    return local.toInstant(offsets.get(0)); // the earlier offset first in an overlap
  }

  @Test
  void aDailyParisScheduleFiresOncePerDayAtItsSlotOverASimulatedYear() {
    assertThat(queue.schedules().define(daily("0 2 * * *"))).isEqualTo(Schedules.Defined.CREATED);
    recordingWorker(queue, scheduler);
    for (int day = 0; day < 365; day++) {
      scheduler.advance(Duration.ofDays(1));
    }
    List<Instant> expected = new ArrayList<>();
    for (LocalDate d = LocalDate.of(2026, 1, 1); expected.size() < 365; d = d.plusDays(1)) {
      expected.add(documentedSlot(d, LocalTime.of(2, 0), PARIS));
    }
    assertThat(runs).extracting(Run::slot).containsExactlyElementsOf(expected);
    assertThat(runs).allSatisfy(r -> assertThat(r.at()).isEqualTo(r.slot()));
    // the spring-forward day: 02:00 does not exist; it runs at 03:00 CEST, when the gap ends
    assertThat(runs)
        .extracting(Run::slot)
        .contains(Instant.parse("2026-03-29T01:00:00Z"), Instant.parse("2026-10-25T00:00:00Z"))
        .doesNotContain(Instant.parse("2026-10-25T01:00:00Z"));
    assertThat(queue.jobs()).isEmpty();
    ScheduleEntry<String> entry = queue.schedules().get("nightly").orElseThrow();
    assertThat(entry.lastSlot()).contains(expected.get(364));
    assertThat(entry.nextDue())
        .contains(documentedSlot(LocalDate.of(2027, 1, 1), LocalTime.of(2, 0), PARIS));
  }

  @Test
  void aSlotInTheSpringForwardGapRunsOnceAtTheGapsEndAndAnOverlapSlotOnce() {
    clock.set(Instant.parse("2026-03-28T00:00:00Z"));
    queue.schedules().define(daily("30 2 * * *"));
    recordingWorker(queue, scheduler);
    scheduler.advance(Duration.ofDays(2));
    assertThat(runs)
        .extracting(Run::slot)
        .containsExactly(
            Instant.parse("2026-03-28T01:30:00Z"), // 02:30 CET
            Instant.parse("2026-03-29T01:00:00Z")); // 03:00 CEST: the gap's end
    runs.clear();
    scheduler.advance(Duration.between(clock.instant(), Instant.parse("2026-10-24T12:00:00Z")));
    runs.clear();
    scheduler.advance(Duration.ofDays(2));
    assertThat(runs)
        .extracting(Run::slot)
        .containsExactly(
            Instant.parse("2026-10-25T00:30:00Z"), // 02:30 CEST, the first of the two
            Instant.parse("2026-10-26T01:30:00Z")); // 02:30 CET
  }

  @Test
  void defineIsIdempotentAndWritesNothingWhenUnchanged() {
    Schedule<String> s = daily("0 2 * * *");
    assertThat(queue.schedules().define(s)).isEqualTo(Schedules.Defined.CREATED);
    KvEntry before = store.get(queue.keys.schedule("nightly")).orElseThrow();
    long stampBefore =
        store.commit(dev.kvmq.store.AtomicOperation.builder().build()).versionstamp();
    clock.advance(Duration.ofHours(5));
    assertThat(queue.schedules().define(daily("0 2 * * *"))).isEqualTo(Schedules.Defined.UNCHANGED);
    long stampAfter = store.commit(dev.kvmq.store.AtomicOperation.builder().build()).versionstamp();
    assertThat(stampAfter).as("the store's versionstamp did not move").isEqualTo(stampBefore);
    assertThat(store.get(queue.keys.schedule("nightly")).orElseThrow().versionstamp())
        .isEqualTo(before.versionstamp());
  }

  @Test
  void replaceRecomputesNextDueFromNow() {
    queue.schedules().define(daily("0 2 * * *"));
    assertThat(queue.schedules().get("nightly").orElseThrow().nextDue())
        .contains(Instant.parse("2026-01-01T01:00:00Z"));
    clock.advance(Duration.ofMinutes(30));
    assertThat(queue.schedules().define(daily("0 4 * * *"))).isEqualTo(Schedules.Defined.REPLACED);
    assertThat(queue.schedules().get("nightly").orElseThrow().nextDue())
        .contains(Instant.parse("2026-01-01T03:00:00Z"));
    assertThat(store.list(queue.keys.dueEntries())).hasSize(1);
  }

  @Test
  void twoWorkersOnOneStoreFireEachSlotOnce() {
    Queue<String> other = queue(store);
    ManualScheduler second = new ManualScheduler(clock);
    queue
        .schedules()
        .define(
            Schedule.builder(
                    "often", ScheduleSpec.fixedRate(Duration.ofMinutes(1), clock.instant()), "x")
                .build());
    recordingWorker(queue, scheduler);
    recordingWorker(other, second);
    for (int i = 0; i < 120; i++) {
      clock.advance(Duration.ofSeconds(30));
      scheduler.runUntilIdle();
      second.runUntilIdle();
    }
    second.shutdownNow();
    // the first slot after the define (the anchor is now: not after now), then one a minute
    List<Instant> expected = new ArrayList<>();
    for (int m = 1; m <= 60; m++) {
      expected.add(Instant.parse("2026-01-01T00:00:00Z").plus(Duration.ofMinutes(m)));
    }
    assertThat(runs).extracting(Run::slot).containsExactlyElementsOf(expected);
  }

  @Test
  void aBadDefinitionIsAClearErrorAndWritesNothing() {
    assertThatThrownBy(
            () ->
                queue
                    .schedules()
                    .define(
                        Schedule.builder("never", ScheduleSpec.cron("0 0 30 2 *", PARIS), "x")
                            .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no slot after");
    assertThatThrownBy(() -> Schedule.builder("", ScheduleSpec.cron("@daily", PARIS), "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                Schedule.builder("r", ScheduleSpec.cron("@daily", PARIS), "x")
                    .options(JobOptions.defaults().repeat(2, Duration.ZERO)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not repeat");
    String big = "x".repeat(Queue.MAX_STATE_BYTES + 1);
    assertThatThrownBy(
            () ->
                queue
                    .schedules()
                    .define(
                        Schedule.builder("big", ScheduleSpec.cron("@daily", PARIS), big).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the limit");
    assertThat(store.list(queue.keys.schedules())).isEmpty();
    assertThat(store.list(queue.keys.dueEntries())).isEmpty();
  }

  // ---- missed slots, pause, overlap

  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  static Schedule.Builder<String> everyMinute(String name) {
    return Schedule.builder(name, ScheduleSpec.fixedRate(Duration.ofMinutes(1), T0), name);
  }

  static Instant minute(int m) {
    return T0.plus(Duration.ofMinutes(m));
  }

  List<Instant> slotsOf(String state) {
    return runs.stream().filter(r -> r.state().equals(state)).map(Run::slot).toList();
  }

  /**
   * Every node is down for ten and a half minutes (no worker; the clock jumps): on start, each
   * policy applies to the ten due slots.
   */
  @Test
  void afterAnOutageEachMissedRunsPolicyApplies() {
    queue.schedules().define(everyMinute("once").build());
    queue.schedules().define(everyMinute("skip").missed(MissedRuns.skip()).build());
    queue
        .schedules()
        .define(
            everyMinute("skip-tight")
                .missed(MissedRuns.skip())
                .lateness(Duration.ofSeconds(10))
                .build());
    queue.schedules().define(everyMinute("each").missed(MissedRuns.runEach(3)).build());
    clock.advance(Duration.ofMinutes(10).plusSeconds(30));
    recordingWorker(queue, scheduler);
    scheduler.runUntilIdle();
    assertThat(slotsOf("once")).containsExactly(minute(10));
    assertThat(slotsOf("skip")).as("30 s late, within a minute").containsExactly(minute(10));
    assertThat(slotsOf("skip-tight")).as("30 s late, over 10 s").isEmpty();
    assertThat(slotsOf("each")).containsExactly(minute(8), minute(9), minute(10));
    assertThat(runs).allSatisfy(r -> assertThat(r.at()).isEqualTo(minute(10).plusSeconds(30)));
    runs.clear();
    scheduler.advance(Duration.ofSeconds(30));
    assertThat(runs).extracting(Run::slot).containsOnly(minute(11)).hasSize(4);
  }

  /** A paused queue fires nothing; on resume the missed slots get their policy. */
  @Test
  void whileTheQueueIsPausedSlotsAreMissedAndThePolicyAppliesOnResume() {
    queue.schedules().define(everyMinute("each").missed(MissedRuns.runEach(2)).build());
    queue.schedules().define(everyMinute("skip").missed(MissedRuns.skip()).build());
    recordingWorker(queue, scheduler);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(runs).extracting(Run::slot).containsOnly(minute(1)).hasSize(2);
    runs.clear();
    queue.pause();
    scheduler.advance(Duration.ofMinutes(5).plusSeconds(20));
    assertThat(runs).isEmpty();
    assertThat(queue.jobs()).isEmpty();
    queue.resume(); // the store notifies: the idle worker wakes and fires at once
    scheduler.runUntilIdle();
    assertThat(slotsOf("each")).containsExactly(minute(5), minute(6));
    assertThat(slotsOf("skip")).as("the latest, 20 s late: on time").containsExactly(minute(6));
  }

  /** A paused schedule skips its slots: on resume it goes on at its first slot after now. */
  @Test
  void aPausedScheduleSkipsItsSlotsAndResumesAtItsNextSlot() {
    queue.schedules().define(everyMinute("each").missed(MissedRuns.runEach(5)).build());
    recordingWorker(queue, scheduler);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(queue.schedules().pause("each")).isTrue();
    assertThat(queue.schedules().pause("each")).isFalse();
    ScheduleEntry<String> paused = queue.schedules().get("each").orElseThrow();
    assertThat(paused.paused()).isTrue();
    assertThat(paused.nextDue()).isEmpty();
    scheduler.advance(Duration.ofMinutes(5).plusSeconds(20));
    assertThat(queue.schedules().resume("each")).isTrue();
    assertThat(queue.schedules().resume("each")).isFalse();
    assertThat(queue.schedules().get("each").orElseThrow().nextDue()).contains(minute(7));
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(slotsOf("each")).containsExactly(minute(1), minute(7));
  }

  /**
   * Overlap skip: the first slot's job fails and waits 90 s for its retry; the slot in between is
   * skipped (its job is still pending), the slot after its completion runs.
   */
  @Test
  void overlapSkipSkipsSlotsWhileThePreviousJobIsPending() {
    queue
        .schedules()
        .define(
            everyMinute("x")
                .overlap(Overlap.SKIP)
                .options(JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(90))))
                .build());
    List<String> attempts = new ArrayList<>();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              attempts.add(job.slot().orElseThrow() + "#" + ctx.attempt());
              if (job.slot().orElseThrow().equals(minute(1)) && ctx.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
              }
            },
            quiet(),
            scheduler);
    w.start();
    scheduler.advance(Duration.ofMinutes(4));
    assertThat(attempts)
        .containsExactly(minute(1) + "#1", minute(1) + "#2", minute(3) + "#1", minute(4) + "#1");
    // an allowed overlap would have run minute 2 as well
  }

  /**
   * Overlap skip after a cancel: the first slot's job fails and waits for its retry, an operator
   * cancels it, and the next slot runs. The cancelled job stays in the history (kept a week by
   * default), and it has ended: it once blocked every slot until it was pruned.
   */
  @Test
  void overlapSkipRunsTheNextSlotOnceThePreviousJobIsCancelled() {
    queue
        .schedules()
        .define(
            everyMinute("x")
                .overlap(Overlap.SKIP)
                .options(JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofHours(1))))
                .build());
    List<String> attempts = new ArrayList<>();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              attempts.add(job.slot().orElseThrow() + "#" + ctx.attempt());
              if (job.slot().orElseThrow().equals(minute(1))) {
                throw new IllegalStateException("the first slot's job fails");
              }
            },
            quiet(),
            scheduler);
    w.start();
    scheduler.advance(Duration.ofSeconds(90));
    assertThat(attempts).containsExactly(minute(1) + "#1");
    Job<String> first = queue.jobs(JobStatus.DELAYED, 0, 10).get(0).job();
    assertThat(queue.cancel(first.id())).isTrue();
    scheduler.advance(Duration.ofMinutes(2));
    assertThat(queue.job(first.id()).map(Job::status)).contains(JobStatus.CANCELLED);
    assertThat(attempts).containsExactly(minute(1) + "#1", minute(2) + "#1", minute(3) + "#1");
  }

  @Test
  void triggerPushesAJobNowAndTheSlotsDoNotMove() {
    queue.schedules().define(daily("0 2 * * *"));
    recordingWorker(queue, scheduler);
    clock.advance(Duration.ofMinutes(7));
    Job<String> job = queue.schedules().trigger("nightly").orElseThrow();
    assertThat(job.slot()).contains(T0.plus(Duration.ofMinutes(7)));
    assertThat(job.schedule()).contains("nightly");
    scheduler.runUntilIdle();
    assertThat(runs).extracting(Run::id).containsExactly(job.id());
    ScheduleEntry<String> e = queue.schedules().get("nightly").orElseThrow();
    assertThat(e.nextDue()).contains(Instant.parse("2026-01-01T01:00:00Z"));
    assertThat(e.lastJobId()).contains(job.id());
    assertThat(queue.schedules().trigger("nope")).isEmpty();
  }

  @Test
  void deleteRemovesRecordAndDueEntryAndPushedJobsStay() {
    queue.schedules().define(everyMinute("x").build());
    queue.schedules().define(everyMinute("y").build());
    Job<String> pushed = queue.schedules().trigger("x").orElseThrow();
    assertThat(queue.schedules().delete("x")).isTrue();
    assertThat(queue.schedules().delete("x")).isFalse();
    assertThat(queue.schedules().get("x")).isEmpty();
    assertThat(queue.schedules().list()).extracting(ScheduleEntry::name).containsExactly("y");
    assertThat(store.list(queue.keys.dueEntries())).hasSize(1);
    assertThat(queue.job(pushed.id())).isPresent();
  }

  /** A schedule defined while the worker sleeps (its poll is six hours) wakes it at its slot. */
  @Test
  void definingAScheduleWakesAnIdleWorkerAtItsSlot() {
    recordingWorker(queue, scheduler);
    scheduler.advance(Duration.ofMinutes(10).plusSeconds(5));
    queue.schedules().define(everyMinute("late").build());
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(runs)
        .extracting(Run::slot, Run::at)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(minute(11), minute(11)));
  }

  /**
   * A schedule record that can't be decoded does not stop the worker: its due entry is moved aside
   * (logged once), the other schedules fire, the list leaves it out, a define replaces it.
   */
  @Test
  void anUnreadableScheduleRecordIsMovedAsideAndTheOthersFire() {
    queue.schedules().define(everyMinute("good").build());
    store.commit(
        dev.kvmq.store.AtomicOperation.builder()
            .set(queue.keys.schedule("bad"), new byte[] {9, 9, 9})
            .set(queue.keys.due(minute(1).toEpochMilli(), "bad"), QueueKeys.EMPTY)
            .build());
    recordingWorker(queue, scheduler);
    scheduler.advance(Duration.ofMinutes(2));
    assertThat(slotsOf("good")).containsExactly(minute(1), minute(2));
    assertThat(store.get(queue.keys.corruptSchedule("bad"))).isPresent();
    assertThat(store.get(queue.keys.schedule("bad"))).as("kept for inspection").isPresent();
    assertThat(store.list(queue.keys.dueEntries())).hasSize(1);
    assertThat(queue.schedules().list()).extracting(ScheduleEntry::name).containsExactly("good");
    assertThatThrownBy(() -> queue.schedules().get("bad"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("schedule bad of queue q can't be read");
    assertThat(queue.schedules().define(everyMinute("bad").build()))
        .isEqualTo(Schedules.Defined.REPLACED);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(slotsOf("bad")).containsExactly(minute(3));
  }

  /**
   * Two nodes define the same schedule at once: the other's define commits between this one's read
   * and its commit. This one's check fails, it reads again and finds the same definition: one
   * record, one due entry. With a different definition it replaces the other's.
   */
  @Test
  void concurrentDefinesFromTwoNodesMakeOneRecordAndOneDueEntry() {
    for (boolean same : new boolean[] {true, false}) {
      InMemoryKvStore shared = new InMemoryKvStore();
      Queue<String> otherNode = queue(shared);
      Schedule<String> mine = daily("0 2 * * *");
      Schedule<String> theirs = same ? mine : daily("0 3 * * *");
      boolean[] raced = {false};
      dev.kvmq.store.KvStore racing =
          new dev.kvmq.testing.ForwardingKvStore(shared) {
            @Override
            public dev.kvmq.store.CommitResult commit(dev.kvmq.store.AtomicOperation op) {
              if (!raced[0]) {
                raced[0] = true;
                assertThat(otherNode.schedules().define(theirs))
                    .isEqualTo(Schedules.Defined.CREATED);
              }
              return super.commit(op);
            }
          };
      Queue<String> thisNode =
          Queue.builder(racing, "q", Codecs.utf8()).clock(clock).random(new Random(8)).build();
      assertThat(thisNode.schedules().define(mine))
          .isEqualTo(same ? Schedules.Defined.UNCHANGED : Schedules.Defined.REPLACED);
      assertThat(shared.list(thisNode.keys.schedules())).hasSize(1);
      assertThat(shared.list(thisNode.keys.dueEntries())).hasSize(1);
      assertThat(otherNode.schedules().get("nightly").orElseThrow().schedule()).isEqualTo(mine);
      shared.close();
    }
  }
}
