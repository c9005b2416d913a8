package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The rules of group rate limits and group pauses as pure functions (docs/flow-control.md, "Rate
 * limits"): a claim's group slot and pause check, the block of a full group, its wake, and a
 * handler's pause of its group. No store, no clock.
 */
class GroupRateTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String id = Ulid.format(t0, 1, 2);
  final String id2 = Ulid.format(t0, 1, 3);

  JobRecord ready(String jobId, String group) {
    GroupBook book = GroupBook.of(keys, g -> Queue.UNLIMITED, Map.of(group, read(group, 0, 0, 0)));
    return Transitions.pushInto(
        AtomicOperation.builder(),
        keys,
        jobId,
        new byte[] {1},
        JobOptions.defaults().group(group),
        t0,
        Map.of(),
        book,
        false);
  }

  static GroupBook.Read read(String group, int admitted, int parked, long blockedUntil) {
    return new GroupBook.Read(
        group,
        new GroupBook.Counts(admitted, parked, blockedUntil),
        admitted + parked + blockedUntil == 0 ? AtomicOperation.ABSENT : 7,
        List.of());
  }

  GroupBook book(GroupBook.Read r) {
    return GroupBook.of(keys, g -> Queue.UNLIMITED, Map.of(r.group(), r));
  }

  static Set<Key> written(AtomicOperation op) {
    return op.mutations().stream()
        .filter(m -> !m.isDelete())
        .map(AtomicOperation.Mutation::key)
        .collect(Collectors.toSet());
  }

  static Set<Key> deleted(AtomicOperation op) {
    return op.mutations().stream()
        .filter(AtomicOperation.Mutation::isDelete)
        .map(AtomicOperation.Mutation::key)
        .collect(Collectors.toSet());
  }

  static Optional<AtomicOperation.Check> check(AtomicOperation op, Key key) {
    return op.checks().stream().filter(c -> c.key().equals(key)).findFirst();
  }

  @Test
  void aClaimOfAJobOfAGroupChecksItsPauseAbsentAndTakesItsGroupsSlot() {
    JobRecord r = ready(id, "g");
    Transitions.RateSlot slot = new Transitions.RateSlot(1, t0 - 5_000, 42);
    AtomicOperation op =
        ((Transitions.Applied)
                Transitions.claim(
                    keys,
                    new Transitions.Read(r, 3),
                    t0,
                    5_000,
                    "n",
                    AtomicOperation.ABSENT,
                    null,
                    slot))
            .operation();
    assertThat(check(op, keys.groupPaused("g")))
        .hasValueSatisfying(c -> assertThat(c.expectsAbsent()).isTrue());
    QueueKeys.RateWindow w = keys.rateWindow("g");
    assertThat(check(op, w.slot(1)))
        .hasValueSatisfying(c -> assertThat(c.versionstamp()).isEqualTo(42));
    assertThat(written(op)).contains(w.slot(1), w.taken(t0, 1));
    assertThat(deleted(op)).contains(w.taken(t0 - 5_000, 1));
    assertThat(written(op)).doesNotContain(keys.rateSlot(1)).as("not the queue's window");

    AtomicOperation plain =
        ((Transitions.Applied)
                Transitions.claim(
                    keys, new Transitions.Read(r, 3), t0, 5_000, "n", AtomicOperation.ABSENT, null))
            .operation();
    assertThat(check(plain, keys.groupPaused("g")))
        .as("a claim of a grouped job, no group rate")
        .isPresent();

    JobRecord none = Transitions.push(keys, id2, new byte[0], JobOptions.defaults(), t0).record();
    assertThatThrownBy(
            () ->
                Transitions.claim(
                    keys,
                    new Transitions.Read(none, 1),
                    t0,
                    5_000,
                    "n",
                    AtomicOperation.ABSENT,
                    null,
                    slot))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aBlockParksTheReadyJobsOfTheGroupAndBlocksItsAdmissionsUntilItsTime() {
    JobRecord a = ready(id, "g");
    JobRecord b = ready(id2, "g");
    GroupBook g = book(read("g", 2, 0, 0));
    Transitions.Applied p =
        (Transitions.Applied)
            Transitions.block(
                keys,
                List.of(new Transitions.Read(a, 1), new Transitions.Read(b, 2)),
                "g",
                t0 + 1_000,
                g);
    AtomicOperation op = p.operation();
    JobRecord.Draft parked = a.draft();
    parked.parked = true;
    assertThat(written(op))
        .contains(keys.indexOf(parked.build()), keys.group("g"), keys.groupWaking(t0 + 1_000, "g"));
    assertThat(deleted(op)).contains(keys.indexOf(a), keys.indexOf(b));
    assertThat(check(op, keys.job(id)))
        .hasValueSatisfying(c -> assertThat(c.versionstamp()).isEqualTo(1));
    assertThat(check(op, keys.group("g"))).isPresent();
    byte[] record =
        op.mutations().stream()
            .filter(m -> m.key().equals(keys.group("g")))
            .findFirst()
            .orElseThrow()
            .value();
    assertThat(GroupBook.Counts.decode(record)).isEqualTo(new GroupBook.Counts(0, 2, t0 + 1_000));

    // a later block keeps the later time and moves the wake-up entry
    GroupBook again = book(read("g", 1, 2, t0 + 1_000));
    JobRecord c = ready(Ulid.format(t0, 1, 4), "g");
    AtomicOperation later =
        ((Transitions.Applied)
                Transitions.block(
                    keys, List.of(new Transitions.Read(c, 1)), "g", t0 + 5_000, again))
            .operation();
    assertThat(deleted(later)).contains(keys.groupWaking(t0 + 1_000, "g"));
    assertThat(written(later)).contains(keys.groupWaking(t0 + 5_000, "g"));

    // nothing to block: refused
    assertThat(Transitions.block(keys, List.of(), "g", t0, book(read("g", 1, 0, 0))))
        .isInstanceOf(Transitions.Refused.class);
  }

  @Test
  void aBlockedGroupParksEveryJobThatWouldBeAdmitted() {
    GroupBook g = book(read("g", 0, 0, t0 + 1_000));
    JobRecord r =
        Transitions.pushInto(
            AtomicOperation.builder(),
            keys,
            id,
            new byte[0],
            JobOptions.defaults().group("g"),
            t0,
            Map.of(),
            g,
            false);
    assertThat(r.parked).as("a free slot, none parked, but blocked").isTrue();
  }

  @Test
  void aWakeUnblocksTheGroupAdmitsItsHeadsAndRemovesAnEndedPause() {
    JobRecord.Draft d = ready(id, "g").draft();
    d.parked = true;
    JobRecord head = d.build();
    GroupBook.Read r =
        new GroupBook.Read(
            "g", new GroupBook.Counts(0, 1, t0), 9, List.of(new Transitions.Read(head, 4)));
    AtomicOperation op =
        ((Transitions.Applied)
                Transitions.wake(keys, "g", t0, t0, 11, GroupBook.of(keys, x -> 1, Map.of("g", r))))
            .operation();
    assertThat(deleted(op)).contains(keys.groupWaking(t0, "g"), keys.groupPaused("g"));
    assertThat(deleted(op)).contains(keys.indexOf(head));
    assertThat(written(op)).contains(keys.readyIndex().append(QueueKeys.rank(0), id));
    assertThat(check(op, keys.groupPaused("g")))
        .hasValueSatisfying(c -> assertThat(c.versionstamp()).isEqualTo(11));

    // not yet time: refused
    assertThat(
            Transitions.wake(
                keys,
                "g",
                t0 - 1,
                0,
                AtomicOperation.ABSENT,
                GroupBook.of(keys, x -> 1, Map.of("g", r))))
        .isInstanceOf(Transitions.Refused.class);
  }

  @Test
  void aPauseOfTheGroupDefersTheJobAndWritesTheLaterEnd() {
    JobRecord r = ready(id, "g");
    JobRecord leased =
        ((Transitions.Applied) Transitions.claim(keys, new Transitions.Read(r, 1), t0, 5_000))
            .record();
    Transitions.Holding h = new Transitions.Holding(leased, 2, leased.token);
    Transitions.Applied p =
        (Transitions.Applied)
            Transitions.defer(
                keys,
                h,
                null,
                new Transitions.Pause(t0 + 3_000, t0 + 1_000, 5),
                book(read("g", 1, 0, 0)));
    assertThat(p.record().state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(p.record().delayUntil).isEqualTo(t0 + 3_000);
    assertThat(p.record().attempt).as("not counted").isEqualTo(leased.attempt - 1);
    assertThat(p.record().retriesLeft).isEqualTo(leased.retriesLeft);
    AtomicOperation op = p.operation();
    assertThat(check(op, keys.groupPaused("g")))
        .hasValueSatisfying(c -> assertThat(c.versionstamp()).isEqualTo(5));
    assertThat(
            Transitions.decodeTime(
                op.mutations().stream()
                    .filter(m -> m.key().equals(keys.groupPaused("g")))
                    .findFirst()
                    .orElseThrow()
                    .value()))
        .isEqualTo(t0 + 3_000);
    assertThat(written(op)).contains(keys.groupWaking(t0 + 3_000, "g"));
    assertThat(check(op, keys.startsPaused())).as("the queue's pause is not touched").isEmpty();

    // a stored pause that ends later stays as it is (checked, not rewritten)
    AtomicOperation kept =
        ((Transitions.Applied)
                Transitions.defer(
                    keys,
                    h,
                    null,
                    new Transitions.Pause(t0 + 3_000, t0 + 9_000, 5),
                    book(read("g", 1, 0, 0))))
            .operation();
    assertThat(written(kept)).doesNotContain(keys.groupPaused("g"));
    assertThat(check(kept, keys.groupPaused("g"))).isPresent();

    assertThat(
            Transitions.defer(
                keys,
                new Transitions.Holding(leased, 2, leased.token + 1),
                null,
                new Transitions.Pause(t0 + 3_000, 0, AtomicOperation.ABSENT),
                book(read("g", 1, 0, 0))))
        .isInstanceOf(Transitions.Refused.class);
  }
}
