package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.Seeds;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of flow control: several real {@link Worker}s share one queue with group
 * limits (a default and per-group limits), in half the runs a rate limit, in half the runs rate
 * limits of groups (a default, or per group), and handlers that now and then pause the queue's
 * starts or their group's, on a store that fails commits at random (before they apply, or after),
 * while workers crash (abandoned with their leases) or stop, time jumps, and running handlers stall
 * their worker past its lease while the other workers go on ({@link Stalls}: their jobs are taken
 * over with their slot, and their outcomes refused). In half the runs one group starts with a limit
 * of 0, which is raised partway through: every worker is crashed or stopped and started again on a
 * queue with the new limit, and no job of that group is pushed after it, so only the new workers'
 * start can admit its parked jobs. Every fourth push of a group's jobs goes through a view that
 * joins a caller's transaction ({@link JoinedView}): it writes no group key, and its due jobs wait,
 * delayed, for a worker's promotion to admit them. A {@link FlowChecker} under the faults follows
 * every applied commit and finds no instant where a group has more jobs leased or admitted than its
 * limit, more starts in a window than the rate limit allows (the queue's, or its group's), or a
 * start during a pause (the queue's, or its group's); no worker reports the completion of a run
 * older than its job's newest (a stalled worker's run taken over). After the faults stop, the queue
 * drains: every acknowledged job ran to its end or is a dead letter, and no group record is left.
 *
 * <p>Every run is a pure function of its seed; a failure prints it ({@code -Dkvmq.seed=N}).
 */
public abstract class FlowSimulationContract {

  /**
   * Opens a fresh, empty store for one run.
   *
   * @return the store; the test closes it
   * @throws Exception if it can't be opened
   */
  protected abstract KvStore newStore() throws Exception;

  /**
   * How many seeded runs to make.
   *
   * @return the number of runs
   */
  protected int runs() {
    return Integer.getInteger("kvmq.simulation.runs", 300);
  }

  /** The edges of the transition table for groups and pauses that a full run walks. */
  static final Set<TransitionTable.Edge> WALKS =
      EnumSet.of(
          TransitionTable.Edge.PUSH_PARKED,
          TransitionTable.Edge.REPEAT_PARKED,
          TransitionTable.Edge.PROMOTE_PARKED,
          TransitionTable.Edge.ADMIT,
          TransitionTable.Edge.DEFER,
          TransitionTable.Edge.BLOCK);

