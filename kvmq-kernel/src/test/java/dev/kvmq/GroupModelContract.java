package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.Seeds;
import dev.kvmq.testkit.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Model-based test of groups with concurrency limits: random pushes (jobs of three groups with
 * their limits, and of none), promotions, claims, completions with repeats, failures with and
 * without a backoff, dead letters, replays, deletes and expired leases, through the shell's own
 * paths ({@link Claimer}, {@link QueueCommands}, and {@link Transitions} with the {@link GroupBook}
 * the {@link Settler} reads). A reference model says, after every step, which jobs are admitted (in
 * the ready index or leased), which are parked and what each group's record counts; the store must
 * match it. The model's rules are the documented ones: a job that becomes ready is admitted while
 * its group has a free slot and none parked, else parked; a commit that frees a slot admits the
 * group's first parked jobs (queue order: priority, then push) up to the limit; a claim takes the
 * first admitted ready job in queue order, whatever the parked jobs of saturated groups. Groups may
 * have rate limits: a claim of a job of such a group starts it while fewer than the limit's starts
 * of the group fall in the window {@code (now - period, now]}; else it parks the job and blocks the
 * group until the oldest of those starts is a period old: the group admits none of its jobs until
 * the claimer's wake at that time, which admits its first parked jobs up to its limit. A handler
 * may pause its group's starts: its job waits for the pause's end, the group is blocked until then,
 * and a claim that meets a job of the paused group parks it instead of starting it. Limits may be
 * raised (from 0 too): the queue is built again with them, and its claimer, as a new worker's,
 * first admits the parked jobs of every unblocked group with a free slot, up to the new limit.
 */
public abstract class GroupModelContract {

