package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * One run of the unique-key simulation ({@link
 * SimulationContract#uniqueKeysStayUniqueUnderRacesFailedCommitsAndCrashedWorkers}): two nodes push
 * jobs with a few unique keys in every scope and mode, and often push the same key between the
 * other's read and its commit; real workers run them (failing some, so that they retry and die),
 * crash and are replaced (their leases expire and are reclaimed), or stall past their lease while
 * the other workers take their jobs over ({@link Stalls}); jobs are deleted; the store fails
 * commits before or after they apply; time jumps. In half the runs most jobs also belong to one of
 * two groups under a concurrency limit of 1 or 2, so that keyed pushes and debounces are booked in
 * their group's record. {@link UniqueChecker} looks at the store after every commit.
 */
final class UniqueSimulation {

  private final FaultyStore faulty;
  private final SplittableRandom r;
  private final SplittableRandom faults;
  private final FakeClock clock = new FakeClock();
  private final UniqueChecker checker;
  private final Queue<String> nodeA;
  private final Queue<String> nodeB;
  private final List<ManualScheduler> schedulers = new ArrayList<>();
  private final Stalls stalls = new Stalls(clock, schedulers);
  private final int groupLimit; // Queue.UNLIMITED: jobs have no group in this run
  private int pushed;

  /** New keyed jobs pushed through a {@link JoinedView}, over all runs in this JVM. */
  static final java.util.concurrent.atomic.AtomicLong joinedCreates =
      new java.util.concurrent.atomic.AtomicLong();

  UniqueSimulation(KvStore raw, SplittableRandom r) {
    this.r = r;
    this.faults = r.split();
    this.faulty = new FaultyStore(raw);
    this.groupLimit = r.nextBoolean() ? Queue.UNLIMITED : 1 + r.nextInt(2);
    QueueKeys keys = new QueueKeys("unique");
    this.checker = new UniqueChecker(keys, raw, clock, groupLimit);
    KvStore observed = new Observed(faulty);
    this.nodeB =
        Queue.builder(observed, "unique", Codecs.utf8())
            .clock(clock)
            .random(new Random(r.nextLong()))
            .groupLimit(groupLimit)
            .build();
    this.nodeA =
        Queue.builder(new Racing(observed, r.split()), "unique", Codecs.utf8())
            .clock(clock)
            .random(new Random(r.nextLong()))
            .groupLimit(groupLimit)
            .build();
  }

  /** Checks the store after every commit, applied, refused, or failed (before or after apply). */
  private final class Observed extends ForwardingKvStore {
    Observed(KvStore delegate) {
      super(delegate);
    }

    @Override
    public List<CommitResult> commitAll(List<AtomicOperation> operations) {
      try {
        return super.commitAll(operations);
      } finally {
        checker.look();
      }
    }
  }

  /**
   * Node B pushes the key of node A's push between A's read and its commit (sometimes): only the
   * key entry's absence check (or versionstamp check) keeps one of the two jobs.
   */
  private final class Racing extends ForwardingKvStore {
    private final SplittableRandom race;
    private boolean racing;

    Racing(KvStore delegate, SplittableRandom race) {
      super(delegate);
      this.race = race;
    }

    @Override
    public List<CommitResult> commitAll(List<AtomicOperation> operations) {
      if (!racing && race.nextInt(2) == 0) {
        for (AtomicOperation op : operations) {
          for (AtomicOperation.Mutation m : op.mutations()) {
            if (!m.isDelete() && nodeA.keys.uniqueKeys().contains(m.key())) {
              racing = true;
              try {
                nodeB.offer("race" + pushed++, options(QueueKeys.idOf(m.key())));
              } catch (KvStoreException crashed) {
                // the other node's commit failed
              } finally {
                racing = false;
              }
              return super.commitAll(operations);
            }
          }
        }
      }
      return super.commitAll(operations);
    }
  }

  /** Random options with {@code key}: scope, mode, delay, retries, and a group in grouped runs. */
  JobOptions options(String key) {
    UniqueKey u =
        switch (r.nextInt(3)) {
          case 0 -> UniqueKey.whileWaiting(key);
          case 1 -> UniqueKey.whileWaitingOrRunning(key);
          default -> UniqueKey.throttle(key, Duration.ofMillis(500 + r.nextInt(6_000)));
        };
    if (r.nextInt(3) == 0) {
      u = u.debounce();
    }
    return JobOptions.defaults()
        .priority(r.nextInt(2))
        .delay(Duration.ofMillis(r.nextBoolean() ? 0 : r.nextInt(3_000)))
        .retry(r.nextInt(3), Backoff.fixed(Duration.ofMillis(r.nextInt(2) * 800L)))
        .group(groupLimit != Queue.UNLIMITED && r.nextInt(4) != 0 ? "g" + r.nextInt(2) : null)
        .unique(u);
  }

  ManualScheduler newWorker() {
    ManualScheduler s = new ManualScheduler(clock);
    int failPercent = r.nextInt(50);
    SplittableRandom outcomes = r.split();
    SplittableRandom stallsOf = r.split();
    nodeB
        .worker(
            (job, ctx) -> {
              stalls.maybeStall(s, stallsOf);
              if (outcomes.nextInt(4) == 0) {
                try {
                  nodeB.offer("from " + job.id(), options(job.unique().orElseThrow().key()));
                } catch (KvStoreException e) {
                  // a failed push inside a handler: the handler goes on
                }
              }
              if (outcomes.nextInt(100) < failPercent) {
                throw new IllegalStateException("simulated failure");
              }
            },
            WorkerOptions.defaults()
                .concurrency(1 + r.nextInt(2))
                .prefetch(r.nextInt(3))
                .lease(Duration.ofSeconds(4), Duration.ofSeconds(2)),
            s)
        .start();
    return s;
  }

  void run() {
    for (int i = 0; i < 2; i++) {
      schedulers.add(newWorker());
    }
    int failPercent = r.nextInt(15);
    for (int step = 0; step < 100; step++) {
      int a = r.nextInt(100);
      if (a < 5) {
        faulty.failCommits(
            op -> faults.nextInt(100) < failPercent,
            r.nextBoolean() ? FaultyStore.Mode.BEFORE_APPLY : FaultyStore.Mode.AFTER_APPLY);
      } else if (a < 45) {
        Queue<String> node = r.nextBoolean() ? nodeA : nodeB;
        // in grouped runs one push in four goes through a view that joins a caller's transaction:
        // a new job must touch no group key (JoinedView); a debounce still moves its holder's
        // group, as documented
        JoinedView joined =
            groupLimit != Queue.UNLIMITED && r.nextInt(4) == 0
                ? new JoinedView(node.store, node.keys)
                : null;
        try {
          PushResult<String> result =
              (joined == null ? node : node.withStore(joined))
                  .offer("p" + pushed++, options("k" + r.nextInt(4)));
          if (joined != null && result.created()) {
            joinedCreates.incrementAndGet();
            assertThat(joined.problems()).as("a new keyed job pushed in a transaction").isEmpty();
          }
        } catch (KvStoreException e) {
          // stored or not: the checker judges what the store holds
        }
      } else if (a < 50) {
        int i = r.nextInt(schedulers.size());
        schedulers.get(i).shutdownNow(); // a crash: its leases expire
        schedulers.set(i, newWorker());
      } else if (a < 55) {
        delete();
      } else if (a < 58) {
        clock.advance(Duration.ofMillis(5_000 + r.nextInt(20_000))); // an outage
      } else {
        clock.advance(Duration.ofMillis(r.nextInt(1_500)));
      }
      for (ManualScheduler s : schedulers) {
        s.runUntilIdle();
      }
    }
    faulty.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    for (int i = 0; i < 200 && !nodeB.jobs().isEmpty(); i++) {
      clock.advance(Duration.ofSeconds(1));
      for (ManualScheduler s : schedulers) {
        s.runUntilIdle();
      }
    }
    for (ManualScheduler s : schedulers) {
      s.shutdownNow();
    }
    assertThat(nodeB.jobs()).as("the queue drained").isEmpty();
    checker.look();
    assertThat(checker.problems()).isEmpty();
    checker.noKeyLeft();
    assertThat(faulty.list(nodeB.keys.groups())).as("group records left").isEmpty();
    assertThat(faulty.list(nodeB.keys.parkedAll())).as("parked jobs left").isEmpty();
  }

  void delete() {
    List<JobEntry<String>> jobs = nodeB.jobs();
    List<Job<String>> dead = nodeB.deadLetters();
    List<String> ids = new ArrayList<>();
    jobs.forEach(e -> ids.add(e.job().id()));
    dead.forEach(j -> ids.add(j.id()));
    if (ids.isEmpty()) {
      return;
    }
    try {
      nodeB.delete(ids.get(r.nextInt(ids.size())));
    } catch (JobProcessingException | KvStoreException e) {
      // running under a live lease, or a failed commit
    }
  }

  /**
   * The guarantee, stated over what the store holds after every commit: at no instant are two jobs
   * of one unique key in scope, each by its own scope: a {@link UniqueKey.Scope#WAITING} job that
   * no worker has claimed yet (token 0) and is ready or delayed; a {@link
   * UniqueKey.Scope#WAITING_OR_RUNNING} job that exists and is not a dead letter; a {@link
   * UniqueKey.Scope#PERIOD} job (existing or gone) pushed less than its period ago. It reads the
   * jobs' states, never the key entries or the records' hold flag that the rule itself writes. In
   * grouped runs, also: no group has more jobs admitted (ready and not parked, or leased) than its
   * limit.
   */
  static final class UniqueChecker {
    private final QueueKeys keys;
    private final KvStore store;
    private final FakeClock clock;
    private final int groupLimit;
    private final java.util.Set<String> problems = new java.util.LinkedHashSet<>();

    /** Every throttle job ever seen: its key and the end of its period. */
    private final Map<String, Map.Entry<String, Long>> throttled = new HashMap<>();

    UniqueChecker(QueueKeys keys, KvStore store, FakeClock clock, int groupLimit) {
      this.keys = keys;
      this.store = store;
      this.clock = clock;
      this.groupLimit = groupLimit;
    }

    java.util.Set<String> problems() {
      return problems;
    }

    void look() {
      long now = clock.millis();
      Map<String, List<String>> inScope = new LinkedHashMap<>();
      Map<String, Integer> admitted = new HashMap<>();
      for (KvEntry e : store.list(keys.jobs())) {
        JobRecord j = JobRecord.decode(e.value());
        if (j.group != null
            && ((j.state == JobRecord.State.READY && !j.parked)
                || j.state == JobRecord.State.LEASED)
            && admitted.merge(j.group, 1, Integer::sum) > groupLimit
            && problems.size() < 5) {
          problems.add("at " + now + ", group " + j.group + " has more than " + groupLimit);
        }
        if (j.unique == null) {
          continue;
        }
        boolean scoped =
            switch (j.unique.scope()) {
              case WAITING ->
                  j.token == 0
                      && (j.state == JobRecord.State.READY || j.state == JobRecord.State.DELAYED);
              case WAITING_OR_RUNNING ->
                  j.state != JobRecord.State.DEAD
                      && j.state != JobRecord.State.COMPLETED
                      && j.state != JobRecord.State.CANCELLED;
              case PERIOD -> {
                throttled.putIfAbsent(
                    j.id, Map.entry(j.unique.key(), j.createdAt() + j.unique.period().toMillis()));
                yield false; // counted below, gone or not
              }
            };
        if (scoped) {
          inScope.computeIfAbsent(j.unique.key(), x -> new ArrayList<>()).add(j.id);
        }
      }
      for (Map.Entry<String, Map.Entry<String, Long>> t : throttled.entrySet()) {
        long until = t.getValue().getValue();
        if (Ulid.timestamp(t.getKey()) <= now && now < until) {
          inScope.computeIfAbsent(t.getValue().getKey(), x -> new ArrayList<>()).add(t.getKey());
        }
      }
      for (Map.Entry<String, List<String>> k : inScope.entrySet()) {
        if (k.getValue().size() > 1 && problems.size() < 5) {
          problems.add(
              "at " + now + ", key " + k.getKey() + " has jobs " + k.getValue() + " in scope");
        }
      }
    }

    /**
     * After the queue drained: no key is left taken by a job (an entry that names a job that no
     * longer holds it would block its key for good); throttle entries wait for their next push.
     */
    void noKeyLeft() {
      for (KvEntry e : store.list(keys.uniqueKeys())) {
        UniqueTransitions.Holder h = UniqueTransitions.Holder.decode(e.value());
        assertThat(h.until())
            .as("key entry %s of job %s, left after its job", e.key(), h.id())
            .isNotZero();
      }
    }
  }
}
