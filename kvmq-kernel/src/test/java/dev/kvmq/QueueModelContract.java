package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.Seeds;
import dev.kvmq.testkit.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Model-based property test of the queue: random sequences of push, claim, renew, update, complete,
 * fail (with stale lease holders among them), delete, delete-waiting, replay, pause, resume and
 * clock advances (and outages: jumps of 20 to 80 s), checked after every step against a small
 * reference model: order, places, statuses, tokens, counts and dead letters. Pushes handed off to
 * an idle worker ({@link Transitions#pushClaimed}) too: leased at once under token 1, or, while the
 * queue is paused, refused with nothing written.
 *
 * <p>Schedules too: define (the same definition again, a changed one), pause, resume, trigger,
 * delete and firing (before every claim, as a worker's pass does) of fixed-rate and cron schedules
 * with every missed-run and overlap policy. The model walks every slot naively and says which jobs
 * must exist with which schedule and slot, and each schedule's paused flag, next due time and last
 * run; the queue must match after every step, with one due index entry per running schedule.
 *
 * <p>A store's test extends this and says how to open a fresh store. A failure names its seed;
 * {@code -Dkvmq.seed=N} replays it.
 */
public abstract class QueueModelContract {

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
   * @return the number of runs (a durable store may want fewer)
   */
  protected int runs() {
    return 300;
  }

  /** The reference: what a job should be. */
  static final class M {
    String id;
    double priority;
    JobRecord.State state;
    long delayUntil;
    long leaseUntil;
    long token;
    int retriesLeft;
    int retryLimit;
    long repeatLeft;
    long repeatDelay;
    long backoff;
    long failedAt;
    String payload;
    long heldAt;
    String schedule;
    long slot = -1;
    UniqueKey unique;
    boolean uniqueLost; // replayed: its scope ended for good
    long finishedAt = -1;
    String result;
    int leaseExpiries;
    long cancelledAt = -1;

    JobStatus status(long now) {
      return switch (state) {
        case DEAD -> JobStatus.DEAD;
        case LEASED -> leaseUntil > now ? JobStatus.PROCESSING : JobStatus.WAITING;
        case DELAYED -> delayUntil > now ? JobStatus.DELAYED : JobStatus.WAITING;
        case READY -> JobStatus.WAITING;
        case HELD -> JobStatus.HELD;
        case CANCELLED -> JobStatus.CANCELLED;
        case COMPLETED -> JobStatus.COMPLETED;
      };
    }

    /** Whether the job has ended and is kept in the history (completed or dead). */
    boolean ended() {
      return state == JobRecord.State.DEAD
          || state == JobRecord.State.COMPLETED
          || state == JobRecord.State.CANCELLED;
    }
  }

  record Held(String id, long token) {}

  /** The edges of the transition table a full run of this test must walk. */
  static final Set<TransitionTable.Edge> WALKS =
      EnumSet.complementOf(
          EnumSet.of(
              TransitionTable.Edge.RELEASE,
              TransitionTable.Edge.QUARANTINE,
              // groups and paused starts: GroupModelContract walks them
              TransitionTable.Edge.PUSH_PARKED,
              TransitionTable.Edge.REPEAT_PARKED,
              TransitionTable.Edge.PROMOTE_PARKED,
              TransitionTable.Edge.REPLAY_PARKED,
              TransitionTable.Edge.RELEASE_HELD_PARKED,
              TransitionTable.Edge.ADMIT,
              TransitionTable.Edge.DELETE_PARKED,
              TransitionTable.Edge.DEFER,
              TransitionTable.Edge.CANCEL_PARKED,
              TransitionTable.Edge.BLOCK,
              // keyed jobs of groups: the unique simulation (grouped runs) walks them
              TransitionTable.Edge.DEBOUNCE_PARKED,
              TransitionTable.Edge.DEBOUNCE_PARKED_DELAYED,
              TransitionTable.Edge.DEBOUNCE_DELAYED_PARKED));

  /**
   * Every step's plans are edges of the {@link TransitionTable} ({@link Transitions} throws
   * otherwise); a full run (every seed, the default number of runs) walks each edge the model's
   * steps can take.
   */
  @Test
  void queueMatchesTheModelAfterEveryStep() {
    Set<TransitionTable.Edge> walked = EnumSet.noneOf(TransitionTable.Edge.class);
    TransitionTable.recordOnThisThread(walked::add);
    try {
      Seeds.forEach("queueMatchesTheModelAfterEveryStep", runs(), 1, this::run);
    } finally {
      TransitionTable.stopRecording();
    }
    if (System.getProperty("kvmq.seed") == null && runs() >= 300) {
      assertThat(walked).as("edges of the transition table the model walked").containsAll(WALKS);
    }
  }

  private void run(SplittableRandom r) {
    KvStore store;
    try {
      store = newStore();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    try {
      new Run(store, r).steps(120);
    } finally {
      store.close();
    }
  }

  static final class Run {
    final FakeClock clock = new FakeClock();
    final SplittableRandom r;
    final Queue<String> queue;
    final Claimer claimer;
    final ScheduleFirer firer;
    final ScheduleModel schedules = new ScheduleModel();
    final Map<String, M> model = new LinkedHashMap<>();
    final List<Held> held = new ArrayList<>();
    boolean paused;
    int pushed;
    final Retention retention;

    /** The reclaim limit of this run: small, so that poison jobs are common. */
    final int maxExpiries;

    Run(KvStore store, SplittableRandom r) {
      this.r = r;
      this.retention = HistoryModel.randomRetention(r);
      this.queue =
          Queue.builder(store, "model", Codecs.utf8())
              .clock(clock)
              .random(new Random(r.nextLong()))
              .build();
      // small batches: due jobs often outnumber one batch, as a million due at once would
      this.maxExpiries = 1 + r.nextInt(3);
      this.claimer = new Claimer(queue.keys, store, 1 + r.nextInt(3), maxExpiries);
      this.firer = new ScheduleFirer(queue.keys, store, queue::nextId, 1 + r.nextInt(2));
    }

    void steps(int n) {
      for (int i = 0; i < n; i++) {
        if (r.nextInt(100) < 15) {
          scheduleStep();
          check();
          continue;
        }
        int op = r.nextInt(100);
        if (op < 22) {
          int kind = r.nextInt(6);
          if (kind < 2) {
            uniquePush();
          } else if (kind == 2) {
            handOff();
          } else {
            push();
          }
        } else if (op < 40) {
          claim();
        } else if (op < 52) {
          settle(true);
        } else if (op < 62) {
          settle(false);
        } else if (op < 67) {
          renewOrUpdate();
        } else if (op < 72) {
          delete();
        } else if (op < 74) {
          deleteWaiting();
        } else if (op < 77) {
          replay();
        } else if (op < 78 && r.nextBoolean()) {
          prune();
        } else if (op < 80) {
          paused = !paused;
          if (paused) {
            queue.pause();
          } else {
            queue.resume();
          }
        } else if (r.nextInt(20) == 0) {
          clock.advance(Duration.ofMillis(20_000 + r.nextInt(60_000))); // an outage
        } else {
          clock.advance(Duration.ofMillis(r.nextInt(4) * 1_000L + r.nextInt(2)));
        }
        check();
        if (r.nextInt(6) == 0) {
          heldStep();
          check();
        }
        if (r.nextInt(5) == 0) {
          controlStep();
          check();
        }
      }
    }

    long now() {
      return clock.millis();
    }

    void push() {
      double priority = r.nextInt(3) - 1 + (r.nextInt(4) == 0 ? 0.5 : 0);
      long delay = r.nextBoolean() ? 0 : r.nextInt(8) * 1_000L;
      int retries = r.nextInt(3);
      long backoff = r.nextInt(3) * 1_000L;
      long repeat = r.nextInt(6) == 0 ? JobOptions.REPEAT_FOREVER : r.nextInt(3);
      long repeatDelay = r.nextInt(2) * 2_000L;
      JobOptions o =
          JobOptions.defaults()
              .priority(priority)
              .delay(Duration.ofMillis(delay))
              .retry(retries, Backoff.fixed(Duration.ofMillis(backoff)))
              .repeat(repeat, Duration.ofMillis(repeatDelay));
      String payload = "p" + pushed++;
      List<String> payloads =
          r.nextInt(4) == 0 ? List.of(payload, payload + "b") : List.of(payload);
      for (Job<String> j : queue.pushAll(payloads, o)) {
        M m = modelJob(j.id(), j.state(), priority, retries, backoff, repeat, repeatDelay);
        m.delayUntil = now() + delay;
        m.state = delay > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
      }
    }

    /** A new job in the model, as pushed with these options (its state and due time to set). */
    M modelJob(
        String id,
        String payload,
        double priority,
        int retries,
        long backoff,
        long repeat,
        long repeatDelay) {
      M m = new M();
      m.id = id;
      m.priority = priority;
      m.retriesLeft = retries;
      m.retryLimit = retries;
      m.repeatLeft = repeat;
      m.repeatDelay = repeatDelay;
      m.backoff = backoff;
      m.payload = payload;
      model.put(m.id, m);
      return m;
    }

    /**
     * A push handed off to an idle worker, as {@code QueueCommands} commits it: the job is leased
     * at once under token 1 (its first attempt), and is then settled, renewed and reclaimed as any
     * claimed job; while the queue is paused the commit is refused and writes nothing (the push
     * would then be a plain one, which {@link #push} models).
     */
    void handOff() {
      double priority = r.nextInt(3) - 1;
      int retries = r.nextInt(3);
      long backoff = r.nextInt(3) * 1_000L;
      long repeat = r.nextInt(3);
      long repeatDelay = r.nextInt(2) * 2_000L;
      JobOptions o =
          JobOptions.defaults()
              .priority(priority)
              .retry(retries, Backoff.fixed(Duration.ofMillis(backoff)))
              .repeat(repeat, Duration.ofMillis(repeatDelay));
      long now = now();
      String id = queue.nextId(now);
      String payload = "h" + pushed++;
      Transitions.Applied plan =
          Transitions.pushClaimed(
              queue.keys, id, queue.encode(payload), o, now, Map.of(), LEASE, "");
      boolean ok = queue.store.commit(plan.operation()).ok();
      assertThat(ok).as("a handoff commits unless the queue is paused").isEqualTo(!paused);
      if (!ok) {
        return;
      }
      M m = modelJob(id, payload, priority, retries, backoff, repeat, repeatDelay);
      m.delayUntil = now;
      m.state = JobRecord.State.LEASED;
      m.token = 1;
      m.leaseUntil = now + LEASE;
      held.add(new Held(m.id, m.token));
    }

    void claim() {
      if (paused) {
        return;
      }
      fire(); // as a worker's pass: due schedules first
      long now = now();
      for (M m : model.values()) {
        if (m.status(now) == JobStatus.WAITING) {
          if (m.state == JobRecord.State.LEASED && ++m.leaseExpiries >= maxExpiries) {
            m.state = JobRecord.State.DEAD; // a poison job: not reclaimed again
            m.failedAt = now;
            m.finishedAt = now;
            m.leaseUntil = 0;
          } else {
            m.state = JobRecord.State.READY;
            m.leaseUntil = 0;
          }
        }
      }
      Optional<M> expected =
          model.values().stream().filter(m -> m.status(now) == JobStatus.WAITING).min(ORDER);
      // as a worker's pass: no claim until every due job is moved (then the first waiting
      // job in queue order is the one claimed, however many batches that took)
      int batches = 0;
      while (claimer.moveDue(now)) {
        assertThat(++batches).as("moving due jobs ends").isLessThan(10_000);
      }
      List<Claimer.Claimed> got = claimer.claim(1, now, LEASE).claimed();
      if (expected.isEmpty()) {
        assertThat(got).isEmpty();
        return;
      }
      assertThat(got).hasSize(1);
      M m = expected.get();
      assertThat(got.get(0).record().id).isEqualTo(m.id);
      m.state = JobRecord.State.LEASED;
      m.token++;
      m.leaseUntil = now + LEASE;
      assertThat(got.get(0).record().token).isEqualTo(m.token);
      held.add(new Held(m.id, m.token));
    }

    /** Complete (or fail) as some holder, maybe a stale one. */
    void settle(boolean complete) {
      if (held.isEmpty()) {
        return;
      }
      Held h = held.remove(r.nextInt(held.size()));
      long now = now();
      M m = model.get(h.id);
      boolean allowed = m != null && m.state == JobRecord.State.LEASED && m.token == h.token;
      Optional<KvEntry> e = queue.store.get(queue.keys.job(h.id));
      assertThat(e.isPresent()).isEqualTo(m != null);
      if (e.isEmpty()) {
        return;
      }
      Transitions.Holding holding =
          new Transitions.Holding(
              JobRecord.decode(e.get().value()), e.get().versionstamp(), h.token);
      Transitions.Plan plan;
      String nextId = queue.nextId(now);
      String result = r.nextBoolean() ? "r" + r.nextInt(100) : null;
      if (complete) {
        plan =
            Transitions.complete(
                queue.keys, holding, now, nextId, retention.completed().keepsAny(), result);
      } else {
        plan =
            Transitions.fail(
                queue.keys,
                holding,
                now,
                new JobError("E", "boom", java.time.Instant.ofEpochMilli(now)),
                0.5,
                false,
                retention.dead().keepsAny(),
                GroupBook.none());
      }
      assertThat(plan instanceof Transitions.Refused)
          .as("refused for a stale holder only")
          .isEqualTo(!allowed);
      if (!(plan instanceof Transitions.Applied applied)) {
        assertThat(((Transitions.Refused) plan).refusal())
            .isEqualTo(Transitions.Refusal.LEASE_LOST);
        return;
      }
      assertThat(queue.store.commit(applied.operation()).ok()).isTrue();
      if (complete) {
        if (retention.completed().keepsAny()) {
          m.state = JobRecord.State.COMPLETED;
          m.finishedAt = now;
          m.result = result;
          m.leaseUntil = 0;
        } else {
          model.remove(m.id);
        }
        if (m.repeatLeft != 0) {
          M n = new M();
          n.id = nextId;
          n.priority = m.priority;
          n.delayUntil = now + m.repeatDelay;
          n.state = m.repeatDelay > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
          n.retriesLeft = m.retryLimit;
          n.retryLimit = m.retryLimit;
          n.repeatLeft =
              m.repeatLeft == JobOptions.REPEAT_FOREVER
                  ? JobOptions.REPEAT_FOREVER
                  : m.repeatLeft - 1;
          n.repeatDelay = m.repeatDelay;
          n.backoff = m.backoff;
          n.payload = m.payload;
          model.put(n.id, n);
        }
      } else if (m.retriesLeft > 0) {
        m.retriesLeft--;
        m.delayUntil = now + m.backoff;
        m.state = m.backoff > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
        m.leaseUntil = 0;
      } else if (retention.dead().keepsAny()) {
        m.state = JobRecord.State.DEAD;
        m.failedAt = now;
        m.finishedAt = now;
        m.leaseUntil = 0;
      } else {
        model.remove(m.id); // no dead letters kept
      }
    }

    /**
     * A worker's pruning step, in small batches until it is done; the model drops what the
     * retention says is past its limits.
     */
    void prune() {
      long now = now();
      Pruner pruner = new Pruner(queue.keys, queue.store, retention, 0, 1 + r.nextInt(3));
      int batches = 0;
      while (pruner.pruneDue(now)) {
        assertThat(++batches).as("pruning ends").isLessThan(10_000);
      }
      HistoryModel.prune(model, JobRecord.State.COMPLETED, retention.completed(), now);
      HistoryModel.prune(model, JobRecord.State.DEAD, retention.dead(), now);
    }

    void renewOrUpdate() {
      if (held.isEmpty()) {
        return;
      }
      Held h = held.get(r.nextInt(held.size()));
      long now = now();
      M m = model.get(h.id);
      boolean allowed = m != null && m.state == JobRecord.State.LEASED && m.token == h.token;
      Optional<KvEntry> e = queue.store.get(queue.keys.job(h.id));
      if (e.isEmpty()) {
        assertThat(m).isNull();
        return;
      }
      Transitions.Holding holding =
          new Transitions.Holding(
              JobRecord.decode(e.get().value()), e.get().versionstamp(), h.token);
      boolean update = r.nextBoolean();
      String payload = "u" + r.nextInt(1000);
      Transitions.Plan plan =
          update
              ? Transitions.update(
                  queue.keys,
                  holding,
                  now,
                  LEASE,
                  JobChange.none(),
                  payload.getBytes(java.nio.charset.StandardCharsets.UTF_8))
              : Transitions.renew(queue.keys, holding, now, LEASE);
      assertThat(plan instanceof Transitions.Refused).isEqualTo(!allowed);
      if (plan instanceof Transitions.Applied applied) {
        assertThat(queue.store.commit(applied.operation()).ok()).isTrue();
        m.leaseUntil = Math.max(m.leaseUntil, now + LEASE);
        if (update) {
          m.payload = payload;
        }
      }
    }

    void delete() {
      if (model.isEmpty()) {
        assertThat(queue.delete(Ulid.format(1, 2, 3))).isFalse();
        return;
      }
      List<M> all = new ArrayList<>(model.values());
      M m = all.get(r.nextInt(all.size()));
      if (m.state == JobRecord.State.LEASED && m.leaseUntil > now()) {
        assertThatThrownBy(() -> queue.delete(m.id)).isInstanceOf(JobProcessingException.class);
      } else {
        assertThat(queue.delete(m.id)).isTrue();
        model.remove(m.id);
      }
    }

    void deleteWaiting() {
      long now = now();
      List<String> gone =
          model.values().stream()
              .filter(m -> m.status(now) == JobStatus.WAITING || m.status(now) == JobStatus.DELAYED)
              .map(m -> m.id)
              .toList();
      assertThat(queue.deleteWaiting()).isEqualTo(gone.size());
      gone.forEach(model::remove);
    }

    void replay() {
      Optional<M> dead =
          model.values().stream().filter(m -> m.state == JobRecord.State.DEAD).findFirst();
      if (dead.isEmpty()) {
        return;
      }
      assertThat(queue.replayDead(dead.get().id)).isTrue();
      M m = dead.get();
      m.uniqueLost = m.unique != null;
      m.state = JobRecord.State.READY;
      m.retriesLeft = m.retryLimit;
      m.delayUntil = 0;
      m.finishedAt = -1;
      m.leaseExpiries = 0;
    }

    // ---- schedules: the reference model

    void scheduleStep() {
      int op = r.nextInt(100);
      String name = "s" + r.nextInt(3);
      if (op < 30) {
        define(name);
      } else if (op < 55) {
        if (!paused) {
          fire();
        }
      } else if (op < 67) {
        MS ms = schedules.byName.get(name);
        boolean done = queue.schedules().pause(name);
        assertThat(done).isEqualTo(ms != null && !ms.paused);
        if (done) {
          ms.paused = true;
          ms.nextDue = -1;
        }
      } else if (op < 79) {
        MS ms = schedules.byName.get(name);
        boolean done = queue.schedules().resume(name);
        assertThat(done).isEqualTo(ms != null && ms.paused);
        if (done) {
          ms.paused = false;
          ms.nextDue = ms.def.spec.next(now());
        }
      } else if (op < 90) {
        MS ms = schedules.byName.get(name);
        Optional<Job<String>> job = queue.schedules().trigger(name);
        assertThat(job.isPresent()).isEqualTo(ms != null);
        if (ms != null) {
          Job<String> j = job.get();
          assertThat(j.slot()).contains(java.time.Instant.ofEpochMilli(now()));
          addJob(ms, j.id(), now());
          ms.lastSlot = now();
          ms.lastJobId = j.id();
        }
      } else {
        boolean had = schedules.byName.remove(name) != null;
        assertThat(queue.schedules().delete(name)).isEqualTo(had);
      }
    }

    void define(String name) {
      Def def = schedules.randomDef(r, now());
      MS ms = schedules.byName.get(name);
      Schedules.Defined got = queue.schedules().define(def.schedule(name));
      if (ms != null && ms.def.equals(def)) {
        assertThat(got).isEqualTo(Schedules.Defined.UNCHANGED);
        return;
      }
      assertThat(got)
          .isEqualTo(ms == null ? Schedules.Defined.CREATED : Schedules.Defined.REPLACED);
      if (ms == null) {
        ms = new MS();
        ms.name = name;
        schedules.byName.put(name, ms);
      }
      ms.def = def;
      ms.nextDue = ms.paused ? -1 : def.spec.next(now());
    }

    /** Fires every due schedule as the firer does, and checks the jobs it pushed. */
    void fire() {
      long now = now();
      Map<String, List<Long>> expected = new java.util.TreeMap<>();
      for (Map.Entry<String, MS> e : schedules.byName.entrySet()) {
        MS ms = e.getValue();
        if (ms.paused || ms.nextDue < 0 || ms.nextDue > now) {
          continue;
        }
        List<Long> due = new ArrayList<>();
        for (long t = ms.nextDue; t >= 0 && t <= now; t = ms.def.spec.next(t)) {
          due.add(t);
        }
        long latest = due.get(due.size() - 1);
        boolean onTime = now - latest <= ms.def.lateness;
        List<Long> run =
            switch (ms.def.missed.kind()) {
              case RUN_ONCE -> List.of(latest);
              case SKIP -> onTime ? List.of(latest) : List.of();
              case RUN_EACH ->
                  due.subList(Math.max(0, due.size() - ms.def.missed.limit()), due.size());
            };
        M previous = ms.lastJobId == null ? null : model.get(ms.lastJobId);
        if (ms.def.overlap == Overlap.SKIP
            && previous != null
            && previous.state != JobRecord.State.DEAD
            && previous.state != JobRecord.State.CANCELLED
            && previous.state != JobRecord.State.COMPLETED) {
          run = List.of();
        }
        expected.put(e.getKey(), run);
        ms.nextDue = ms.def.spec.next(now);
      }
      int batches = 0;
      while (firer.fireDue(now)) {
        assertThat(++batches).as("firing due schedules ends").isLessThan(1_000);
      }
      Map<String, List<Long>> got = new java.util.TreeMap<>();
      List<Job<String>> fresh = new ArrayList<>();
      for (JobEntry<String> e : queue.jobs()) {
        if (!model.containsKey(e.job().id())) {
          fresh.add(e.job());
        }
      }
      fresh.sort(Comparator.comparing(Job::id));
      for (Job<String> j : fresh) {
        String name = j.schedule().orElseThrow();
        got.computeIfAbsent(name, x -> new ArrayList<>())
            .add(j.slot().orElseThrow().toEpochMilli());
        MS ms = schedules.byName.get(name);
        addJob(ms, j.id(), j.slot().orElseThrow().toEpochMilli());
        ms.lastSlot = j.slot().orElseThrow().toEpochMilli();
        ms.lastJobId = j.id();
      }
      expected.values().removeIf(List::isEmpty);
      assertThat(got).as("jobs pushed by the schedules due at %d", now).isEqualTo(expected);
    }

    void addJob(MS ms, String id, long slot) {
      M m = new M();
      m.id = id;
      m.priority = ms.def.priority;
      m.delayUntil = now();
      m.state = JobRecord.State.READY;
      m.retriesLeft = ms.def.retries;
      m.retryLimit = ms.def.retries;
      m.backoff = 1_000;
      m.payload = ms.def.state;
      m.schedule = ms.name;
      m.slot = slot;
      model.put(id, m);
    }

    void checkSchedules() {
      List<ScheduleEntry<String>> listed = queue.schedules().list();
      assertThat(listed)
          .extracting(ScheduleEntry::name)
          .containsExactlyElementsOf(schedules.byName.keySet());
      for (ScheduleEntry<String> e : listed) {
        MS ms = schedules.byName.get(e.name());
        assertThat(e.paused()).as("paused %s", e.name()).isEqualTo(ms.paused);
        assertThat(e.nextDue().map(java.time.Instant::toEpochMilli).orElse(-1L))
            .as("nextDue of %s", e.name())
            .isEqualTo(ms.nextDue);
        assertThat(e.lastSlot().map(java.time.Instant::toEpochMilli).orElse(-1L))
            .as("lastSlot of %s", e.name())
            .isEqualTo(ms.lastSlot);
        assertThat(e.lastJobId()).isEqualTo(Optional.ofNullable(ms.lastJobId));
        assertThat(e.schedule()).isEqualTo(ms.def.schedule(e.name()));
      }
      assertThat(queue.store.count(queue.keys.dueEntries()))
          .as("one due entry per running schedule with a next slot")
          .isEqualTo(schedules.byName.values().stream().filter(m -> m.nextDue >= 0).count());
    }

    static final Comparator<M> ORDER =
        Comparator.<M>comparingLong(m -> QueueKeys.rank(m.priority)).thenComparing(m -> m.id);

    /**
     * Held jobs: hold (as a push in an application's transaction), release them (its commit), drop
     * them (its rollback), or let a worker's held-job step release the ones held past the timeout.
     */
    void heldStep() {
      long now = now();
      List<M> heldJobs =
          model.values().stream().filter(m -> m.state == JobRecord.State.HELD).toList();
      int op = r.nextInt(4);
      if (op == 0 || heldJobs.isEmpty()) {
        long delay = r.nextBoolean() ? 0 : r.nextInt(8) * 1_000L;
        double priority = r.nextInt(3) - 1;
        List<String> payloads =
            r.nextBoolean() ? List.of("h" + pushed++) : List.of("h" + pushed++, "h" + pushed++);
        JobOptions o = JobOptions.defaults().priority(priority).delay(Duration.ofMillis(delay));
        for (Job<String> j : queue.holdAll(payloads, o)) {
          assertThat(j.status()).isEqualTo(JobStatus.HELD);
          M m = new M();
          m.id = j.id();
          m.priority = priority;
          m.delayUntil = now + delay;
          m.state = JobRecord.State.HELD;
          m.heldAt = now;
          m.repeatLeft = 0;
          m.payload = j.state();
          model.put(m.id, m);
        }
      } else if (op == 1 || op == 2) {
        List<M> some = heldJobs.subList(0, 1 + r.nextInt(heldJobs.size()));
        List<String> ids = new ArrayList<>(some.stream().map(m -> m.id).toList());
        ids.add(Ulid.format(1, 2, 3)); // no such job: left out
        if (op == 1) {
          assertThat(queue.releaseHeld(ids)).isEqualTo(some.size());
          some.forEach(
              m -> m.state = m.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY);
        } else {
          assertThat(queue.dropHeld(ids)).isEqualTo(some.size());
          some.forEach(m -> model.remove(m.id));
        }
      } else {
        long timeout = HELD_TIMEOUT;
        HeldResolver resolver =
            new HeldResolver(
                queue.keys, queue.store, Optional.of(Duration.ofMillis(timeout)), 1 + r.nextInt(3));
        int batches = 0;
        while (resolver.resolveDue(now)) {
          assertThat(++batches).as("resolving held jobs ends").isLessThan(10_000);
        }
        for (M m : heldJobs) {
          if (m.heldAt <= now - timeout) {
            m.state = m.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
          }
        }
      }
    }

    static final long HELD_TIMEOUT = 3_000;

    // ---- control: the reference model (docs/semantics.md, "Cancel", "Snooze", "Poison jobs")

    /**
     * Cancel one job (any state: the model says whether it has ended), cancel or delete many by
     * status, snooze or fail for good as some holder (maybe a stale one, maybe one whose job was
     * cancelled under it: refused).
     */
    void controlStep() {
      long now = now();
      int op = r.nextInt(100);
      if (op < 35) {
        List<M> all = new ArrayList<>(model.values());
        if (all.isEmpty()) {
          assertThat(queue.cancel(Ulid.format(1, 2, 3))).isFalse();
          return;
        }
        M m = all.get(r.nextInt(all.size()));
        boolean ends = !m.ended();
        assertThat(queue.cancel(m.id)).as("cancel of %s (%s)", m.id, m.state).isEqualTo(ends);
        if (ends) {
          cancelled(m, now);
        }
      } else if (op < 55) {
        JobStatus[] all = JobStatus.values();
        JobStatus first = all[r.nextInt(all.length)];
        JobStatus second = all[r.nextInt(all.length)];
        JobFilter filter = JobFilter.status(first, second);
        boolean cancel = r.nextBoolean();
        List<M> taken =
            model.values().stream()
                .filter(m -> filter.statuses().contains(m.status(now)))
                .filter(m -> cancel ? !m.ended() : m.status(now) != JobStatus.PROCESSING)
                .toList();
        long done = cancel ? queue.cancelAll(filter) : queue.deleteAll(filter);
        assertThat(done)
            .as("%s %s", cancel ? "cancelAll" : "deleteAll", filter)
            .isEqualTo(taken.size());
        for (M m : taken) {
          if (cancel) {
            cancelled(m, now);
          } else {
            model.remove(m.id);
          }
        }
      } else if (!held.isEmpty()) {
        Held h = held.remove(r.nextInt(held.size()));
        M m = model.get(h.id);
        boolean allowed = m != null && m.state == JobRecord.State.LEASED && m.token == h.token;
        Optional<KvEntry> e = queue.store.get(queue.keys.job(h.id));
        assertThat(e.isPresent()).isEqualTo(m != null);
        if (e.isEmpty()) {
          return;
        }
        Transitions.Holding holding =
            new Transitions.Holding(
                JobRecord.decode(e.get().value()), e.get().versionstamp(), h.token);
        boolean snooze = op < 80;
        long delay = r.nextInt(3) * 1_000L;
        Transitions.Plan plan =
            snooze
                ? Transitions.snooze(queue.keys, holding, now, delay)
                : Transitions.fail(
                    queue.keys,
                    holding,
                    now,
                    new JobError("E", "never", java.time.Instant.ofEpochMilli(now)),
                    0.5,
                    true);
        assertThat(plan instanceof Transitions.Refused)
            .as("refused for a stale or cancelled holder only")
            .isEqualTo(!allowed);
        if (!(plan instanceof Transitions.Applied applied)) {
          return;
        }
        assertThat(queue.store.commit(applied.operation()).ok()).isTrue();
        m.leaseUntil = 0;
        if (snooze) {
          m.delayUntil = now + delay;
          m.state = delay > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
        } else {
          m.state = JobRecord.State.DEAD;
          m.failedAt = now;
          m.finishedAt = now;
        }
      }
    }

    void cancelled(M m, long now) {
      m.state = JobRecord.State.CANCELLED;
      m.cancelledAt = now;
      m.leaseUntil = 0;
    }

    /** Cancelled jobs are kept, each in the cancelled index at the time of its cancel. */
    void checkControl() {
      List<M> cancelled =
          model.values().stream().filter(m -> m.state == JobRecord.State.CANCELLED).toList();
      assertThat(queue.store.count(queue.keys.cancelled()))
          .as("one cancelled index entry per cancelled job")
          .isEqualTo(cancelled.size());
      for (M m : cancelled) {
        Job<String> j = queue.job(m.id).orElseThrow();
        assertThat(j.status()).isEqualTo(JobStatus.CANCELLED);
        assertThat(j.cancelledAt()).contains(java.time.Instant.ofEpochMilli(m.cancelledAt));
        assertThat(j.state()).isEqualTo(m.payload);
        assertThat(queue.store.get(queue.keys.cancelled(m.cancelledAt, m.id))).isPresent();
      }
    }

    void check() {
      long now = now();
      List<M> queued = model.values().stream().filter(m -> !m.ended()).sorted(ORDER).toList();
      List<JobEntry<String>> listed = queue.jobs();
      assertThat(listed)
          .as(
              "listed jobs; the model's queued ones as stored: %s",
              queued.stream()
                  .map(
                      m ->
                          queue
                                  .job(m.id)
                                  .map(j -> j + " " + j.lastError() + " exp " + j.leaseExpiries())
                                  .orElse(m.id + " absent")
                              + " model "
                              + m.state
                              + " exp "
                              + m.leaseExpiries
                              + " retries "
                              + m.retriesLeft
                              + " max "
                              + maxExpiries)
                  .toList())
          .extracting(e -> e.job().id())
          .containsExactlyElementsOf(queued.stream().map(m -> m.id).toList());
      int place = 0;
      for (int i = 0; i < queued.size(); i++) {
        M m = queued.get(i);
        JobEntry<String> e = listed.get(i);
        JobStatus status = m.status(now);
        assertThat(e.status()).as("status of %s", m.id).isEqualTo(status);
        assertThat(e.place())
            .isEqualTo(status == JobStatus.PROCESSING || status == JobStatus.HELD ? 0 : ++place);
        assertThat(e.job().token()).isEqualTo(m.token);
        assertThat(e.job().state()).isEqualTo(m.payload);
        assertThat(e.job().retriesLeft()).isEqualTo(m.retriesLeft);
        assertThat(e.job().repeatCount()).isEqualTo(m.repeatLeft);
        assertThat(e.job().leaseExpiries())
            .as("lease expiries of %s", m.id)
            .isEqualTo(m.leaseExpiries);
      }
      checkControl();
      long waiting = queued.stream().filter(m -> m.status(now) == JobStatus.WAITING).count();
      long delayed = queued.stream().filter(m -> m.status(now) == JobStatus.DELAYED).count();
      long processing = queued.stream().filter(m -> m.status(now) == JobStatus.PROCESSING).count();
      long heldCount = queued.stream().filter(m -> m.status(now) == JobStatus.HELD).count();
      List<String> dead =
          model.values().stream()
              .filter(m -> m.state == JobRecord.State.DEAD)
              .sorted(Comparator.<M>comparingLong(m -> m.failedAt).thenComparing(m -> m.id))
              .map(m -> m.id)
              .toList();
      assertThat(queue.counts())
          .isEqualTo(new QueueCounts(waiting, delayed, processing, dead.size(), heldCount));
      assertThat(queue.deadLetters()).extracting(Job::id).containsExactlyElementsOf(dead);
      assertThat(queue.isPaused()).isEqualTo(paused);
      for (int i = 0; i < queued.size(); i++) {
        M m = queued.get(i);
        Job<String> j = listed.get(i).job();
        assertThat(j.schedule())
            .as("schedule of %s", m.id)
            .isEqualTo(Optional.ofNullable(m.schedule));
        assertThat(j.slot().map(java.time.Instant::toEpochMilli).orElse(-1L))
            .as("slot of %s", m.id)
            .isEqualTo(m.slot);
      }
      checkSchedules();
      checkUnique();
      HistoryModel.check(queue, model, now, r);
    }

    // ---- unique jobs: the reference model (docs/flow-control.md, "Unique jobs")

    /** Throttle keys taken, by key: the job that took each and the end of its period. */
    final Map<String, Throttle> throttles = new java.util.TreeMap<>();

    record Throttle(String id, long until) {}

    /** Whether {@code m} holds its unique key: its scope has not ended. */
    static boolean holds(M m) {
      if (m.unique == null) {
        return false;
      }
      return switch (m.unique.scope()) {
        case WAITING -> m.token == 0 && !m.ended(); // until its first claim
        case WAITING_OR_RUNNING -> !m.ended() && !m.uniqueLost;
        case PERIOD -> false; // held by time
      };
    }

    M holder(String key) {
      return model.values().stream()
          .filter(m -> m.unique != null && m.unique.key().equals(key) && holds(m))
          .findFirst()
          .orElse(null);
    }

    /**
     * A push with one of three keys, in a random scope and mode: the model says whether it makes a
     * job, is a duplicate of which job, or debounces its waiting holder.
     */
    void uniquePush() {
      long now = now();
      String key = "k" + r.nextInt(3);
      long delay = r.nextBoolean() ? 0 : (1 + r.nextInt(7)) * 1_000L;
      UniqueKey u =
          switch (r.nextInt(3)) {
            case 0 -> UniqueKey.whileWaiting(key);
            case 1 -> UniqueKey.whileWaitingOrRunning(key);
            default -> UniqueKey.throttle(key, Duration.ofMillis((1 + r.nextInt(10)) * 1_000L));
          };
      if (r.nextInt(3) == 0) {
        u = u.debounce();
      }
      double priority = r.nextInt(3) - 1;
      int retries = r.nextInt(3);
      JobOptions o =
          JobOptions.defaults()
              .priority(priority)
              .delay(Duration.ofMillis(delay))
              .retry(retries, Backoff.fixed(Duration.ofMillis(r.nextInt(2) * 1_000L)))
              .unique(u);
      String payload = "u" + pushed++;
      M h = holder(key);
      Throttle t = throttles.get(key);
      String takenBy = h != null ? h.id : t != null && t.until() > now ? t.id() : null;
      PushResult<String> got = queue.offer(payload, o);
      if (takenBy == null) {
        assertThat(got.outcome())
            .as("push of free key %s", key)
            .isEqualTo(PushResult.Outcome.CREATED);
        M m = new M();
        m.id = got.id();
        m.priority = priority;
        m.delayUntil = now + delay;
        m.state = delay > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
        m.retriesLeft = retries;
        m.retryLimit = retries;
        m.backoff = o.retryBackoff().initial().toMillis();
        m.payload = payload;
        m.unique = u;
        model.put(m.id, m);
        if (u.scope() == UniqueKey.Scope.PERIOD) {
          throttles.put(key, new Throttle(m.id, now + u.period().toMillis()));
        } else {
          throttles.remove(key);
        }
        return;
      }
      assertThat(got.id()).as("the holder of %s", key).isEqualTo(takenBy);
      M x = model.get(takenBy);
      boolean waiting =
          x != null && (x.state == JobRecord.State.READY || x.state == JobRecord.State.DELAYED);
      if (u.debounced() && waiting) {
        assertThat(got.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
        x.payload = payload;
        x.delayUntil = now + delay;
        x.state = delay > 0 ? JobRecord.State.DELAYED : JobRecord.State.READY;
      } else {
        assertThat(got.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
      }
      assertThat(got.job().isPresent()).as("the holder's job is returned").isEqualTo(x != null);
    }

    /** Every job's key and hold, and one key entry per holder and per throttle key taken. */
    void checkUnique() {
      long holders = 0;
      for (M m : model.values()) {
        Job<String> j = queue.job(m.id).orElseThrow();
        assertThat(j.unique())
            .as("unique key of %s", m.id)
            .isEqualTo(Optional.ofNullable(m.unique));
        assertThat(j.holdsUniqueKey()).as("%s holds its key", m.id).isEqualTo(holds(m));
        if (holds(m)) {
          holders++;
        }
      }
      assertThat(queue.store.count(queue.keys.uniqueKeys()))
          .as("one key entry per holder and per throttle key")
          .isEqualTo(holders + throttles.size());
    }
  }

  /** A spec of the reference model: its slots by naive arithmetic. */
  record Spec(ScheduleSpec spec, long every, long anchor, int cronStep) {
    /** The first slot after t (epoch ms), walking second by second for a cron spec. */
    long next(long t) {
      if (cronStep == 0) {
        return t < anchor ? anchor : anchor + ((t - anchor) / every + 1) * every;
      }
      long sec = Math.floorDiv(t, 1000) + 1;
      while (Math.floorMod(sec, 60) % cronStep != 0) {
        sec++;
      }
      return sec * 1000;
    }
  }

  /** A definition of the reference model. */
  record Def(
      Spec spec,
      String state,
      double priority,
      int retries,
      MissedRuns missed,
      Overlap overlap,
      long lateness) {
    Schedule<String> schedule(String name) {
      return Schedule.builder(name, spec.spec(), state)
          .options(
              JobOptions.defaults()
                  .priority(priority)
                  .retry(retries, Backoff.fixed(Duration.ofSeconds(1))))
          .missed(missed)
          .overlap(overlap)
          .lateness(Duration.ofMillis(lateness))
          .build();
    }
  }

  /** A schedule of the reference model. */
  static final class MS {
    String name;
    Def def;
    boolean paused;
    long nextDue = -1;
    long lastSlot = -1;
    String lastJobId;
  }

  /** The schedules of the reference model, by name. */
  static final class ScheduleModel {
    final Map<String, MS> byName = new java.util.TreeMap<>();

    Def randomDef(SplittableRandom r, long now) {
      java.time.Instant t0 = java.time.Instant.parse("2026-01-01T00:00:00Z");
      Spec spec =
          switch (r.nextInt(3)) {
            case 0 ->
                new Spec(
                    ScheduleSpec.fixedRate(Duration.ofMillis(1_500), t0.plusMillis(250)),
                    1_500,
                    t0.toEpochMilli() + 250,
                    0);
            case 1 ->
                new Spec(
                    ScheduleSpec.fixedRate(Duration.ofSeconds(3), t0), 3_000, t0.toEpochMilli(), 0);
            default ->
                new Spec(ScheduleSpec.cron("*/7 * * * * *", java.time.ZoneOffset.UTC), 0, 0, 7);
          };
      MissedRuns missed =
          switch (r.nextInt(3)) {
            case 0 -> MissedRuns.runOnce();
            case 1 -> MissedRuns.skip();
            default -> MissedRuns.runEach(1 + r.nextInt(4));
          };
      return new Def(
          spec,
          "st" + r.nextInt(2),
          r.nextInt(2),
          r.nextInt(2),
          missed,
          r.nextBoolean() ? Overlap.ALLOW : Overlap.SKIP,
          new long[] {500, 2_000, 60_000}[r.nextInt(3)]);
    }
  }
}
