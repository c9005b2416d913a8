package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.LogCapture;
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
 * Deterministic simulation: several real {@link Worker}s, each on its own {@link ManualScheduler},
 * share one queue on a store that fails commits at random, before they apply (lost) or after
 * (applied, but the caller sees an error), while workers "crash" (are abandoned mid-flight and
 * replaced), time jumps, and running handlers stall (their process freezes for longer or shorter
 * than a lease while the other workers go on, so that their jobs may be taken over). After the
 * faults stop and the queue drains, the invariants hold:
 *
 * <ul>
 *   <li>nothing is lost: every acknowledged job chain ran to its end or ended as a dead letter (a
 *       push that failed may or may not be stored; if stored, it runs right);
 *   <li>repeats are exact: a chain pushed with {@code repeat = R} that did not die ran as exactly R
 *       + 1 distinct jobs;
 *   <li>retries are exact: a dead letter has no retries left;
 *   <li>no stale completion: every reported completion is of its worker's run under the newest
 *       token of its job (the run's token, not only the record's), and no job is reported completed
 *       twice;
 *   <li>held jobs (pushed in a simulated application transaction): a held job never runs before its
 *       release or the held timeout; a released one runs; a dropped one never does; one whose
 *       transaction never ended (its process died) runs once the held timeout has passed;
 *   <li>one job per slot: the schedules defined at the start (fixed rate and cron, every missed-run
 *       policy; the clock also jumps by up to a minute, an outage) pushed no slot twice and no job
 *       before its slot, and each firing (a job's id holds the time it was pushed) pushed exactly
 *       what its policy says for the slots due since the firing before it: with {@code runEach} of
 *       a limit no outage reaches, every slot up to the last firing has its job, none missing;
 *   <li>control ({@link ControlChecker}): no completion is accepted after a cancel (operators
 *       cancel jobs in every state, handlers' own jobs among them while they run), every cancelled
 *       job stays cancelled; a dead letter used all its retries, or failed for good, or is a poison
 *       job whose lease expired the queue's limit of times (small here, so that crashes, outages
 *       and stalls reach it); a lost lease a worker reports is called a cancel exactly when its job
 *       was cancelled under that lease, and some are not (stalled handlers' jobs taken over);
 *   <li>no record outgrows the store: one run in forty pushes a job of the largest state, the
 *       longest group and unique key, on the node of the longest name, that fails 15 to 22 times
 *       with a long message, more history than its record has room for; its history shrinks ({@link
 *       History#shrink}) and it ends as a dead letter (no operator cancels it), leaving the queue
 *       drained;
 *   <li>an outcome whose commit failed or whose job could not be read again is tried again while
 *       its lease lasts ({@link Settler}): a full run records some at a later try (counted from the
 *       worker's log), and every check above holds for them.
 * </ul>
 *
 * Every run is a pure function of its seed; a failure prints it ({@code -Dkvmq.seed=N}).
 */
public abstract class SimulationContract {

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
    return Integer.getInteger("kvmq.simulation.runs", 2000);
  }

  /**
   * The edges of the transition table a full run of this test must walk. Renew is walked by the
   * handlers that stall ({@link Stalls}) for less than a lease. Not release: the simulated handlers
   * return at once, so no job claimed ahead outlives a pass (WorkerTest's claiming-ahead tests walk
   * release).
   */
  static final Set<TransitionTable.Edge> WALKS =
      EnumSet.complementOf(
          EnumSet.of(
              TransitionTable.Edge.UPDATE,
              TransitionTable.Edge.RELEASE,
              TransitionTable.Edge.FAIL_RETRY_READY,
              TransitionTable.Edge.REPLAY,
              TransitionTable.Edge.DELETE_READY,
              TransitionTable.Edge.DELETE_DELAYED,
              TransitionTable.Edge.DELETE_EXPIRED_LEASE,
              TransitionTable.Edge.DELETE_DEAD,
              TransitionTable.Edge.QUARANTINE,
              TransitionTable.Edge.TRIGGER,
              TransitionTable.Edge.DELETE_HELD,
              // groups and paused starts: FlowSimulationContract walks them
              TransitionTable.Edge.PUSH_PARKED,
              TransitionTable.Edge.REPEAT_PARKED,
              TransitionTable.Edge.PROMOTE_PARKED,
              TransitionTable.Edge.REPLAY_PARKED,
              TransitionTable.Edge.RELEASE_HELD_PARKED,
              TransitionTable.Edge.ADMIT,
              TransitionTable.Edge.DELETE_PARKED,
              TransitionTable.Edge.DEFER,
              // walked by uniqueKeysStayUniqueUnderRacesFailedCommitsAndCrashedWorkers
              TransitionTable.Edge.DEBOUNCE_READY,
              TransitionTable.Edge.DEBOUNCE_READY_DELAYED,
              TransitionTable.Edge.DEBOUNCE_DELAYED_READY,
              TransitionTable.Edge.DEBOUNCE_DELAYED,
              TransitionTable.Edge.DEBOUNCE_PARKED,
              TransitionTable.Edge.DEBOUNCE_PARKED_DELAYED,
              TransitionTable.Edge.DEBOUNCE_DELAYED_PARKED,
              // dead letters are kept here (the checker reads them); the model test walks these
              TransitionTable.Edge.FAIL_DISCARDED,
              TransitionTable.Edge.PRUNE_DEAD,
              TransitionTable.Edge.DELETE_COMPLETED,
              TransitionTable.Edge.DELETE_CANCELLED,
              // no groups here; GroupWorkerTest cancels a parked job
              TransitionTable.Edge.CANCEL_PARKED,
              TransitionTable.Edge.BLOCK));

  /**
   * Every plan the workers make is an edge of the {@link TransitionTable} ({@link Transitions}
   * throws otherwise); a full run (every seed, the default number of runs) walks each edge the
   * simulated workers can take.
   */
  @Test
  void invariantsHoldUnderFailedCommitsAndCrashedWorkers() {
    Set<TransitionTable.Edge> walked = EnumSet.noneOf(TransitionTable.Edge.class);
    TransitionTable.recordOnThisThread(walked::add);
    // an outcome whose commit or re-read failed is tried again (Settler): count those recorded at
    // a later try
    LogCapture recordedLater =
        new LogCapture(Worker.class.getName(), m -> m.startsWith("recorded the outcome of job"));
    try {
      simulate();
    } finally {
      TransitionTable.stopRecording();
      recordedLater.close();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 2000) {
      assertThat(walked)
          .as("edges of the transition table the simulation walked")
          .containsAll(WALKS);
      assertThat(recordedLater.records())
          .as("outcomes recorded at a later try, after a commit or a read failed")
          .isNotEmpty();
    }
  }

  /**
   * Unique keys ({@link UniqueSimulation}): two nodes push a few keys in every scope and mode, one
   * often between the other's read and its commit, while workers run, fail and crash, jobs are
   * deleted, commits fail and time jumps; the checker looks at the store after every commit and
   * finds no instant with two jobs of one key in scope, and once the queue drained no key left
   * taken by a job. In grouped runs one push in four goes through a view that joins a caller's
   * transaction ({@link JoinedView}): a new keyed job it creates touches no group key.
   */
  @Test
  void uniqueKeysStayUniqueUnderRacesFailedCommitsAndCrashedWorkers() {
    long joinedBefore = UniqueSimulation.joinedCreates.get();
    Set<TransitionTable.Edge> walked = EnumSet.noneOf(TransitionTable.Edge.class);
    TransitionTable.recordOnThisThread(walked::add);
    try {
      Seeds.forEach(
          "uniqueKeysStayUniqueUnderRacesFailedCommitsAndCrashedWorkers",
          Math.max(1, runs() / 4),
          1,
          r -> {
            KvStore raw;
            try {
              raw = newStore();
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            try {
              new UniqueSimulation(raw, r).run();
            } finally {
              raw.close();
            }
          });
    } finally {
      TransitionTable.stopRecording();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 40) {
      assertThat(UniqueSimulation.joinedCreates.get() - joinedBefore)
          .as("new keyed jobs pushed through a view that joins a caller's transaction")
          .isPositive();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 2000) {
      assertThat(walked)
          .as("edges the unique simulation walked")
          .contains(
              TransitionTable.Edge.DEBOUNCE_READY,
              TransitionTable.Edge.DEBOUNCE_READY_DELAYED,
              TransitionTable.Edge.DEBOUNCE_DELAYED_READY,
              TransitionTable.Edge.DEBOUNCE_DELAYED,
              TransitionTable.Edge.DEBOUNCE_PARKED,
              TransitionTable.Edge.DEBOUNCE_PARKED_DELAYED,
              TransitionTable.Edge.DEBOUNCE_DELAYED_PARKED);
    }
  }

  private void simulate() {
    long[] handedOff = new long[1];
    long[] rode = new long[1];
    long[] takeovers = new long[1];
    long[] overlapping = new long[1];
    int[] bigShrunk = new int[1];
    Seeds.forEach(
        "invariantsHoldUnderFailedCommitsAndCrashedWorkers",
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
            Sim sim = new Sim(new FaultyStore(raw), r);
            sim.run();
            handedOff[0] += sim.handedOff;
            rode[0] += sim.rode;
            takeovers[0] += sim.takeovers;
            overlapping[0] += sim.stalls.overlapping();
            bigShrunk[0] += sim.bigShrunk;
          } finally {
            raw.close();
          }
        });
    if (System.getProperty("kvmq.seed") == null && runs() >= 100) {
      // half the workers take handoffs (WorkerOptions.handoff): the invariants cover those jobs
      // too, handed to workers that then run them, crash, stop or lose their commits
      assertThat(handedOff[0]).as("pushes handed off to an idle worker").isPositive();
      // handlers that finish while their worker's pass is under way: their outcomes ride in its
      // claim's commit (GroupCommitter), under the commit faults, and every invariant holds
      assertThat(rode[0]).as("outcomes committed in a claim's commit").isPositive();
      // stalled handlers: ControlChecker.leaseLost checks lost leases that are not cancels too
      assertThat(takeovers[0]).as("lost leases reported that were not a cancel's").isPositive();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 2000) {
      assertThat(overlapping[0]).as("stalls that began during another").isPositive();
      // about 50 runs push a big chain; some of those end before their history outgrows the record
      assertThat(bigShrunk[0])
          .as("dead letters of the largest state whose attempts' messages had no room")
          .isPositive();
    }
  }

  /** A character of 3 bytes in UTF-8 (and in a record's modified UTF-8). */
  static final String WIDE = "\u20AC";

  /** The message a job of the largest state fails with: 30,000 bytes, kept cut to 2,000 chars. */
  static final String TOO_LONG_MESSAGE = WIDE.repeat(10_000);

  /** The simulated queue's held-job policy: release after this long. */
  static final long HELD_TIMEOUT = 10_000;

  private static final class Sim {
    final FaultyStore store;
    final SplittableRandom r;
    final FakeClock clock = new FakeClock();
    final Queue<String> queue;
    final List<ManualScheduler> schedulers = new ArrayList<>();
    final List<Worker<String>> workers = new ArrayList<>();
    final Map<String, Integer> repeatsOf = new HashMap<>(); // chain -> R
    final Map<String, Set<String>> idsOf = new HashMap<>(); // chain -> job ids that ran
    final Map<String, Long> maxToken = new HashMap<>(); // job id -> newest token run
    final Map<String, Long> completedToken =
        new HashMap<>(); // job id -> token of the run its Completed event reported
    final List<String> problems = new ArrayList<>();
    final Set<String> unacknowledged = new LinkedHashSet<>();
    final SplittableRandom faults;
    int chains;

    /** Pushes that came back processing: handed off to an idle worker in the push's commit. */
    int handedOff;

    /** Running handlers that stall their worker past its lease now and then. */
    final Stalls stalls = new Stalls(clock, schedulers);

    /** Lost leases reported that were not a cancel's: a stalled handler's, expired meanwhile. */
    int takeovers;

    final Map<String, Schedule<String>> defined = new java.util.TreeMap<>();
    long definedAt;
    // schedule -> slot -> ids of the jobs that ran for it
    final Map<String, Map<Long, Set<String>>> slotJobs = new HashMap<>();

    /** Chains held in a transaction that has not ended (or never will): when they were held. */
    final Map<String, Long> heldSince = new HashMap<>();

    /** Chains held, whose transaction the simulation has not ended yet: their job ids. */
    final Map<String, String> openTransactions = new java.util.LinkedHashMap<>();

    /** Chains of the largest state, that fail every attempt ({@link #pushBig}). */
    final Set<String> big = new java.util.HashSet<>();

    /**
     * The step that pushes a big chain, -1 for none. A run with one names its node with the most
     * characters, each 3 bytes, which every attempt of a record keeps.
     */
    final int bigAt;

    /** Big chains that ended dead, their attempts' messages dropped to fit the record. */
    int bigShrunk;

    /** Chains whose rollback (drop) was acknowledged: they must never run. */
    final Set<String> dropped = new LinkedHashSet<>();

    /** What the history must show of the runs and events (docs/semantics.md, "History"). */
    final HistoryChecker history;

    final ControlChecker control;

    Sim(FaultyStore store, SplittableRandom r) {
      this.store = store;
      this.r = r;
      this.faults = r.split();
      Retention retention = HistoryChecker.randomRetention(r.split());
      this.bigAt = r.nextInt(40) == 0 ? r.nextInt(150) : -1;
      this.queue =
          Queue.builder(
                  new InterleavedClaims(new RacingFirings(store, r.split()), r.split()),
                  "sim",
                  Codecs.utf8())
              .clock(clock)
              .random(new Random(r.nextLong()))
              .heldTimeout(Duration.ofMillis(HELD_TIMEOUT))
              .retention(retention)
              .node(bigAt < 0 ? "sim-node" : WIDE.repeat(Queue.MAX_NODE_LENGTH))
              .maxLeaseExpiries(1 + r.nextInt(3))
              .build();
      this.history = new HistoryChecker(queue);
      this.control = new ControlChecker(queue, problems);
      control.spare(big);
    }

    void run() {
      defineSchedules();
      int count = 2 + r.nextInt(3);
      for (int i = 0; i < count; i++) {
        workers.add(null);
        schedulers.add(newWorker(schedulers.size()));
      }
      int failPercent = r.nextInt(15);
      store.failCommits(
          op -> faults.nextInt(100) < failPercent,
          r.nextBoolean() ? FaultyStore.Mode.BEFORE_APPLY : FaultyStore.Mode.AFTER_APPLY);
      for (int step = 0; step < 150; step++) {
        if (step == bigAt) {
          pushBig();
        }
        int a = r.nextInt(100);
        if (a < 25) {
          pushChain();
        } else if (a < 28) {
          crashOne();
        } else if (a < 30) {
          stopOne();
        } else if (a < 33) {
          store.failCommits(
              op -> faults.nextInt(100) < failPercent,
              r.nextBoolean() ? FaultyStore.Mode.BEFORE_APPLY : FaultyStore.Mode.AFTER_APPLY);
        } else if (a < 35) {
          clock.advance(Duration.ofMillis(10_000 + r.nextInt(50_000))); // an outage
        } else if (a < 38) {
          holdChain();
        } else if (a < 43) {
          endTransaction();
        } else if (a < 47) {
          control.cancelOne(r);
        } else if (a < 48) {
          control.cancelMany(r);
        } else {
          clock.advance(Duration.ofMillis(r.nextInt(3_000)));
        }
        drive();
      }
      // Faults stop; the schedules stop firing; the queue drains: every chain must reach its end.
      store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
      for (String name : defined.keySet()) {
        queue.schedules().pause(name);
      }
      for (int i = 0; i < 400 && !queue.jobs().isEmpty(); i++) {
        clock.advance(Duration.ofSeconds(1));
        drive();
      }
      // two more polls: the workers' pruning looks again after every completion so far
      for (int i = 0; i < 2; i++) {
        clock.advance(HistoryChecker.PRUNE_SLACK);
        drive();
      }
      check();
      history.check(clock.millis(), problems);
      assertThat(problems).isEmpty();
    }

    /**
     * Another node's firing between this node's read and its commit: before a firing's commit
     * (sometimes), a separate {@link ScheduleFirer} on the same store fires whatever is due now, so
     * that two firings of the same slot race and only the check of the schedule's versionstamp
     * keeps one of them. The other node may fail (a commit fault): it crashed.
     */
    final class RacingFirings extends dev.kvmq.testing.ForwardingKvStore {
      private final SplittableRandom race;
      private boolean racing;

      RacingFirings(KvStore delegate, SplittableRandom race) {
        super(delegate);
        this.race = race;
      }

      @Override
      public List<dev.kvmq.store.CommitResult> commitAll(
          List<dev.kvmq.store.AtomicOperation> operations) {
        if (!racing && race.nextInt(3) == 0 && operations.stream().anyMatch(this::fires)) {
          racing = true;
          try {
            new ScheduleFirer(queue.keys, delegate, queue::nextId).fireDue(clock.millis());
          } catch (KvStoreException crashed) {
            // the other node's commit failed
          } finally {
            racing = false;
          }
        }
        return super.commitAll(operations);
      }

      private boolean fires(dev.kvmq.store.AtomicOperation op) {
        return op.mutations().stream()
            .anyMatch(m -> m.key().startsWith(queue.keys.dueIndex()) && !m.isDelete());
      }
    }

    /**
     * Other work between a claim's start and its read: before a claim (sometimes), every worker
     * that is not stalled runs what is due, the claiming one among them. In most runs it says the
     * store commits one at a time ({@link KvStore#commitsOneAtATime()}), so that outcomes ride. So
     * handlers of the claiming worker finish while its pass is under way, and their outcomes wait
     * for the claim and ride in its commit (docs/semantics.md, "The group committer"), under the
     * same commit faults as any commit; other workers push, claim and complete meanwhile. Counts
     * the outcomes that rode: operations in a claim's commit that take a job out of the leased
     * index (a completion, a failure, a snooze or a release; a claim puts one in).
     */
    final class InterleavedClaims extends dev.kvmq.testing.ForwardingKvStore {
      private final SplittableRandom interleave;
      private boolean interleaving;

      /**
       * Whether this run's store says it commits one at a time, so that outcomes ride in claims: in
       * three runs of four, whatever the store under it (in the others none may ride).
       */
      final boolean oneAtATime;

      InterleavedClaims(KvStore delegate, SplittableRandom interleave) {
        super(delegate);
        this.interleave = interleave;
        this.oneAtATime = interleave.nextInt(4) != 0;
      }

      @Override
      public boolean commitsOneAtATime() {
        return oneAtATime;
      }

      @Override
      public List<dev.kvmq.store.CommitResult> claim(
          dev.kvmq.store.KeyRange range, int limit, ClaimPlanner planner) {
        if (!interleaving && interleave.nextInt(3) == 0) {
          interleaving = true;
          try {
            for (ManualScheduler s : List.copyOf(schedulers)) {
              if (!stalls.isStalled(s)) {
                s.runUntilIdle();
              }
            }
          } finally {
            interleaving = false;
          }
        }
        rodeInPlan = 0;
        List<dev.kvmq.store.CommitResult> results =
            super.claim(
                range,
                limit,
                planningThen(
                    planner,
                    ops -> {
                      rodeInPlan = (int) ops.stream().filter(this::leavesLeased).count();
                      return ops;
                    }));
        rode += rodeInPlan; // the claim's commit returned (its operations may have failed checks)
        if (rodeInPlan > 0 && !oneAtATime) {
          problems.add("outcomes rode in a claim on a store that does not commit one at a time");
        }
        return results;
      }

      /** Outcomes in the last planning of the claim under way: counted once it commits. */
      private int rodeInPlan;

      private boolean leavesLeased(dev.kvmq.store.AtomicOperation op) {
        return op.mutations().stream()
            .anyMatch(m -> m.isDelete() && m.key().startsWith(queue.keys.leasedIndex()));
      }
    }

    /** Outcomes that rode in a claim's commit ({@link InterleavedClaims}). */
    int rode;

    ManualScheduler newWorker(int slot) {
      ManualScheduler s = new ManualScheduler(clock);
      int failPercent = r.nextInt(40);
      SplittableRandom outcomes = r.split();
      SplittableRandom stallsOf = r.split();
      Map<String, Long> ranHere = new HashMap<>(); // job id -> token of this worker's last run
      Worker<String> w =
          queue.worker(
              (job, ctx) -> {
                if (job.schedule().isPresent()) {
                  slotJobs
                      .computeIfAbsent(job.schedule().get(), x -> new HashMap<>())
                      .computeIfAbsent(
                          job.slot().orElseThrow().toEpochMilli(), x -> new LinkedHashSet<>())
                      .add(job.id());
                }
                String chain = job.state();
                Long held = heldSince.get(chain);
                if (held != null && clock.millis() < held + HELD_TIMEOUT) {
                  problems.add(
                      "held chain " + label(chain) + " ran before its release or the timeout");
                }
                if (dropped.contains(chain)) {
                  problems.add("chain " + label(chain) + " ran after its transaction rolled back");
                }
                idsOf.computeIfAbsent(chain, c -> new LinkedHashSet<>()).add(job.id());
                maxToken.merge(job.id(), ctx.token(), Math::max);
                ranHere.put(job.id(), ctx.token());
                history.ran(job, ctx, outcomes);
                control.whileRunning(job, ctx, outcomes);
                stalls.maybeStall(s, stallsOf);
                if (big.contains(chain)) {
                  throw new IllegalStateException(TOO_LONG_MESSAGE);
                }
                if (outcomes.nextInt(100) < failPercent) {
                  throw new IllegalStateException("simulated failure");
                }
              },
              WorkerOptions.defaults()
                  .concurrency(1 + r.nextInt(3))
                  .prefetch(r.nextInt(4))
                  .lease(Duration.ofSeconds(5), Duration.ofSeconds(2))
                  .handoff(r.nextBoolean()),
              s);
      workers.set(slot, w);
      w.addListener(
          e -> {
            if (e instanceof JobEvent.LeaseLost<String> l) {
              control.leaseLost(l);
              if (!l.cancelled()) {
                takeovers++;
              }
            }
            if (e instanceof JobEvent.Completed<String> c) {
              control.completed(c.job().id());
              // the token of the run this worker completed, not the record's: a completion
              // accepted over another worker's lease would carry that worker's token
              Long mine = ranHere.get(c.job().id());
              if (mine == null || mine != c.job().token()) {
                problems.add(
                    "job "
                        + c.job().id()
                        + " was reported completed with token "
                        + c.job().token()
                        + " by a worker whose run of it had token "
                        + mine);
              }
              Long before = completedToken.put(c.job().id(), mine);
              if (before != null) {
                problems.add("job " + c.job().id() + " reported completed twice");
              }
            }
            history.reported(e);
          });
      w.start();
      return s;
    }

    void pushChain() {
      String chain = "c" + chains++;
      int repeats = r.nextInt(3);
      repeatsOf.put(chain, repeats);
      JobOptions options =
          JobOptions.defaults()
              .priority(r.nextInt(3))
              .delay(Duration.ofMillis(r.nextBoolean() ? 0 : r.nextInt(4_000)))
              .repeat(repeats, Duration.ofMillis(r.nextInt(2) * 1_000L))
              .retry(
                  r.nextInt(4),
                  Backoff.exponential(Duration.ofMillis(500), 2, Duration.ofSeconds(4), 0.5));
      try {
        if (queue.push(chain, options).status() == JobStatus.PROCESSING) {
          handedOff++;
        }
      } catch (KvStoreException e) {
        unacknowledged.add(chain); // stored or not: either is fine, but if it runs it runs right
      }
    }

    /**
     * A job of the largest state ({@link Queue#MAX_STATE_BYTES}), whose every attempt fails with
     * {@link #TOO_LONG_MESSAGE}: its later failures make its record outgrow the store's value limit
     * unless its history shrinks. Its state is its chain's name, padded. No operator cancels it,
     * and its handler only fails: a job whose failure can't be stored would stay, and the run fail.
     */
    void pushBig() {
      String name = "b" + chains++ + ":";
      String chain = name + "z".repeat(Queue.MAX_STATE_BYTES - name.length());
      big.add(chain);
      repeatsOf.put(chain, 0);
      try {
        // the longest group and unique key, the widest node: about 10 attempts fill what the
        // largest state leaves of a record (an attempt's message is cut to 200 chars, the job's
        // last error's to 2,000, 3 bytes each here), and a record keeps 10 attempts
        queue.push(
            chain,
            JobOptions.defaults()
                .retry(14 + r.nextInt(8), Backoff.NONE)
                .group(WIDE.repeat(JobOptions.MAX_GROUP_LENGTH - 8) + name)
                .unique(
                    UniqueKey.whileWaitingOrRunning(
                        WIDE.repeat(UniqueKey.MAX_KEY_LENGTH - 8) + name)));
      } catch (KvStoreException e) {
        unacknowledged.add(chain);
      }
    }

    /** A chain's name for a message: a big chain's without its padding. */
    static String label(String chain) {
      int colon = chain.indexOf(':');
      return colon < 0 ? chain : chain.substring(0, colon);
    }

    /** A job pushed in a simulated application transaction: held until the transaction ends. */
    void holdChain() {
      String chain = "h" + chains++;
      JobOptions options =
          JobOptions.defaults()
              .priority(r.nextInt(3))
              .delay(Duration.ofMillis(r.nextBoolean() ? 0 : r.nextInt(4_000)));
      repeatsOf.put(chain, 0);
      try {
        String id = queue.holdAll(List.of(chain), options).get(0).id();
        heldSince.put(chain, clock.millis());
        openTransactions.put(chain, id);
      } catch (KvStoreException e) {
        // the caller's transaction fails with the push; if the hold was applied, the job stays
        // held until the timeout, and then runs (the documented policy)
        unacknowledged.add(chain);
      }
    }

    /**
     * The oldest open transaction ends: it commits (release), rolls back (drop), or its process
     * dies first (nothing: the job stays held until the timeout releases it).
     */
    void endTransaction() {
      if (openTransactions.isEmpty()) {
        return;
      }
      String chain = openTransactions.keySet().iterator().next();
      String id = openTransactions.remove(chain);
      int end = r.nextInt(5);
      if (end == 0) {
        return; // died before its end: held since heldSince, released by the timeout
      }
      long since = heldSince.remove(chain);
      try {
        if (end <= 2) {
          queue.releaseHeld(List.of(id));
        } else if (queue.dropHeld(List.of(id)) == 1) {
          repeatsOf.remove(chain);
          dropped.add(chain);
        } else if (clock.millis() < since + HELD_TIMEOUT && !control.isCancelled(id)) {
          problems.add("the rollback of " + chain + " found its job released before the timeout");
        } // else the timeout released it first, as documented: it runs
      } catch (KvStoreException e) {
        unacknowledged.add(chain); // applied or not: if still held, the timeout releases it
        repeatsOf.putIfAbsent(chain, 0);
      }
    }

    /** A worker's process dies: its tasks never run again; its leases expire. */
    void crashOne() {
      int i = r.nextInt(schedulers.size());
      schedulers.get(i).shutdownNow();
      schedulers.set(i, newWorker(i));
    }

    /**
     * A worker stops as on undeploy: its running handlers finish, the jobs it claimed ahead go back
     * (or, when that commit fails, expire); then a new worker takes its place.
     */
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

    /** One to three schedules, before the faults start (a define is checked like any commit). */
    void defineSchedules() {
      java.time.Instant t0 = clock.instant();
      int n = 1 + r.nextInt(3);
      for (int i = 0; i < n; i++) {
        ScheduleSpec spec =
            r.nextBoolean()
                ? ScheduleSpec.fixedRate(
                    Duration.ofMillis(500 + r.nextInt(4) * 500L), t0.plusMillis(r.nextInt(1_000)))
                : ScheduleSpec.cron(
                    "*/" + (1 + r.nextInt(4)) + " * * * * *", java.time.ZoneOffset.UTC);
        MissedRuns missed =
            switch (r.nextInt(4)) {
              case 0 -> MissedRuns.runOnce();
              case 1 -> MissedRuns.skip();
              case 2 -> MissedRuns.runEach(1 + r.nextInt(3));
              default -> MissedRuns.runEach(MissedRuns.MAX_LIMIT);
            };
        Schedule<String> s =
            Schedule.builder("s" + i, spec, "sched:s" + i)
                .missed(missed)
                .lateness(Duration.ofMillis(500 + r.nextInt(3_000)))
                .options(
                    JobOptions.defaults()
                        .retry(3, Backoff.fixed(Duration.ofMillis(r.nextInt(2) * 700L))))
                .build();
        queue.schedules().define(s);
        defined.put(s.name(), s);
      }
      definedAt = clock.millis();
    }

    /**
     * Per schedule: no slot twice, no job before its slot, and each firing (the jobs of one push
     * time) is what its policy makes of the slots due since the firing before it.
     */
    void checkSchedules() {
      for (Schedule<String> s : defined.values()) {
        Map<Long, Set<String>> bySlot = slotJobs.getOrDefault(s.name(), Map.of());
        java.util.TreeMap<Long, List<Long>> firings = new java.util.TreeMap<>(); // time -> slots
        for (Map.Entry<Long, Set<String>> e : bySlot.entrySet()) {
          assertThat(e.getValue())
              .as("jobs of schedule %s for slot %d", s.name(), e.getKey())
              .hasSize(1);
          long pushedAt = Ulid.timestamp(e.getValue().iterator().next());
          assertThat(pushedAt)
              .as("a job pushed at its slot or later")
              .isGreaterThanOrEqualTo(e.getKey());
          firings.computeIfAbsent(pushedAt, x -> new ArrayList<>()).add(e.getKey());
        }
        long previous = definedAt;
        for (Map.Entry<Long, List<Long>> f : firings.entrySet()) {
          long at = f.getKey();
          List<Long> slots = new ArrayList<>(f.getValue());
          slots.sort(null);
          List<Long> due = new ArrayList<>();
          for (java.time.Instant t :
              s.spec()
                  .slotsBetween(
                      java.time.Instant.ofEpochMilli(previous),
                      java.time.Instant.ofEpochMilli(at),
                      100_000)) {
            due.add(t.toEpochMilli());
          }
          String what =
              "firing of " + s.name() + " (" + s.missed() + ") at " + at + " after " + previous;
          long latest = due.get(due.size() - 1);
          switch (s.missed().kind()) {
            case RUN_ONCE -> assertThat(slots).as(what).containsExactly(latest);
            case SKIP -> {
              assertThat(slots).as(what).containsExactly(latest);
              assertThat(at - latest)
                  .as(what + ": on time")
                  .isLessThanOrEqualTo(s.lateness().toMillis());
            }
            case RUN_EACH ->
                assertThat(slots)
                    .as(what)
                    .containsExactlyElementsOf(
                        due.subList(Math.max(0, due.size() - s.missed().limit()), due.size()));
          }
          previous = at;
        }
        if (!firings.isEmpty()) {
          ScheduleEntry<String> entry = queue.schedules().get(s.name()).orElseThrow();
          long lastSlot = bySlot.keySet().stream().max(Long::compare).orElseThrow();
          assertThat(entry.lastSlot()).contains(java.time.Instant.ofEpochMilli(lastSlot));
          assertThat(entry.lastJobId()).contains(bySlot.get(lastSlot).iterator().next());
        }
      }
    }

    void check() {
      // a slot's job that ended without running (a poison job, or cancelled first) had its slot
      for (Job<String> j : control.endedWithoutRunning()) {
        slotJobs
            .computeIfAbsent(j.schedule().get(), x -> new HashMap<>())
            .computeIfAbsent(j.slot().orElseThrow().toEpochMilli(), x -> new LinkedHashSet<>())
            .add(j.id());
      }
      checkSchedules();
      assertThat(problems).isEmpty();
      assertThat(queue.jobs()).as("the queue drained").isEmpty();
      control.check();
      Set<String> dead = new LinkedHashSet<>(control.cancelledChains());
      Set<String> mayNotHaveRun = new LinkedHashSet<>(control.cancelledChains());
      Set<String> deadLetters = new java.util.HashSet<>();
      for (Job<String> d : queue.deadLetters()) {
        assertThat(d.lastError()).isPresent();
        control.checkDeadLetter(d);
        dead.add(d.state());
        deadLetters.add(d.state());
        if (ControlChecker.poison(d)) {
          mayNotHaveRun.add(d.state());
        }
        if (big.contains(d.state())
            && d.attempts().stream()
                .anyMatch(a -> a.error().map(e -> e.message().isEmpty()).orElse(false))) {
          bigShrunk++;
        }
      }
      for (Map.Entry<String, Integer> chain : repeatsOf.entrySet()) {
        Set<String> ran = idsOf.getOrDefault(chain.getKey(), Set.of());
        if (ran.isEmpty() && unacknowledged.contains(chain.getKey())) {
          continue; // the failed push was not applied
        }
        if (big.contains(chain.getKey()) && !deadLetters.contains(chain.getKey())) {
          problems.add("big chain " + label(chain.getKey()) + " did not end as a dead letter");
        }
        if (dead.contains(chain.getKey())) {
          assertThat(ran.size())
              .as("a dead or cancelled chain %s stops early", label(chain.getKey()))
              .isBetween(mayNotHaveRun.contains(chain.getKey()) ? 0 : 1, chain.getValue() + 1);
        } else {
          assertThat(ran.size())
              .as("runs of chain %s with %d repeats", label(chain.getKey()), chain.getValue())
              .isEqualTo(chain.getValue() + 1);
        }
      }
      for (Map.Entry<String, Long> c : completedToken.entrySet()) {
        assertThat(c.getValue())
            .as("completion of %s came from the newest lease", c.getKey())
            .isEqualTo(maxToken.get(c.getKey()));
      }
    }
  }
}