  private static final long LEASE = 5_000;

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
    return 300;
  }

  /** The group edges a full run walks. */
  static final Set<TransitionTable.Edge> WALKS =
      EnumSet.of(
          TransitionTable.Edge.PUSH_PARKED,
          TransitionTable.Edge.REPEAT_PARKED,
          TransitionTable.Edge.PROMOTE_PARKED,
          TransitionTable.Edge.REPLAY_PARKED,
          TransitionTable.Edge.ADMIT,
          TransitionTable.Edge.DELETE_PARKED,
          TransitionTable.Edge.BLOCK,
          TransitionTable.Edge.DEFER);

  enum S {
    DELAYED,
    READY,
    PARKED,
    LEASED,
    DEAD
  }

  /** What a job should be. */
  static final class M {
    String id;
    double priority;
    String group;
    S state;
    long delayUntil;
    long leaseUntil;
    long token;
    int retriesLeft;
    long backoff;
    long repeatLeft;
  }

  static final Comparator<M> QUEUE_ORDER =
      Comparator.<M>comparingLong(m -> QueueKeys.rank(m.priority)).thenComparing(m -> m.id);

  /** The queue matches the model after every step. */
  @Test
  void groupsMatchTheModelAfterEveryStep() {
    Set<TransitionTable.Edge> walked = EnumSet.noneOf(TransitionTable.Edge.class);
    int[] admittedLater = new int[1];
    TransitionTable.recordOnThisThread(walked::add);
    try {
      Seeds.forEach(
          "groupsMatchTheModelAfterEveryStep",
          runs(),
          1,
          r -> {
            KvStore store;
            try {
              store = newStore();
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            try {
              Run run = new Run(store, r);
              run.steps(150);
              admittedLater[0] += run.admittedLater;
            } finally {
              store.close();
            }
          });
    } finally {
      TransitionTable.stopRecording();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 300) {
      assertThat(walked).as("group edges the model walked").containsAll(WALKS);
      assertThat(admittedLater[0])
          .as("due jobs of a group pushed in a caller's transaction, left to a promotion")
          .isPositive();
    }
  }

  private static final class Run {
    final FakeClock clock = new FakeClock();
    final SplittableRandom r;
    final KvStore store;
    final int claimBatch;
    Queue<String> queue;
    Claimer claimer;
    final Map<String, Integer> limits = new LinkedHashMap<>();
    final Map<String, RateLimit> rates = new LinkedHashMap<>();
    final Map<String, List<Long>> starts = new LinkedHashMap<>();
    final Map<String, Long> blocked = new LinkedHashMap<>();
    final Map<String, Long> paused = new LinkedHashMap<>();
    final Map<String, M> model = new LinkedHashMap<>();
    final List<long[]> heldTokens = new ArrayList<>(); // index into ids, token
    final List<String> heldIds = new ArrayList<>();
    int pushed;
    int admittedLater;

    Run(KvStore store, SplittableRandom r) {
      this.r = r;
      this.store = store;
      int defaultLimit = 1 + r.nextInt(2);
      Queue.Builder<String> b =
          Queue.builder(store, "model", Codecs.utf8())
              .clock(clock)
              .random(new Random(r.nextLong()))
              .groupLimit(defaultLimit);
      for (String g : List.of("g0", "g1", "g2")) {
        int limit = g.equals("g2") ? defaultLimit : r.nextInt(4);
        limits.put(g, limit);
        if (!g.equals("g2")) {
          b.groupLimit(g, limit);
        }
      }
      SplittableRandom rr = r.split();
      for (String g : List.of("g0", "g1", "g2")) {
        if (rr.nextBoolean()) {
          RateLimit rate =
              new RateLimit(1 + rr.nextInt(2), Duration.ofMillis(1_000 + rr.nextInt(3) * 1_000L));
          rates.put(g, rate);
          b.groupRateLimit(g, rate);
        }
        starts.put(g, new ArrayList<>());
        blocked.put(g, 0L);
        paused.put(g, 0L);
      }
      this.queue = b.build();
      this.claimBatch = 1 + r.nextInt(3);
      this.claimer = claimer(queue);
    }

    Claimer claimer(Queue<String> q) {
      // no reclaim limit here (poison jobs are the model test's): a reclaim is always ready
      return new Claimer(q.keys, store, claimBatch, Integer.MAX_VALUE)
          .flow(q.groupLimits(), null, q.groupRates());
    }

    long now() {
      return clock.millis();
    }

    void steps(int n) {
      for (int i = 0; i < n; i++) {
        int op = r.nextInt(100);
        if (op < 30) {
          push();
        } else if (op < 55) {
          claim();
        } else if (op < 70) {
          settle(true);
        } else if (op < 77) {
          settle(false);
        } else if (op < 80) {
          pauseGroup();
        } else if (op < 84) {
          delete();
        } else if (op < 86) {
          deleteAllWaiting();
        } else if (op < 88) {
          replay();
        } else if (op < 90) {
          raiseLimits();
        } else {
          clock.advance(Duration.ofMillis(r.nextInt(4) * 1_000L + (r.nextInt(8) == 0 ? 6_000 : 0)));
        }
        check();
      }
    }

    // ---- the model's rules

    int admitted(String g) {
      return (int)
          model.values().stream()
              .filter(m -> g.equals(m.group) && (m.state == S.READY || m.state == S.LEASED))
              .count();
    }

    int parked(String g) {
      return (int)
          model.values().stream().filter(m -> g.equals(m.group) && m.state == S.PARKED).count();
    }

    /** A job becomes ready: admitted, or parked. Returns the group it changed, or null. */
    void enter(M m, Set<String> changed) {
      if (m.group == null) {
        m.state = S.READY;
        return;
      }
      changed.add(m.group);
      m.state =
          admitted(m.group) < limits.get(m.group)
                  && parked(m.group) == 0
                  && blocked.get(m.group) == 0
              ? S.READY
              : S.PARKED;
    }

    /** The end of an operation: each changed group admits its first parked jobs. */
    void topUp(Set<String> changed, Set<String> touched) {
      for (String g : changed) {
        List<M> heads =
            model.values().stream()
                .filter(m -> g.equals(m.group) && m.state == S.PARKED)
                .sorted(QUEUE_ORDER)
                .limit(GroupBook.HEADS)
                .toList();
        for (M h : heads) {
          if (admitted(g) >= limits.get(g) || blocked.get(g) != 0) {
            break;
          }
          if (!touched.contains(h.id)) {
            h.state = S.READY;
          }
        }
      }
    }

    void leave(M m, Set<String> changed) {
      if (m.group != null) {
        changed.add(m.group);
      }
    }

    // ---- steps

    void push() {
      String group = r.nextInt(6) == 0 ? null : "g" + r.nextInt(3);
      double priority = r.nextInt(3) - 1;
      long delay = r.nextInt(3) == 0 ? r.nextInt(4) * 1_000L : 0;
      int retries = r.nextInt(3);
      long backoff = r.nextBoolean() ? 0 : 1_000;
      long repeat = r.nextInt(4) == 0 ? 1 : 0;
      JobOptions o =
          JobOptions.defaults()
              .priority(priority)
              .delay(Duration.ofMillis(delay))
              .retry(retries, Backoff.fixed(Duration.ofMillis(backoff)))
              .repeat(repeat, Duration.ZERO)
              .group(group);
      String p = "p" + pushed++;
      List<String> states = r.nextInt(4) == 0 ? List.of(p, p + "b") : List.of(p);
      Set<String> changed = new HashSet<>();
      // now and then in a caller's transaction: a due job of a group is written delayed, due at
      // once, and admitted by the next pass's promotion; the push writes no group key
      JoinedView joined = r.nextInt(4) == 0 ? new JoinedView(store, queue.keys) : null;
      Queue<String> through = joined == null ? queue : queue.withStore(joined);
      for (Job<String> j : through.pushAll(states, o)) {
        M m = new M();
        m.id = j.id();
        m.priority = priority;
        m.group = group;
        m.retriesLeft = retries;
        m.backoff = backoff;
        m.repeatLeft = repeat;
        model.put(m.id, m);
        if (delay > 0) {
          m.state = S.DELAYED;
          m.delayUntil = now() + delay;
        } else if (joined != null && group != null) {
          m.state = S.DELAYED;
          m.delayUntil = now();
          admittedLater++;
        } else {
          enter(m, changed);
        }
      }
      if (joined != null) {
        assertThat(joined.problems()).as("a push in a caller's transaction").isEmpty();
      }
      topUp(changed, Set.of());
    }

    void claim() {
      long now = now();
      // the moves of a pass: due delayed jobs in index order, then expired leases
      List<M> due =
          model.values().stream()
              .filter(m -> m.state == S.DELAYED && m.delayUntil <= now)
              .sorted(Comparator.<M>comparingLong(m -> m.delayUntil).thenComparing(m -> m.id))
              .toList();
      Set<String> changed = new HashSet<>();
      for (M m : due) {
        enter(m, changed);
      }
      topUp(changed, Set.of());
      for (String g : limits.keySet()) { // after the promotions: blocked groups whose time came
        long until = blocked.get(g);
        if (until != 0 && until <= now) {
          blocked.put(g, 0L);
          topUp(Set.of(g), Set.of());
        }
      }
      for (M m : model.values()) {
        if (m.state == S.LEASED && m.leaseUntil <= now) {
          m.state = S.READY;
        }
      }
      int batches = 0;
      while (claimer.moveDue(now)) {
        assertThat(++batches).as("moving due jobs ends").isLessThan(10_000);
      }
      Optional<M> expected =
          model.values().stream().filter(m -> m.state == S.READY).min(QUEUE_ORDER);
      List<Claimer.Claimed> got = claimer.claim(1, now, LEASE).claimed();
      if (expected.isEmpty()) {
        assertThat(got).as("nothing admitted is ready").isEmpty();
        return;
      }
      M m = expected.get();
      if (m.group != null && paused.get(m.group) > now) {
        assertThat(got).as("a claim of a job of a paused group").isEmpty();
        m.state = S.PARKED;
        blocked.put(m.group, Math.max(blocked.get(m.group), paused.get(m.group)));
        return;
      }
      RateLimit rate = m.group == null ? null : rates.get(m.group);
      if (rate != null) {
        long period = rate.period().toMillis();
        List<Long> window =
            starts.get(m.group).stream().filter(t -> t > now - period).sorted().toList();
        if (window.size() >= rate.starts()) {
          assertThat(got).as("a claim of a job of a group whose window is full").isEmpty();
          m.state = S.PARKED;
          long next = window.get(window.size() - rate.starts()) + period;
          blocked.put(m.group, Math.max(blocked.get(m.group), next));
          return;
        }
        starts.get(m.group).add(now);
      }
      assertThat(got).as("a claim takes the first admitted job").hasSize(1);
      assertThat(got.get(0).record().id).isEqualTo(m.id);
      m.state = S.LEASED;
      m.token++;
      m.leaseUntil = now + LEASE;
      heldIds.add(m.id);
      heldTokens.add(new long[] {m.token});
    }

    void settle(boolean complete) {
      if (heldIds.isEmpty()) {
        return;
      }
      int i = r.nextInt(heldIds.size());
      String id = heldIds.remove(i);
      long token = heldTokens.remove(i)[0];
      M m = model.get(id);
      Optional<KvEntry> e = store.get(queue.keys.job(id));
      assertThat(e.isPresent()).isEqualTo(m != null);
      if (e.isEmpty()) {
        return;
      }
      long now = now();
      JobRecord record = JobRecord.decode(e.get().value());
      Transitions.Holding h = new Transitions.Holding(record, e.get().versionstamp(), token);
      GroupBook book = GroupReads.book(store, queue.keys, queue.groupLimits(), record);
      String nextId = queue.nextId(now);
      Transitions.Plan plan =
          complete
              ? Transitions.complete(queue.keys, h, now, nextId, book)
              : Transitions.fail(
                  queue.keys,
                  h,
                  now,
                  new JobError("E", "m", java.time.Instant.ofEpochMilli(now)),
                  0.5,
                  false,
                  true,
                  book);
      boolean allowed = m.state == S.LEASED && m.token == token;
      assertThat(plan instanceof Transitions.Applied).as("settle allowed").isEqualTo(allowed);
      if (!allowed) {
        return;
      }
      assertThat(store.commit(((Transitions.Applied) plan).operation()).ok()).isTrue();
      Set<String> changed = new HashSet<>();
      Set<String> touched = new HashSet<>(Set.of(id));
      if (complete) {
        model.remove(id);
        leave(m, changed);
        if (m.repeatLeft > 0) {
          M next = new M();
          next.id = nextId;
          next.priority = m.priority;
          next.group = m.group;
          next.retriesLeft = record.retryLimit;
          next.backoff = m.backoff;
          next.repeatLeft = m.repeatLeft - 1;
          model.put(nextId, next);
          touched.add(nextId);
          enter(next, changed);
        }
      } else if (m.retriesLeft > 0) {
        m.retriesLeft--;
        if (m.backoff > 0) {
          m.state = S.DELAYED;
          m.delayUntil = now + m.backoff;
          leave(m, changed);
        } else {
          m.state = S.READY; // stays admitted: its group's counts do not change
        }
      } else {
        m.state = S.DEAD;
        leave(m, changed);
      }
      topUp(changed, touched);
    }

    /** A handler of a job of a group pauses its group's starts (JobContext.pauseGroupStarts). */
    void pauseGroup() {
      if (heldIds.isEmpty()) {
        return;
      }
      int i = r.nextInt(heldIds.size());
      String id = heldIds.get(i);
      M m = model.get(id);
      if (m == null || m.group == null) {
        return;
      }
      heldIds.remove(i);
      long token = heldTokens.remove(i)[0];
      Optional<KvEntry> e = store.get(queue.keys.job(id));
      assertThat(e).isPresent();
      long now = now();
      long until = now + 1_000 + r.nextInt(3) * 1_000L;
      JobRecord record = JobRecord.decode(e.get().value());
      Transitions.Holding h = new Transitions.Holding(record, e.get().versionstamp(), token);
      GroupBook book = GroupReads.book(store, queue.keys, queue.groupLimits(), record);
      Optional<KvEntry> stored = store.get(queue.keys.groupPaused(m.group));
      Transitions.Plan plan =
          Transitions.defer(
              queue.keys,
              h,
              null,
              new Transitions.Pause(
                  until,
                  stored.map(x -> Transitions.decodeTime(x.value())).orElse(0L),
                  stored.map(KvEntry::versionstamp).orElse(dev.kvmq.store.AtomicOperation.ABSENT)),
              book);
      boolean allowed = m.state == S.LEASED && m.token == token;
      assertThat(plan instanceof Transitions.Applied).as("pause allowed").isEqualTo(allowed);
      if (!allowed) {
        return;
      }
      assertThat(store.commit(((Transitions.Applied) plan).operation()).ok()).isTrue();
      m.state = S.DELAYED;
      m.delayUntil = until;
      Set<String> changed = new HashSet<>();
      leave(m, changed);
      blocked.put(m.group, Math.max(blocked.get(m.group), until));
      paused.put(m.group, Math.max(paused.get(m.group), until));
      topUp(changed, Set.of(id));
    }

    void delete() {
      if (model.isEmpty()) {
        return;
      }
      List<M> all = new ArrayList<>(model.values());
      M m = all.get(r.nextInt(all.size()));
      boolean live = m.state == S.LEASED && m.leaseUntil > now();
      if (live) {
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> queue.delete(m.id)))
            .isInstanceOf(JobProcessingException.class);
        return;
      }
      assertThat(queue.delete(m.id)).isTrue();
      model.remove(m.id);
      Set<String> changed = new HashSet<>();
      if (m.group != null && m.state != S.DELAYED && m.state != S.DEAD) {
        changed.add(m.group);
      }
      topUp(changed, Set.of(m.id));
    }

    /**
     * {@code deleteAll} of the waiting jobs, of one group or of all: every job that is waiting when
     * it starts is deleted, the parked ones of a group included, though deleting the group's
     * admitted ones (the ready, the expired leases) admits its parked ones meanwhile.
     */
    void deleteAllWaiting() {
      long now = now();
      String group = r.nextBoolean() ? null : "g" + r.nextInt(3);
      JobFilter filter =
          group == null
              ? JobFilter.status(JobStatus.WAITING)
              : JobFilter.status(JobStatus.WAITING).group(group);
      List<M> taken =
          model.values().stream()
              .filter(m -> group == null || group.equals(m.group))
              .filter(
                  m ->
                      switch (m.state) {
                        case READY, PARKED -> true;
                        case DELAYED -> m.delayUntil <= now;
                        case LEASED -> m.leaseUntil <= now;
                        case DEAD -> false;
                      })
              .toList();
      assertThat(queue.deleteAll(filter))
          .as("deleteAll %s of %d waiting jobs", filter, taken.size())
          .isEqualTo(taken.size());
      Set<String> changed = new HashSet<>();
      Set<String> touched = new HashSet<>();
      for (M m : taken) {
        model.remove(m.id);
        touched.add(m.id);
        if (m.group != null && m.state != S.DELAYED) {
          changed.add(m.group);
        }
      }
      topUp(changed, touched);
    }

    void replay() {
      Optional<M> dead = model.values().stream().filter(m -> m.state == S.DEAD).findFirst();
      if (dead.isEmpty()) {
        return;
      }
      M m = dead.get();
      assertThat(queue.replayDead(m.id)).isTrue();
      m.retriesLeft =
          store
              .get(queue.keys.job(m.id))
              .map(e -> JobRecord.decode(e.value()).retryLimit)
              .orElseThrow();
      Set<String> changed = new HashSet<>();
      enter(m, changed);
      topUp(changed, Set.of(m.id));
    }

    /**
     * A worker starts on a queue whose limits are raised (from 0, some of them): before anything
     * else it admits the parked jobs of every group with a free slot, up to the new limit.
     */
    void raiseLimits() {
      Queue.Builder<String> b =
          Queue.builder(store, "model", Codecs.utf8())
              .clock(clock)
              .random(new Random(r.nextLong()))
              .groupLimit(limits.get("g2"));
      for (String g : limits.keySet()) {
        if (r.nextBoolean()) {
          limits.put(g, limits.get(g) + 1 + r.nextInt(2));
        }
        b.groupLimit(g, limits.get(g));
      }
      rates.forEach(b::groupRateLimit);
      queue = b.build();
      claimer = claimer(queue);
      claimer.admitFreeSlots();
      for (String g : limits.keySet()) {
        int parked = -1;
        while (parked != parked(g)) { // a commit admits up to GroupBook.HEADS: again until done
          parked = parked(g);
          topUp(Set.of(g), Set.of());
        }
      }
    }

    // ---- the check

    void check() {
      for (M m : model.values()) {
        Optional<KvEntry> e = store.get(queue.keys.job(m.id));
        assertThat(e).as("job %s", m.id).isPresent();
        JobRecord rec = JobRecord.decode(e.get().value());
        S actual =
            switch (rec.state) {
              case READY -> rec.parked ? S.PARKED : S.READY;
              case DELAYED -> S.DELAYED;
              case LEASED -> S.LEASED;
              case DEAD -> S.DEAD;
              case HELD, CANCELLED, COMPLETED ->
                  throw new AssertionError("no job is held, cancelled or kept here: " + rec.state);
            };
        assertThat(actual).as("state of job %s of group %s", m.id, m.group).isEqualTo(m.state);
        assertThat(store.get(queue.keys.indexOf(rec))).as("index entry of " + m.id).isPresent();
      }
      assertThat(store.count(queue.keys.jobs())).isEqualTo(model.size());
      for (String g : limits.keySet()) {
        Optional<KvEntry> e = store.get(queue.keys.group(g));
        int admitted = admitted(g);
        int parked = parked(g);
        assertThat(admitted).as("admitted jobs of %s", g).isLessThanOrEqualTo(limits.get(g));
        long until = blocked.get(g);
        if (admitted == 0 && parked == 0 && until == 0) {
          assertThat(e).as("the record of idle group %s", g).isEmpty();
        } else {
          assertThat(e).as("the record of group %s", g).isPresent();
          assertThat(GroupBook.Counts.decode(e.get().value()))
              .as("the record of group %s", g)
              .isEqualTo(new GroupBook.Counts(admitted, parked, until));
        }
        assertThat(store.get(queue.keys.groupWaking(until, g)).isPresent())
            .as("the wake-up entry of group %s, blocked until %d", g, until)
            .isEqualTo(until != 0);
        assertThat(store.count(queue.keys.parked(g))).as("parked index of %s", g).isEqualTo(parked);
        if (paused.get(g) > now()) {
          assertThat(store.get(queue.keys.groupPaused(g)))
              .as("the pause of group %s", g)
              .hasValueSatisfying(
                  x -> assertThat(Transitions.decodeTime(x.value())).isEqualTo(paused.get(g)));
        }
      }
    }
  }
}
