package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rate limits per group and pauses of a group's starts with real claims and workers on the
 * in-memory store, driven by the fake clock (docs/flow-control.md, "Rate limits").
 */
class GroupRateWorkerTest {

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

  static List<String> states(String prefix, int n) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      s.add(prefix + i);
    }
    return s;
  }

  long ranOf(String prefix) {
    synchronized (ran) {
      return ran.stream().filter(s -> s.startsWith(prefix)).count();
    }
  }

  /**
   * Each group starts at most its rate per period (2 a second by default, 4 for group "big"), the
   * groups independently of each other; jobs of no group are not limited; the worker wakes by
   * itself when a group's next slot frees, and every job runs once.
   */
  @Test
  void eachGroupStartsAtMostItsRatePerPeriodAndTheWorkerWakesWhenItsSlotFrees() {
    Queue<String> q =
        builder()
            .groupRateLimit(new RateLimit(2, Duration.ofSeconds(1)))
            .groupRateLimit("big", new RateLimit(4, Duration.ofSeconds(1)))
            .build();
    q.pushAll(states("a", 7), JobOptions.defaults().group("a"));
    q.pushAll(states("big", 10), JobOptions.defaults().group("big"));
    q.pushAll(states("none", 5), JobOptions.defaults());
    q.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(8), scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(ranOf("a")).isEqualTo(2);
    assertThat(ranOf("big")).isEqualTo(4);
    assertThat(ranOf("none")).isEqualTo(5);
    scheduler.advance(Duration.ofMillis(999));
    assertThat(ranOf("a")).isEqualTo(2);
    assertThat(ranOf("big")).isEqualTo(4);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ranOf("a")).isEqualTo(4);
    assertThat(ranOf("big")).isEqualTo(8);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ranOf("a")).isEqualTo(6);
    assertThat(ranOf("big")).isEqualTo(10);
    scheduler.advance(Duration.ofSeconds(1));
    assertThat(ran).hasSize(22).doesNotHaveDuplicates();
    assertThat(q.jobs()).isEmpty();
    assertThat(store.count(q.keys.rateWindow("a").slots())).isEqualTo(2);
    assertThat(store.count(q.keys.groupsWaking())).as("no group left blocked").isZero();
    assertThat(store.list(q.keys.groups())).as("idle groups leave no record").isEmpty();
  }

  /**
   * Two nodes (two queue objects with workers of their own on one store) share each group's window:
   * together they start at most the group's rate per period.
   */
  @Test
  void twoNodesTogetherStartAtMostTheGroupsRate() {
    RateLimit rate = new RateLimit(3, Duration.ofSeconds(1));
    Queue<String> one = builder().groupRateLimit(rate).node("one").build();
    Queue<String> two = builder().groupRateLimit(rate).node("two").build();
    one.pushAll(states("t", 10), JobOptions.defaults().group("tenant"));
    ManualScheduler other = new ManualScheduler(clock);
    one.worker(
            (job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(8), scheduler)
        .start();
    two.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(8), other)
        .start();
    List<Integer> perSecond = new ArrayList<>();
    for (int s = 0; s < 4; s++) {
      int before = ran.size();
      for (int pass = 0; pass < 3; pass++) {
        scheduler.runUntilIdle();
        other.runUntilIdle();
      }
      perSecond.add(ran.size() - before);
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(perSecond).containsExactly(3, 3, 3, 1);
    assertThat(ran).containsExactlyInAnyOrderElementsOf(states("t", 10));
  }

  /**
   * A claim never passes over a job of a group whose window is full without moving it: it claims
   * what the window allows and moves the rest of the group's jobs it met to the group's parked
   * jobs, and the group admits none until its next slot frees; the next claim takes other groups'
   * jobs pushed later. 100 jobs of group a (rate 1 a minute, no concurrency limit), then 3 of b.
   */
  @Test
  void aClaimMovesTheJobsOfAFullGroupOutOfTheReadyIndexInsteadOfPassingThem() {
    Queue<String> q =
        builder().groupRateLimit("a", new RateLimit(1, Duration.ofMinutes(1))).build();
    q.pushAll(states("a", 100), JobOptions.defaults().group("a"));
    q.pushAll(states("b", 3), JobOptions.defaults().group("b"));
    Claimer claimer = new Claimer(q.keys, store).flow(q.groupLimits(), null, q.groupRates());
    long now = clock.millis();
    assertThat(payloads(claimer.claim(10, now, 3_600_000))).containsExactly("a0");
    assertThat(store.count(q.keys.ready())).as("9 of a met and moved out").isEqualTo(103 - 10);
    assertThat(store.count(q.keys.parked("a"))).isEqualTo(9);
    int claims = 0;
    List<String> b = new ArrayList<>();
    while (b.isEmpty()) {
      b.addAll(payloads(claimer.claim(10, now, 3_600_000)));
      claims++;
    }
    assertThat(claims).as("each claim moves 10 jobs of a out of its way").isEqualTo(10);
    assertThat(b).containsExactly("b0", "b1", "b2");
    assertThat(store.count(q.keys.parked("a"))).isEqualTo(99);
    q.push("a-late", JobOptions.defaults().group("a"));
    assertThat(store.count(q.keys.parked("a"))).as("a blocked group admits none").isEqualTo(100);
    assertThat(claimer.claim(10, now, 3_600_000).claimed()).isEmpty();
    claimer.moveDue(now + 60_000);
    assertThat(payloads(claimer.claim(10, now + 60_000, 3_600_000))).containsExactly("a1");
  }

  /**
   * A handler says the remote side limits its group: no job of the group starts on any node for the
   * pause (those already admitted to the ready index included), jobs of other groups keep starting,
   * and the job waits for the pause with its attempt not counted and no retry used.
   */
  @Test
  void aHandlerPausesItsGroupsStartsWithoutFailingItsJob() {
    Queue<String> q = builder().build();
    q.pushAll(states("a", 3), JobOptions.defaults().group("a"));
    q.pushAll(states("b", 3), JobOptions.defaults().group("b"));
    List<Integer> attempts = Collections.synchronizedList(new ArrayList<>());
    q.worker(
            (job, ctx) -> {
              ran.add(job.state());
              attempts.add(ctx.attempt());
              if (job.state().equals("a0") && ranOf("a0") == 1) {
                ctx.pauseGroupStarts(Duration.ofSeconds(10));
              }
            },
            WorkerOptions.defaults().concurrency(1),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("a0", "b0", "b1", "b2");
    Job<String> a0 =
        q.jobs().stream()
            .map(JobEntry::job)
            .filter(j -> j.state().equals("a0"))
            .findFirst()
            .orElseThrow();
    assertThat(a0.status()).isEqualTo(JobStatus.DELAYED);
    assertThat(a0.attempt()).as("the attempt is not counted").isZero();
    assertThat(a0.lastError()).isEmpty();
    scheduler.advance(Duration.ofMillis(9_999));
    assertThat(ran).hasSize(4);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ran).containsExactlyInAnyOrder("a0", "b0", "b1", "b2", "a0", "a1", "a2");
    assertThat(attempts).containsOnly(1);
    assertThat(q.jobs()).isEmpty();
    assertThat(store.get(q.keys.groupPaused("a"))).as("the ended pause is removed").isEmpty();
    assertThat(store.list(q.keys.groups())).isEmpty();
  }

  /** A job of no group can't pause a group: the call throws, and says what to call instead. */
  @Test
  void aJobOfNoGroupCantPauseAGroup() {
    Queue<String> q = builder().build();
    q.push("x");
    List<Throwable> thrown = new ArrayList<>();
    q.worker(
            (job, ctx) -> {
              try {
                ctx.pauseGroupStarts(Duration.ofSeconds(1));
              } catch (IllegalStateException e) {
                thrown.add(e);
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(thrown)
        .singleElement()
        .extracting(Throwable::getMessage)
        .asString()
        .contains("belongs to no group", "pauseQueueStarts");
    assertThat(q.jobs()).as("the job completed: nothing was paused").isEmpty();
  }

  @Test
  void badGroupRateLimitsAndPausesAreRefusedWithTheirReason() {
    RateLimit r = new RateLimit(1, Duration.ofSeconds(1));
    assertThatThrownBy(() -> builder().groupRateLimit("", r))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a group name must not be empty");
    assertThatThrownBy(() -> builder().groupRateLimit("g".repeat(201), r))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 200 characters");
    assertThatThrownBy(() -> builder().groupRateLimit("g", null))
        .isInstanceOf(NullPointerException.class);
    Queue<String> q =
        builder()
            .groupRateLimit(r)
            .groupRateLimit("big", new RateLimit(9, Duration.ofMinutes(1)))
            .build();
    assertThat(q.groupRateLimit("big")).contains(new RateLimit(9, Duration.ofMinutes(1)));
    assertThat(q.groupRateLimit("other")).contains(r);
    assertThat(builder().build().groupRateLimit("any")).isEmpty();
    q.push("x", JobOptions.defaults().group("g"));
    List<Throwable> thrown = new ArrayList<>();
    q.worker(
            (job, ctx) -> {
              for (Duration d : List.of(Duration.ZERO, JobOptions.MAX_DELAY.plusDays(1))) {
                try {
                  ctx.pauseGroupStarts(d);
                } catch (IllegalArgumentException e) {
                  thrown.add(e);
                }
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(thrown).hasSize(2).allMatch(e -> e.getMessage().contains("1 ms to"));
  }

  /** A group record blocked until a time keeps it through its encoding; one never blocked too. */
  @Test
  void aGroupRecordKeepsItsBlockedTime() {
    assertThat(GroupBook.Counts.decode(new GroupBook.Counts(2, 3, 1234).encode()))
        .isEqualTo(new GroupBook.Counts(2, 3, 1234));
    assertThat(new GroupBook.Counts(2, 3).encode()).as("unblocked: as before").hasSize(9);
    assertThat(GroupBook.Counts.decode(new GroupBook.Counts(2, 3).encode()))
        .isEqualTo(new GroupBook.Counts(2, 3, 0));
    assertThatThrownBy(() -> GroupBook.Counts.decode(new byte[] {2, 0}))
        .isInstanceOf(IllegalStateException.class);
  }

  static List<String> payloads(Claimer.Batch b) {
    List<String> out = new ArrayList<>();
    for (Claimer.Claimed c : b.claimed()) {
      out.add(new String(c.record().payload, StandardCharsets.UTF_8));
    }
    return out;
  }
}
