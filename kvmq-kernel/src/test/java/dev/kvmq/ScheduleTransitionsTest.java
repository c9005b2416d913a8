package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The schedules' transitions as pure functions ({@link ScheduleTransitions}): the firing for every
 * missed-run policy, overlap, lateness, slot boundaries and specs with no slot left; define, pause,
 * resume, trigger, delete, repair. No store, no clock.
 */
class ScheduleTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final long MINUTE = 60_000;
  final AtomicInteger idCount = new AtomicInteger();
  final Supplier<String> ids = () -> Ulid.format(T0.toEpochMilli(), 0, idCount.incrementAndGet());

  /** Every minute from T0, with the given policies. */
  static Schedule.Builder<String> everyMinute() {
    return Schedule.builder("s", ScheduleSpec.fixedRate(Duration.ofMinutes(1), T0), "state");
  }

  ScheduleRecord record(Schedule<String> s, long nextDue) {
    return ScheduleRecord.of(s, Codecs.utf8().encode(s.state()), false, nextDue, -1, null);
  }

  ScheduleTransitions.Stored stored(ScheduleRecord r) {
    return new ScheduleTransitions.Stored(r, 42);
  }

  ScheduleTransitions.Fired fire(ScheduleRecord r, long now) {
    return fire(r, ScheduleTransitions.Previous.NONE, now);
  }

  ScheduleTransitions.Fired fire(ScheduleRecord r, ScheduleTransitions.Previous prev, long now) {
    Optional<ScheduleTransitions.Fired> f =
        ScheduleTransitions.fire(keys, stored(r), prev, now, ids);
    assertThat(f).as("due at %s", Instant.ofEpochMilli(now)).isPresent();
    return f.get();
  }

  static List<Long> slots(ScheduleTransitions.Fired f) {
    return f.pushed().stream().map(j -> j.slot).toList();
  }

  long at(int minutes) {
    return T0.toEpochMilli() + minutes * MINUTE;
  }

  @Test
  void anOnTimeSlotPushesOneReadyJobAndAdvancesToTheNextSlot() {
    ScheduleRecord r = record(everyMinute().build(), at(1));
    ScheduleTransitions.Fired f = fire(r, at(1) + 5_000);
    assertThat(slots(f)).containsExactly(at(1));
    JobRecord job = f.pushed().get(0);
    assertThat(job.state).isEqualTo(JobRecord.State.READY);
    assertThat(job.schedule).isEqualTo("s");
    assertThat(job.delayUntil).isEqualTo(at(1) + 5_000);
    assertThat(new String(job.payload, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("state");
    assertThat(f.after().nextDue).isEqualTo(at(2));
    assertThat(f.after().lastSlot).isEqualTo(at(1));
    assertThat(f.after().lastJobId).isEqualTo(job.id);
    AtomicOperation op = f.operation();
    assertThat(op.checks())
        .extracting(AtomicOperation.Check::key, AtomicOperation.Check::versionstamp)
        .contains(org.assertj.core.groups.Tuple.tuple(keys.schedule("s"), 42L));
    assertThat(op.checks()).anySatisfy(c -> assertThat(c.key()).isEqualTo(keys.job(job.id)));
    List<Key> deleted =
        op.mutations().stream().filter(m -> m.isDelete()).map(m -> m.key()).toList();
    assertThat(deleted).containsExactly(keys.due(at(1), "s"));
    assertThat(op.mutations()).anySatisfy(m -> assertThat(m.key()).isEqualTo(keys.due(at(2), "s")));
  }

  @Test
  void notDueBeforeItsSlotNorWhenPausedNorWithNoSlotLeft() {
    ScheduleRecord r = record(everyMinute().build(), at(1));
    assertThat(
            ScheduleTransitions.fire(
                keys, stored(r), ScheduleTransitions.Previous.NONE, at(1) - 1, ids))
        .isEmpty();
    assertThat(
            ScheduleTransitions.fire(
                keys,
                stored(r.with(true, -1, -1, null)),
                ScheduleTransitions.Previous.NONE,
                at(5),
                ids))
        .isEmpty();
    assertThat(
            ScheduleTransitions.fire(
                keys,
                stored(r.with(false, -1, -1, null)),
                ScheduleTransitions.Previous.NONE,
                at(5),
                ids))
        .isEmpty();
    // exactly at the slot: due
    assertThat(slots(fire(r, at(1)))).containsExactly(at(1));
  }

  @Test
  void lateByMoreThanTheLatenessIsMissed() {
    Schedule<String> s =
        everyMinute().missed(MissedRuns.skip()).lateness(Duration.ofSeconds(10)).build();
    ScheduleRecord r = record(s, at(1));
    assertThat(slots(fire(r, at(1) + 10_000))).as("10 s late: on time").containsExactly(at(1));
    ScheduleTransitions.Fired late = fire(r, at(1) + 10_001);
    assertThat(late.pushed()).as("10.001 s late: missed, skipped").isEmpty();
    assertThat(late.after().nextDue).isEqualTo(at(2));
    assertThat(late.after().lastJobId).isNull();
  }

  @Test
  void runOnceMakesOneJobForEveryDueSlotWithTheLatestAsItsSlot() {
    ScheduleRecord r = record(everyMinute().build(), at(1));
    ScheduleTransitions.Fired f = fire(r, at(10) + 30_000);
    assertThat(slots(f)).containsExactly(at(10));
    assertThat(f.due()).isEqualTo(1);
    assertThat(f.after().nextDue).isEqualTo(at(11));
  }

  @Test
  void skipMakesAJobForTheLatestSlotOnlyIfItIsOnTime() {
    ScheduleRecord r = record(everyMinute().missed(MissedRuns.skip()).build(), at(1));
    assertThat(slots(fire(r, at(10) + 30_000))).as("latest on time").containsExactly(at(10));
    Schedule<String> tight =
        everyMinute().missed(MissedRuns.skip()).lateness(Duration.ofSeconds(1)).build();
    assertThat(fire(record(tight, at(1)), at(10) + 30_000).pushed()).isEmpty();
  }

  @Test
  void runEachMakesOneJobPerDueSlotTheLatestLimitOfThem() {
    ScheduleRecord r = record(everyMinute().missed(MissedRuns.runEach(3)).build(), at(1));
    assertThat(slots(fire(r, at(10)))).containsExactly(at(8), at(9), at(10));
    assertThat(slots(fire(r, at(2) + 1))).containsExactly(at(1), at(2));
    ScheduleTransitions.Fired f = fire(r, at(10));
    assertThat(f.pushed()).extracting(j -> j.id).doesNotHaveDuplicates();
    assertThat(f.after().lastSlot).isEqualTo(at(10));
    assertThat(f.after().lastJobId).isEqualTo(f.pushed().get(2).id);
  }

  @Test
  void overlapSkipPushesNothingWhileThePreviousJobIsPendingButAdvances() {
    Schedule<String> s = everyMinute().overlap(Overlap.SKIP).build();
    String prevId = Ulid.format(T0.toEpochMilli(), 9, 9);
    ScheduleRecord r = record(s, at(2)).with(false, at(2), at(1), prevId);
    JobRecord running =
        Transitions.push(keys, prevId, new byte[0], JobOptions.defaults(), at(1)).record();
    ScheduleTransitions.Fired blocked =
        fire(r, new ScheduleTransitions.Previous(running, 7), at(2));
    assertThat(blocked.pushed()).isEmpty();
    assertThat(blocked.after().nextDue).isEqualTo(at(3));
    assertThat(blocked.after().lastJobId).isEqualTo(prevId);
    assertThat(blocked.operation().checks())
        .contains(new AtomicOperation.Check(keys.job(prevId), 7));
    // gone (completed): the check is its absence, and the slot runs
    ScheduleTransitions.Fired free = fire(r, ScheduleTransitions.Previous.NONE, at(2));
    assertThat(slots(free)).containsExactly(at(2));
    assertThat(free.operation().checks())
        .contains(new AtomicOperation.Check(keys.job(prevId), AtomicOperation.ABSENT));
    // dead: not pending either
    JobRecord dead = running.draft().state(JobRecord.State.DEAD).build();
    assertThat(slots(fire(r, new ScheduleTransitions.Previous(dead, 8), at(2))))
        .containsExactly(at(2));
    // cancelled (kept in the history): it has ended, so the slot runs
    JobRecord cancelled = running.draft().state(JobRecord.State.CANCELLED).build();
    assertThat(slots(fire(r, new ScheduleTransitions.Previous(cancelled, 9), at(2))))
        .containsExactly(at(2));
    // overlap allowed: no check of the previous job at all
    ScheduleRecord allow = record(everyMinute().build(), at(2)).with(false, at(2), at(1), prevId);
    assertThat(
            fire(allow, new ScheduleTransitions.Previous(running, 7), at(2)).operation().checks())
        .noneSatisfy(c -> assertThat(c.key()).isEqualTo(keys.job(prevId)));
  }

  @Test
  void aSpecWithNoSlotLeftFiresItsLastSlotAndThenHasNoDueTime() {
    ZoneId utc = ZoneId.of("UTC");
    // a fixed rate whose next slot is beyond the year 9999, the last time a queue keeps
    Schedule<String> s =
        Schedule.builder("last", ScheduleSpec.fixedRate(Duration.ofDays(365L * 9000), T0), "x")
            .build();
    ScheduleTransitions.Fired f = fire(record(s, T0.toEpochMilli()), T0.toEpochMilli());
    assertThat(slots(f)).containsExactly(T0.toEpochMilli());
    assertThat(f.after().nextDue).isEqualTo(-1);
    assertThat(f.operation().mutations())
        .noneSatisfy(
            m -> assertThat(m.key().startsWith(keys.dueIndex()) && !m.isDelete()).isTrue());
    // define: no slot after now is an error, nothing planned
    Schedule<String> never =
        Schedule.builder("n", ScheduleSpec.cron("0 0 30 2 *", utc), "x").build();
    assertThatThrownBy(
            () -> ScheduleTransitions.define(keys, record(never, -1), null, T0.toEpochMilli()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no slot after")
        .hasMessageContaining("before the year 10000");
    // a fixed rate whose next slot is after the year 9999 has a slot: the message says which
    Schedule<String> far =
        Schedule.builder("far", ScheduleSpec.fixedRate(Duration.ofDays(365L * 9000), T0), "x")
            .build();
    assertThatThrownBy(
            () -> ScheduleTransitions.define(keys, record(far, -1), null, T0.toEpochMilli()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has no slot after " + T0 + " before the year 10000");
  }

  @Test
  void anEverySecondScheduleMissedForYearsFiresWithBoundedWork() {
    Schedule<String> cron =
        Schedule.builder("busy", ScheduleSpec.cron("* * * * * *", ZoneId.of("UTC")), "x")
            .missed(MissedRuns.runEach(MissedRuns.MAX_LIMIT))
            .build();
    long now = Instant.parse("2031-06-01T12:00:00.500Z").toEpochMilli();
    long start = System.nanoTime();
    ScheduleTransitions.Fired f = fire(record(cron, T0.toEpochMilli() + 1_000), now);
    long took = System.nanoTime() - start;
    assertThat(f.pushed()).hasSize(MissedRuns.MAX_LIMIT);
    assertThat(f.pushed().get(MissedRuns.MAX_LIMIT - 1).slot).isEqualTo(now - 500);
    assertThat(f.pushed().get(0).slot).isEqualTo(now - 500 - (MissedRuns.MAX_LIMIT - 1) * 1_000L);
    assertThat(f.after().nextDue).isEqualTo(now + 500);
    assertThat(took).as("nanoseconds for one firing").isLessThan(Duration.ofSeconds(5).toNanos());
    // run once: one job, the latest slot
    Schedule<String> once =
        Schedule.builder("busy", ScheduleSpec.cron("* * * * * *", ZoneId.of("UTC")), "x").build();
    assertThat(slots(fire(record(once, T0.toEpochMilli() + 1_000), now)))
        .containsExactly(now - 500);
  }

  @Test
  void latestDueSlotsOfASparseAndDenseCronAreTheLastOnesBeforeNow() {
    // dense once a year: every second of Jan 1; sparse otherwise
    ScheduleSpec spec = ScheduleSpec.cron("* * * 1 1 *", ZoneId.of("UTC"));
    Instant first = Instant.parse("2026-01-01T00:00:00Z");
    Instant upTo = Instant.parse("2028-03-01T00:00:00Z");
    List<Instant> latest = ScheduleTransitions.latestDue(spec, first, upTo, 5);
    assertThat(latest)
        .containsExactly(
            Instant.parse("2028-01-01T23:59:55Z"),
            Instant.parse("2028-01-01T23:59:56Z"),
            Instant.parse("2028-01-01T23:59:57Z"),
            Instant.parse("2028-01-01T23:59:58Z"),
            Instant.parse("2028-01-01T23:59:59Z"));
    // the first slot counts when nothing later is due
    assertThat(ScheduleTransitions.latestDue(spec, first, first.plusMillis(999), 3))
        .containsExactly(first);
  }

  @Test
  void defineCreatesReplacesOrLeavesUnchanged() {
    Schedule<String> s = everyMinute().build();
    ScheduleRecord wanted = record(s, -1);
    ScheduleTransitions.Definition created =
        ScheduleTransitions.define(keys, wanted, null, at(0) + 1);
    assertThat(created.outcome()).isEqualTo(Schedules.Defined.CREATED);
    assertThat(created.after().nextDue).isEqualTo(at(1));
    assertThat(created.operation().orElseThrow().checks())
        .containsExactly(new AtomicOperation.Check(keys.schedule("s"), AtomicOperation.ABSENT));
    ScheduleRecord stored = created.after().with(true, -1, at(0), "J");
    ScheduleTransitions.Definition same =
        ScheduleTransitions.define(keys, wanted, new ScheduleTransitions.Stored(stored, 5), at(3));
    assertThat(same.outcome()).isEqualTo(Schedules.Defined.UNCHANGED);
    assertThat(same.operation()).isEmpty();
    ScheduleRecord changed = record(everyMinute().overlap(Overlap.SKIP).build(), -1);
    ScheduleTransitions.Definition replaced =
        ScheduleTransitions.define(keys, changed, new ScheduleTransitions.Stored(stored, 5), at(3));
    assertThat(replaced.outcome()).isEqualTo(Schedules.Defined.REPLACED);
    assertThat(replaced.after().paused).as("stays paused").isTrue();
    assertThat(replaced.after().lastJobId).isEqualTo("J");
    assertThat(replaced.operation().orElseThrow().checks())
        .containsExactly(new AtomicOperation.Check(keys.schedule("s"), 5));
    // an unreadable old record is replaced as a new one
    ScheduleTransitions.Definition overCorrupt =
        ScheduleTransitions.define(keys, changed, new ScheduleTransitions.Stored(null, 6), at(3));
    assertThat(overCorrupt.outcome()).isEqualTo(Schedules.Defined.REPLACED);
    assertThat(overCorrupt.after().nextDue).isEqualTo(at(4));
  }

  @Test
  void pauseResumeTriggerDeleteAndRepair() {
    ScheduleRecord r = record(everyMinute().build(), at(1));
    AtomicOperation pause = ScheduleTransitions.pause(keys, stored(r)).orElseThrow();
    assertThat(pause.mutations())
        .anySatisfy(
            m -> {
              assertThat(m.key()).isEqualTo(keys.due(at(1), "s"));
              assertThat(m.isDelete()).isTrue();
            });
    ScheduleRecord paused = r.with(true, -1, -1, null);
    assertThat(ScheduleTransitions.pause(keys, stored(paused))).isEmpty();
    assertThat(ScheduleTransitions.resume(keys, stored(r), at(5))).isEmpty();
    AtomicOperation resume =
        ScheduleTransitions.resume(keys, stored(paused), at(5) + 1).orElseThrow();
    assertThat(resume.mutations())
        .anySatisfy(m -> assertThat(m.key()).isEqualTo(keys.due(at(6), "s")));

    ScheduleTransitions.Fired trig =
        ScheduleTransitions.trigger(keys, stored(paused), at(7) + 3, "J1");
    assertThat(slots(trig)).containsExactly(at(7) + 3);
    assertThat(trig.after().paused).isTrue();
    assertThat(trig.after().lastJobId).isEqualTo("J1");
    assertThat(trig.operation().mutations())
        .noneSatisfy(m -> assertThat(m.key().startsWith(keys.dueIndex())).isTrue());

    AtomicOperation delete = ScheduleTransitions.delete(keys, "s", stored(r));
    assertThat(delete.mutations())
        .extracting(m -> m.key())
        .containsExactly(keys.schedule("s"), keys.due(at(1), "s"));

    assertThat(ScheduleTransitions.repair(keys, keys.due(at(1), "s"), "s", r, 42)).isEmpty();
    assertThat(ScheduleTransitions.repair(keys, keys.due(at(9), "s"), "s", r, 42)).isPresent();
    assertThat(
            ScheduleTransitions.repair(
                keys, keys.due(at(1), "s"), "s", null, AtomicOperation.ABSENT))
        .isPresent();
    assertThat(ScheduleTransitions.repair(keys, keys.due(at(1), "s"), "s", paused, 42)).isPresent();
  }

  @Test
  void theRecordRoundTripsAndGarbageIsUnreadable() {
    Schedule<String> s =
        Schedule.builder(
                "r é", ScheduleSpec.cron("30 2 * * MON-FRI", ZoneId.of("Europe/Paris")), "st")
            .options(
                JobOptions.defaults().priority(2.5).retry(3, Backoff.fixed(Duration.ofSeconds(4))))
            .missed(MissedRuns.runEach(7))
            .overlap(Overlap.SKIP)
            .lateness(Duration.ofSeconds(90, 5))
            .build();
    ScheduleRecord r = record(s, at(3)).with(true, -1, at(2), "JOB");
    ScheduleRecord back = ScheduleRecord.decode(r.encode());
    assertThat(back.schedule(Codecs.utf8())).isEqualTo(s);
    assertThat(back.sameDefinition(r)).isTrue();
    assertThat(back.paused).isTrue();
    assertThat(back.nextDue).isEqualTo(-1);
    assertThat(back.lastSlot).isEqualTo(at(2));
    assertThat(back.lastJobId).isEqualTo("JOB");
    assertThatThrownBy(() -> ScheduleRecord.decode(new byte[] {9, 1, 2}))
        .isInstanceOf(ScheduleRecord.Unreadable.class);
    byte[] cut = java.util.Arrays.copyOf(r.encode(), 20);
    assertThatThrownBy(() -> ScheduleRecord.decode(cut))
        .isInstanceOf(ScheduleRecord.Unreadable.class);
  }
}