  /** The flow-control guarantees hold at every instant of every run. */
  @Test
  void noInstantOverAGroupLimitOrTheRateUnderFaultsAndCrashes() {
    Set<TransitionTable.Edge> walked = EnumSet.noneOf(TransitionTable.Edge.class);
    int[] totals = new int[9];
    TransitionTable.recordOnThisThread(walked::add);
    try {
      Seeds.forEach(
          "noInstantOverAGroupLimitOrTheRateUnderFaultsAndCrashes",
          runs(),
          1,
          r -> {
            KvStore raw;
            try {
              raw = newStore();
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            try {
              Sim sim = new Sim(raw, r);
              sim.run();
              totals[0] += sim.checker.startsSeen;
              totals[1] = Math.max(totals[1], sim.checker.maxLeasedInAGroup);
              totals[2] += sim.checker.parkedSeen;
              totals[3] += sim.checker.groupRateStartsSeen;
              totals[4] += sim.checker.groupPausesSeen;
              totals[5] += sim.raisedRan;
              totals[6] += sim.leasesLost;
              totals[7] += sim.stalls.overlapping();
              totals[8] += sim.joinedPushes;
            } finally {
              raw.close();
            }
          });
    } finally {
      TransitionTable.stopRecording();
    }
    assertThat(totals[0]).as("jobs started").isPositive();
    assertThat(totals[2]).as("jobs parked: groups were saturated").isPositive();
    assertThat(totals[3]).as("starts of groups with a rate limit").isPositive();
    assertThat(totals[4]).as("pauses of a group's starts").isPositive();
    assertThat(totals[5]).as("jobs of a group whose limit of 0 was raised, run").isPositive();
    assertThat(totals[6]).as("lost leases of stalled handlers' jobs").isPositive();
    assertThat(totals[8]).as("pushes of a group's jobs in a caller's transaction").isPositive();
    if (System.getProperty("kvmq.seed") == null && runs() >= 300) {
      assertThat(totals[7]).as("stalls that began during another").isPositive();
      assertThat(totals[1]).as("most jobs of one group leased at once").isGreaterThan(1);
      assertThat(walked).as("edges the flow simulation walked").containsAll(WALKS);
    }
  }

  private static final class Sim {
    final SplittableRandom r;
    final FakeClock clock = new FakeClock();
    final FlowChecker checker;
    final FaultyStore store;
    Queue<String> queue;
    final Map<String, Integer> limits = new HashMap<>();
    final int defaultLimit;
    final RateLimit rate;
    final Map<String, RateLimit> groupRates = new HashMap<>();
    final RateLimit defaultGroupRate;
    final List<ManualScheduler> schedulers = new ArrayList<>();
    final List<Worker<String>> workers = new ArrayList<>();

    /** Running handlers that stall their worker past its lease now and then. */
    final Stalls stalls = new Stalls(clock, schedulers);

    /** Lost leases the workers reported: stalled handlers' jobs, taken over or expired. */
    int leasesLost;

    /** Job id to the newest token any worker ran it under. */
    final Map<String, Long> newestRun = new HashMap<>();

    final SplittableRandom faults;
    final Set<String> acknowledged = new LinkedHashSet<>();
    final Map<String, Integer> repeatsOf = new HashMap<>();
    final Map<String, Set<String>> ranIds = new HashMap<>();
    final List<String> problems = new ArrayList<>();
    int pushed;

    /** Pushes of a group's jobs through a view that joins a caller's transaction. */
    int joinedPushes;

    /** The group whose limit is 0 until step {@link #raiseAt}; null in runs without one. */
    final String zeroGroup;

    final int raiseAt;
    final int raisedLimit;
    boolean raised;
    int raisedRan;

    Sim(KvStore raw, SplittableRandom r) {
      this.r = r;
      this.faults = r.split();
      this.defaultLimit = 1 + r.nextInt(3);
      for (int g = 0; g < 3; g++) {
        if (r.nextBoolean()) {
          limits.put("g" + g, 1 + r.nextInt(4));
        }
      }
      SplittableRandom zr = r.split();
      this.zeroGroup = zr.nextBoolean() ? "g3" : null;
      this.raiseAt = 60 + zr.nextInt(60);
      this.raisedLimit = 1 + zr.nextInt(3);
      if (zeroGroup != null) {
        limits.put(zeroGroup, 0);
      }
      this.rate =
          r.nextBoolean()
              ? new RateLimit(1 + r.nextInt(4), Duration.ofMillis(500 + r.nextInt(4) * 500L))
              : null;
      SplittableRandom gr = r.split();
      boolean groupRated = gr.nextBoolean();
      this.defaultGroupRate = groupRated && gr.nextBoolean() ? rate(gr) : null;
      for (int g = 0; groupRated && g < 3; g++) {
        if (gr.nextBoolean()) {
          groupRates.put("g" + g, rate(gr));
        }
      }
      QueueKeys keys = new QueueKeys("flow");
      this.checker =
          new FlowChecker(
              raw,
              keys,
              clock,
              g -> limits.getOrDefault(g, defaultLimit),
              rate,
              g -> groupRates.getOrDefault(g, defaultGroupRate));
      this.store = new FaultyStore(checker);
      this.queue = queue(new Random(r.nextLong()));
    }

    /** The queue with the limits of {@link #limits} as they are now. */
    Queue<String> queue(Random random) {
      Queue.Builder<String> b =
          Queue.builder(store, "flow", Codecs.utf8())
              .clock(clock)
              .random(random)
              .groupLimit(defaultLimit)
              .rateLimit(rate)
              .groupRateLimit(defaultGroupRate);
      limits.forEach(b::groupLimit);
      groupRates.forEach(b::groupRateLimit);
      return b.build();
    }

    /**
     * The limit of 0 is raised: every worker crashes or stops, and starts again on a queue with the
     * new limit. The checker's limit is the new one from now on (the old one admitted none).
     */
    void raiseTheZeroLimit() {
      raised = true;
      limits.put(zeroGroup, raisedLimit);
      queue = queue(new Random(r.nextLong()));
      for (int i = 0; i < schedulers.size(); i++) {
        if (r.nextBoolean()) {
          schedulers.get(i).shutdownNow();
        } else {
          workers.get(i).stop();
          schedulers.get(i).runUntilIdle();
          schedulers.get(i).shutdownNow();
        }
        schedulers.set(i, newWorker(i));
      }
    }

    static RateLimit rate(SplittableRandom r) {
      return new RateLimit(1 + r.nextInt(3), Duration.ofMillis(300 + r.nextInt(4) * 400L));
    }

    void run() {
      int count = 2 + r.nextInt(3);
      for (int i = 0; i < count; i++) {
        workers.add(null);
        schedulers.add(newWorker(i));
      }
      int failPercent = r.nextInt(15);
      FaultyStore.Mode mode =
          r.nextBoolean() ? FaultyStore.Mode.BEFORE_APPLY : FaultyStore.Mode.AFTER_APPLY;
      store.failCommits(op -> faults.nextInt(100) < failPercent, mode);
      for (int step = 0; step < 120; step++) {
        if (zeroGroup != null && step == raiseAt) {
          raiseTheZeroLimit();
        }
        int a = r.nextInt(100);
        if (a < 35) {
          push();
        } else if (a < 38) {
          crashOne();
        } else if (a < 40) {
          stopOne();
        } else if (a < 42) {
          clock.advance(Duration.ofMillis(6_000 + r.nextInt(20_000))); // an outage
        } else {
          clock.advance(Duration.ofMillis(r.nextInt(1_500)));
        }
        drive();
      }
      store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
      for (int i = 0; i < 600 && hasUnfinished(); i++) {
        clock.advance(Duration.ofSeconds(1));
        drive();
      }
      for (int i = 0; i < 5; i++) { // blocked groups wake and leave no record
        clock.advance(Duration.ofSeconds(1));
        drive();
      }
      problems.addAll(checker.problems);
      assertThat(hasUnfinished()).as("jobs left unfinished: " + queue.jobs()).isFalse();
      Set<String> dead = new java.util.HashSet<>();
      for (Job<String> j : queue.deadLetters()) {
        dead.add(j.state());
      }
      for (String state : acknowledged) {
        int runs = repeatsOf.get(state) + 1;
        int completed = checker.completions.getOrDefault(state, 0);
        if (completed > runs) {
          problems.add(
              state + " completed " + completed + " times, more than its " + runs + " runs");
        }
        if (completed < runs && !dead.contains(state)) {
          problems.add(state + " was acknowledged and never ended (" + completed + " completions)");
        }
      }
      assertThat(store.list(queue.keys.groups())).as("group records left").isEmpty();
      assertThat(problems).isEmpty();
    }

    boolean hasUnfinished() {
      return queue.jobs().stream().anyMatch(e -> e.job().status() != JobStatus.DEAD);
    }

    ManualScheduler newWorker(int slot) {
      ManualScheduler s = new ManualScheduler(clock);
      int failPercent = r.nextInt(30);
      SplittableRandom outcomes = r.split();
      SplittableRandom stallsOf = r.split();
      Map<String, Long> ranHere = new HashMap<>(); // job id -> token of this worker's last run
      Worker<String> w =
          queue.worker(
              (job, ctx) -> {
                ranIds.computeIfAbsent(job.state(), c -> new LinkedHashSet<>()).add(job.id());
                ranHere.put(job.id(), ctx.token());
                newestRun.merge(job.id(), ctx.token(), Math::max);
                if (job.group().filter(g -> g.equals(zeroGroup)).isPresent()) {
                  if (!raised) {
                    problems.add(job.state() + " of group " + zeroGroup + " ran under limit 0");
                  }
                  raisedRan++;
                }
                stalls.maybeStall(s, stallsOf);
                int o = outcomes.nextInt(100);
                if (o < 4) {
                  ctx.pauseQueueStarts(Duration.ofMillis(200 + outcomes.nextInt(2_000)));
                  return;
                }
                if (o < 8 && job.group().isPresent()) {
                  ctx.pauseGroupStarts(Duration.ofMillis(200 + outcomes.nextInt(2_000)));
                  return;
                }
                if (o < 8 + failPercent) {
                  throw new IllegalStateException("simulated failure");
                }
              },
              WorkerOptions.defaults()
                  .concurrency(1 + r.nextInt(4))
                  .prefetch(r.nextInt(3))
                  .lease(Duration.ofSeconds(5), Duration.ofSeconds(2))
                  .handoff(r.nextBoolean()),
              s);
      workers.set(slot, w);
      w.addListener(
          e -> {
            if (e instanceof JobEvent.LeaseLost<String>) {
              leasesLost++;
            }
            if (e instanceof JobEvent.Completed<String> c) {
              // a completion is of this worker's run, and no newer run of the job has started
              Long mine = ranHere.get(c.job().id());
              if (mine == null || !mine.equals(newestRun.get(c.job().id()))) {
                problems.add(
                    "job "
                        + c.job().id()
                        + " was reported completed by a worker whose run of it had token "
                        + mine
                        + ", while its newest run had token "
                        + newestRun.get(c.job().id()));
              }
            }
          });
      w.start();
      return s;
    }

    void push() {
      String chain = "c" + pushed++;
      // after the raise, no push of the group whose limit was 0: its next push would admit its
      // parked jobs, and the test is that a worker's start does
      String group = r.nextInt(8) == 0 ? null : "g" + r.nextInt(raised ? 3 : 4);
      int repeats = r.nextInt(3) == 0 ? 1 : 0;
      JobOptions o =
          JobOptions.defaults()
              .priority(r.nextInt(2))
              .delay(Duration.ofMillis(r.nextBoolean() ? 0 : r.nextInt(3_000)))
              .repeat(repeats, Duration.ofMillis(r.nextInt(2) * 500L))
              .retry(r.nextInt(3), Backoff.fixed(Duration.ofMillis(r.nextInt(2) * 700L)))
              .group(group);
      // every fourth push in a caller's transaction: a due job of a group waits, delayed, for a
      // promotion to admit it, and the push writes no group key (JoinedView)
      JoinedView joined =
          group != null && pushed % 4 == 0 ? new JoinedView(store, queue.keys) : null;
      try {
        int n = r.nextInt(4) == 0 ? 2 : 1;
        List<String> states = n == 1 ? List.of(chain) : List.of(chain, chain + "b");
        if (joined == null) {
          queue.pushAll(states, o);
        } else {
          queue.withStore(joined).pushAll(states, o);
          joinedPushes++;
        }
        acknowledged.addAll(states);
        for (String st : states) {
          repeatsOf.put(st, repeats);
        }
      } catch (KvStoreException e) {
        // applied or not: if stored, it runs right
      }
      if (joined != null) {
        problems.addAll(joined.problems());
      }
    }

    void crashOne() {
      int i = r.nextInt(schedulers.size());
      schedulers.get(i).shutdownNow();
      schedulers.set(i, newWorker(i));
    }

    void stopOne() {
      int i = r.nextInt(schedulers.size());
      workers.get(i).stop();
      schedulers.get(i).runUntilIdle();
      schedulers.get(i).shutdownNow();
      schedulers.set(i, newWorker(i));
    }

    void drive() {
      for (int pass = 0; pass < 3; pass++) {
        for (ManualScheduler s : schedulers) {
          s.runUntilIdle();
        }
      }
    }
  }
}
