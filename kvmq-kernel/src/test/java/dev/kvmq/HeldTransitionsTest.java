package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The held-job transitions as pure functions: hold, release, drop, and the timeout policy. */
class HeldTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String a = Ulid.format(t0, 1, 2);
  final String b = Ulid.format(t0 + 10, 3, 4);

  JobRecord held(String id, JobOptions o, long now) {
    return Transitions.holdInto(
        AtomicOperation.builder(), keys, id, new byte[] {7}, o, now, Map.of());
  }

  static Transitions.Read read(JobRecord r, long versionstamp) {
    return new Transitions.Read(r, versionstamp);
  }

  static List<Key> written(AtomicOperation op) {
    return op.mutations().stream().filter(m -> !m.isDelete()).map(m -> m.key()).toList();
  }

  static List<Key> deleted(AtomicOperation op) {
    return op.mutations().stream().filter(m -> m.isDelete()).map(m -> m.key()).toList();
  }

  @Test
  void holdWritesANewJobInTheHeldIndexOnlyAtItsCreationTime() {
    AtomicOperation.Builder op = AtomicOperation.builder();
    JobRecord r =
        Transitions.holdInto(
            op, keys, a, new byte[] {7}, JobOptions.defaults().priority(3), t0, Map.of());
    assertThat(r.state).isEqualTo(JobRecord.State.HELD);
    assertThat(r.statusAt(t0)).isEqualTo(JobStatus.HELD);
    assertThat(r.statusAt(t0 + 1_000_000)).as("held until released").isEqualTo(JobStatus.HELD);
    AtomicOperation built = op.build();
    assertThat(built.checks())
        .singleElement()
        .satisfies(c -> assertThat(c.expectsAbsent()).isTrue());
    assertThat(written(built)).containsExactly(keys.job(a), keys.held(t0, a));
    assertThat(keys.indexOf(r)).isEqualTo(keys.held(t0, a));
    assertThat(JobRecord.decode(r.encode()).state).isEqualTo(JobRecord.State.HELD);
  }

  @Test
  void releaseMovesEveryHeldJobOfTheTransactionInOneOperation() {
    JobRecord ready = held(a, JobOptions.defaults(), t0);
    JobRecord delayed = held(b, JobOptions.defaults().delay(Duration.ofSeconds(5)), t0 + 10);
    Transitions.HeldMove move =
        Transitions.releaseHeld(keys, List.of(read(ready, 4), read(delayed, 5)), t0 + 100);
    assertThat(move.moved())
        .extracting(r -> r.state)
        .containsExactly(JobRecord.State.READY, JobRecord.State.DELAYED);
    assertThat(move.operation().checks())
        .extracting(c -> c.key(), c -> c.versionstamp())
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(keys.job(a), 4L),
            org.assertj.core.groups.Tuple.tuple(keys.job(b), 5L));
    assertThat(deleted(move.operation())).containsExactly(keys.held(t0, a), keys.held(t0 + 10, b));
    assertThat(written(move.operation()))
        .contains(keys.indexOf(move.moved().get(0)), keys.indexOf(move.moved().get(1)));
    assertThat(move.moved().get(1).delayUntil)
        .as("the delay counts from the push")
        .isEqualTo(t0 + 5_010);
    JobRecord late =
        Transitions.releaseHeld(keys, List.of(read(delayed, 5)), t0 + 6_000).moved().get(0);
    assertThat(late.state).as("a delay that passed while held").isEqualTo(JobRecord.State.READY);
  }

  @Test
  void releaseAndDropLeaveOutJobsThatAreNotHeld() {
    JobRecord ready = Transitions.push(keys, a, new byte[0], JobOptions.defaults(), t0).record();
    Transitions.HeldMove release = Transitions.releaseHeld(keys, List.of(read(ready, 1)), t0);
    assertThat(release.moved()).isEmpty();
    assertThat(release.operation().mutations()).isEmpty();
    Transitions.HeldMove drop = Transitions.dropHeld(keys, List.of(read(ready, 1)));
    assertThat(drop.moved()).as("a released job is not removed by a late rollback").isEmpty();
    assertThat(drop.operation().mutations()).isEmpty();
  }

  @Test
  void dropRemovesTheRecordAndItsHeldEntry() {
    JobRecord r = held(a, JobOptions.defaults(), t0);
    Transitions.HeldMove drop = Transitions.dropHeld(keys, List.of(read(r, 9)));
    assertThat(drop.moved()).containsExactly(r);
    assertThat(drop.operation().checks())
        .singleElement()
        .satisfies(c -> assertThat(c.versionstamp()).isEqualTo(9));
    assertThat(deleted(drop.operation())).containsExactly(keys.job(a), keys.held(t0, a));
    assertThat(written(drop.operation())).isEmpty();
  }

  @Test
  void theTimeoutReleasesOnlyJobsHeldForTheTimeoutOrLonger() {
    JobRecord old = held(a, JobOptions.defaults(), t0);
    JobRecord young = held(b, JobOptions.defaults(), t0 + 10);
    List<Transitions.Read> both = List.of(read(old, 1), read(young, 2));
    assertThat(Transitions.resolveHeld(keys, both, t0 + 999, 1_000).moved()).isEmpty();
    assertThat(Transitions.resolveHeld(keys, both, t0 + 1_000, 1_000).moved())
        .extracting(r -> r.id)
        .containsExactly(a);
    assertThat(Transitions.resolveHeld(keys, both, t0 + 1_010, 1_000).moved())
        .extracting(r -> r.id)
        .containsExactly(a, b);
  }

  @Test
  void theHeldKeysOrderByHoldTimeAndTheDueRangeEndsAtItsBound() {
    assertThat(keys.heldUntil(t0).contains(keys.held(t0, a))).isTrue();
    assertThat(keys.heldUntil(t0 - 1).contains(keys.held(t0, a))).isFalse();
    assertThat(keys.held().contains(keys.held(t0 + 10, b))).isTrue();
    assertThat(QueueKeys.timeOf(keys.held(t0, a))).isEqualTo(t0);
    assertThat(QueueKeys.idOf(keys.held(t0, a))).isEqualTo(a);
  }
}
