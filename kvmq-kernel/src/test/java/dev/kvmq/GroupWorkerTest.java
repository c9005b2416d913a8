package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KeyRange;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Groups, rate limits and paused starts with real claims and workers on the in-memory store, driven
 * by the fake clock (docs/flow-control.md).
 */
class GroupWorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final List<String> ran = Collections.synchronizedList(new ArrayList<>());

  @AfterEach
  void close() {
    store.close();
  }

  Queue.Builder<String> builder() {
    return Queue.builder(store, "q", Codecs.utf8()).clock(clock).random(new Random(1));
  }

  List<String> states(String prefix, int n) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      s.add(prefix + i);
    }
    return s;
  }

  /**
   * Runs every job of {@code q} with a worker of concurrency 4, recording the states it ran.
   *
   * @return how many jobs were being processed as each handler started
   */
  List<Long> runAll(Queue<String> q) {
    List<Long> leasedAtStart = new ArrayList<>();
    q.worker(
            (job, ctx) -> {
              ran.add(job.state());
              leasedAtStart.add(q.counts().processing());
            },
            WorkerOptions.defaults().concurrency(4),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    return leasedAtStart;
  }

  /**
   * A push through a store that joins its caller's transaction writes a due job of a group delayed,
   * due at once, and touches no group key, so no commit of the group waits for the caller; a
   * worker's promotion then admits it by the group's limit, after the jobs of the group pushed
   * before it. A job of no group, and a delayed one, are pushed as anywhere.
   */
  @Test
  void aGroupsJobPushedInACallersTransactionIsAdmittedByAPromotionUnderTheLimit() {
    Queue<String> q = builder().groupLimit(1).build();
    q.pushAll(states("before", 2), JobOptions.defaults().group("g"));
    clock.advance(Duration.ofMillis(1)); // ids of two queue objects are ordered by time only
    JoinedView view = new JoinedView(store, q.keys);
    Queue<String> inTransaction = q.withStore(view);

    List<Job<String>> pushed =
        inTransaction.pushAll(states("tx", 2), JobOptions.defaults().group("g"));
    Job<String> plain = inTransaction.push("plain");
    Job<String> later =
        inTransaction.push("later", JobOptions.defaults().group("g").delay(Duration.ofSeconds(5)));

    assertThat(view.problems()).as("group keys the pushes touched").isEmpty();
    assertThat(pushed)
        .allSatisfy(
            j -> {
              assertThat(j.status())
                  .as("due: waiting, as a push's job")
                  .isEqualTo(JobStatus.WAITING);
              assertThat(j.delayUntil()).isEqualTo(clock.instant());
            });
    assertThat(store.count(KeyRange.prefix(q.keys.delayedIndex())))
        .as("in the delayed index, for a promotion to admit")
        .isEqualTo(3);
    assertThat(plain.status()).as("no group: waiting").isEqualTo(JobStatus.WAITING);
    assertThat(later.delayUntil()).isEqualTo(clock.instant().plusSeconds(5));
    assertThat(store.get(q.keys.group("g")).map(e -> GroupBook.Counts.decode(e.value())))
        .as("the group's record counts only the jobs pushed outside")
        .contains(new GroupBook.Counts(1, 1));

    List<Long> leasedAtStart = runAll(q);
    assertThat(ran).containsExactlyInAnyOrder("before0", "before1", "tx0", "tx1", "plain");
    assertThat(ran.stream().filter(s -> !s.equals("plain")))
        .as("the group's jobs in push order")
        .containsExactly("before0", "before1", "tx0", "tx1");
    clock.advance(Duration.ofSeconds(5));
    scheduler.runUntilIdle();
    assertThat(ran).hasSize(6).endsWith("later");
    assertThat(leasedAtStart)
        .as("at most the limit's one job of g and the plain one")
        .allMatch(n -> n <= 2);
    assertThat(store.get(q.keys.group("g"))).as("no record left").isEmpty();
  }

  /**
   * Fairness: a saturated group holds at most its limit of the ready index, so a claim takes the
   * jobs of other groups pushed after its backlog, in queue order, without reading past the
   * backlog. 1,000 jobs of group a (limit 2) pushed first, then 5 of group b: one claim of 10 takes
   * a's two admitted jobs and all of b's.
   */
  @Test
  void aClaimTakesOtherGroupsJobsPastASaturatedGroupsBacklog() {
    Queue<String> q = builder().groupLimit("a", 2).build();
    q.pushAll(states("a", 1_000), JobOptions.defaults().group("a"));
    q.pushAll(states("b", 5), JobOptions.defaults().group("b"));
    q.push("none");
    assertThat(store.count(q.keys.ready())).as("ready: 2 of a, 5 of b, 1 of none").isEqualTo(8);
    assertThat(store.count(q.keys.parked("a"))).isEqualTo(998);
    Claimer claimer = new Claimer(q.keys, store).flow(q.groupLimits(), null);
    List<String> claimed = new ArrayList<>();
    for (Claimer.Claimed c : claimer.claim(10, clock.millis(), 5_000).claimed()) {
      claimed.add(new String(c.record().payload, java.nio.charset.StandardCharsets.UTF_8));
    }
    assertThat(claimed).containsExactly("a0", "a1", "b0", "b1", "b2", "b3", "b4", "none");
  }

  /**
   * Every job of a group with limit 1 runs, one at a time, in queue order; the commit that ends one
   * admits the next, and the group's record is gone once the group is idle.
   */
  @Test
  void aGroupWithLimitOneRunsItsJobsOneByOneInQueueOrderAndLeavesNoRecord() {
    Queue<String> q = builder().groupLimit(1).build();
    q.pushAll(states("x", 20), JobOptions.defaults().group("tenant-1"));
    List<Long> leasedAtStart = runAll(q);
    assertThat(ran).containsExactlyElementsOf(states("x", 20));
    assertThat(leasedAtStart).containsOnly(1L);
    assertThat(store.list(q.keys.groups())).isEmpty();
  }

  /**
   * A limit of 0 raised: the group's 20 parked jobs have no admitted job whose completion would
   * admit them, and no push comes. A worker started with the new limit (2) admits them at its
   * start, and runs all 20 in queue order, never more than 2 at once.
   */
  @Test
  void aWorkerStartedWithARaisedLimitRunsTheJobsParkedUnderTheOldOne() {
    Queue<String> before = builder().groupLimit("a", 0).build();
    before.pushAll(states("a", 20), JobOptions.defaults().group("a"));
    assertThat(store.count(before.keys.parked("a"))).isEqualTo(20);
    Queue<String> q = builder().groupLimit("a", 2).build();
    List<Long> leasedAtStart = runAll(q);
    assertThat(ran).containsExactlyElementsOf(states("a", 20));
    assertThat(leasedAtStart).allMatch(n -> n >= 1 && n <= 2);
    assertThat(store.list(q.keys.groups())).as("the idle group's record").isEmpty();
  }

  /**
   * A limit removed: a worker of a queue without it admits all 20 jobs parked under a limit of 0,
   * more than one commit's {@link GroupBook#HEADS}, at its start.
   */
  @Test
  void aWorkerStartedWithoutTheLimitAdmitsEveryJobParkedUnderIt() {
    Queue<String> before = builder().groupLimit("a", 0).build();
    before.pushAll(states("a", 20), JobOptions.defaults().group("a"));
    Queue<String> q = builder().build();
    Claimer claimer = new Claimer(q.keys, store).flow(q.groupLimits(), null);
    assertThat(claimer.admitFreeSlots()).isEqualTo(20);
    assertThat(store.count(q.keys.parked("a"))).isZero();
    assertThat(store.count(q.keys.ready())).isEqualTo(20);
    assertThat(claimer.admitFreeSlots()).as("a second time").isZero();
    q.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(4), scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactlyElementsOf(states("a", 20));
  }

  /**
   * The rate limit: 3 starts per second. 10 jobs: 3 start now, none until a second has passed since
   * the first starts, then 3 more; the worker wakes by itself when the next slot frees.
   */
  @Test
  void theRateLimitStartsAtMostNPerPeriodAndTheWorkerWakesWhenASlotFrees() {
    Queue<String> q = builder().rateLimit(new RateLimit(3, Duration.ofSeconds(1))).build();
    q.pushAll(states("j", 10), JobOptions.defaults());
    q.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(8), scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(ran).hasSize(3);
    scheduler.advance(Duration.ofMillis(999));
    assertThat(ran).hasSize(3);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ran).hasSize(6);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ran).hasSize(9);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ran).containsExactlyElementsOf(states("j", 10));
    assertThat(store.count(q.keys.rateSlots()))
        .as("one stored slot per start allowed")
        .isEqualTo(3);
  }

  /**
   * A handler says the remote side limits us: its job waits for the pause, with the attempt not
   * counted and no retry used, and no job of the queue starts until the pause ends.
   */
  @Test
  void aHandlerPausesTheQueuesStartsWithoutFailingItsJob() {
    Queue<String> q = builder().build();
    q.push("first");
    q.pushAll(List.of("second", "third"), JobOptions.defaults());
    List<Integer> attempts = new ArrayList<>();
    q.worker(
            (job, ctx) -> {
              ran.add(job.state());
              attempts.add(ctx.attempt());
              if (job.state().equals("first") && ran.size() == 1) {
                ctx.pauseQueueStarts(Duration.ofSeconds(10));
              }
            },
            WorkerOptions.defaults().concurrency(1),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("first");
    Job<String> first =
        q.jobs().stream()
            .map(JobEntry::job)
            .filter(j -> j.state().equals("first"))
            .findFirst()
            .orElseThrow();
    assertThat(first.status()).isEqualTo(JobStatus.DELAYED);
    assertThat(first.attempt()).as("the attempt is not counted").isZero();
    assertThat(first.lastError()).isEmpty();
    scheduler.advance(Duration.ofMillis(9_999));
    assertThat(ran).containsExactly("first");
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ran).containsExactly("first", "first", "second", "third");
    assertThat(attempts).containsExactly(1, 1, 1, 1);
    assertThat(q.jobs()).isEmpty();
  }

  @Test
  void badGroupsAndLimitsAreRefusedWithTheirReason() {
    assertThatThrownBy(() -> JobOptions.defaults().group(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a group name must not be empty");
    assertThatThrownBy(() -> JobOptions.defaults().group("g".repeat(201)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a group name has at most 200 characters: this one has 201");
    assertThatThrownBy(() -> JobOptions.defaults().group("a\uD800"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate at index 1");
    assertThat(JobOptions.defaults().group("g".repeat(200)).group()).hasSize(200);
    assertThat(JobOptions.defaults().group("x").group(null).group()).isNull();
    assertThatThrownBy(() -> builder().groupLimit(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the default group limit must not be negative: -1");
    assertThatThrownBy(() -> builder().groupLimit("t", -2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the limit of group \"t\" must not be negative: -2");
    assertThatThrownBy(() -> builder().groupLimit("", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a group name must not be empty");
    assertThatThrownBy(() -> new RateLimit(0, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 to 100000 starts per period: 0");
    assertThatThrownBy(() -> new RateLimit(1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("period is 1 ms to");
    assertThatThrownBy(
            () ->
                Schedule.builder(
                        "s", ScheduleSpec.fixedRate(Duration.ofMinutes(1), clock.instant()), "x")
                    .options(JobOptions.defaults().group("g")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("belong to no group");
    Queue<String> q = builder().groupLimit(3).groupLimit("big", 10).build();
    assertThat(q.groupLimit("big")).isEqualTo(10);
    assertThat(q.groupLimit("other")).isEqualTo(3);
    assertThat(builder().build().groupLimit("any")).isEqualTo(Queue.UNLIMITED);
  }

  /** The group and the parked flag survive the record's encoding; a record of no group has none. */
  @Test
  void aJobRecordKeepsItsGroupAndParkedFlag() {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id = new Ulid(new Random(2)).next(clock.millis());
    d.group = "tenant-é";
    d.parked = true;
    JobRecord r = JobRecord.decode(d.build().encode());
    assertThat(r.group).isEqualTo("tenant-é");
    assertThat(r.parked).isTrue();
    d.group = null;
    d.parked = false;
    JobRecord none = JobRecord.decode(d.build().encode());
    assertThat(none.group).isNull();
    assertThat(none.parked).isFalse();
  }
}
