package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each transition as a pure function: its plan, its refusals. No store, no clock. */
class TransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String id = Ulid.format(t0, 1, 2);
  final String nextId = Ulid.format(t0 + 5, 3, 4);

  static Transitions.Read read(JobRecord r, long versionstamp) {
    return new Transitions.Read(r, versionstamp);
  }

  static Transitions.Holding hold(JobRecord r, long versionstamp, long token) {
    return new Transitions.Holding(r, versionstamp, token);
  }

  /** The plan's operation and record, or a failure if it was refused. */
  static Transitions.Applied applied(Transitions.Plan p) {
    assertThat(p).isInstanceOf(Transitions.Applied.class);
    return (Transitions.Applied) p;
  }

  static JobRecord after(Transitions.Plan p) {
    return applied(p).record();
  }

  static Transitions.Refusal refusal(Transitions.Plan p) {
    assertThat(p).isInstanceOf(Transitions.Refused.class);
    return ((Transitions.Refused) p).refusal();
  }

  JobRecord pushed(JobOptions o) {
    return Transitions.push(keys, id, new byte[] {1}, o, t0).record();
  }

  JobRecord claimed(JobOptions o) {
    return after(Transitions.claim(keys, read(pushed(o), 1), t0, 5_000));
  }

  @Test
  void pushIsReadyOrDelayedAndChecksTheIdIsNew() {
    JobRecord ready = pushed(JobOptions.defaults());
    assertThat(ready.state).isEqualTo(JobRecord.State.READY);
    JobRecord delayed = pushed(JobOptions.defaults().delay(Duration.ofSeconds(1)));
    assertThat(delayed.state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(delayed.delayUntil).isEqualTo(t0 + 1_000);
    AtomicOperation op =
        Transitions.push(keys, id, new byte[0], JobOptions.defaults(), t0).operation();
    assertThat(op.checks()).singleElement().satisfies(c -> assertThat(c.expectsAbsent()).isTrue());
    assertThat(op.mutations()).hasSize(2);
    JobRecord past = pushed(JobOptions.defaults().delayUntil(Instant.ofEpochMilli(t0 - 1)));
    assertThat(past.state).isEqualTo(JobRecord.State.READY);
  }

  @Test
  void promoteOnlyWhenDue() {
    JobRecord delayed = pushed(JobOptions.defaults().delay(Duration.ofSeconds(1)));
    assertThat(refusal(Transitions.promote(keys, read(delayed, 1), t0 + 999)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    assertThat(after(Transitions.promote(keys, read(delayed, 1), t0 + 1_000)).state)
        .isEqualTo(JobRecord.State.READY);
  }

  @Test
  void claimGrowsTokenAndAttemptAndMovesTheIndex() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(r.state).isEqualTo(JobRecord.State.LEASED);
    assertThat(r.token).isEqualTo(1);
    assertThat(r.attempt).isEqualTo(1);
    assertThat(r.leaseUntil).isEqualTo(t0 + 5_000);
    assertThat(refusal(Transitions.claim(keys, read(r, 2), t0, 5_000)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    JobRecord back = after(Transitions.reclaim(keys, read(r, 2), t0 + 5_000));
    JobRecord again = after(Transitions.claim(keys, read(back, 3), t0 + 5_000, 5_000));
    assertThat(again.token).isEqualTo(2);
    assertThat(again.attempt).isEqualTo(2);
  }

  /**
   * A claim read with its keys (as the claimer reads it) plans the operation it plans without them,
   * and keys that are not the job's (another id, another rank) change nothing either.
   */
  @Test
  void aClaimReadWithItsKeysPlansTheSameOperationAsOneWithout() {
    JobRecord pushed = pushed(JobOptions.defaults().priority(3));
    Key job = keys.job(id);
    Key index = keys.indexOf(pushed);
    List<Transitions.Read> reads =
        List.of(
            new Transitions.Read(pushed, 4, job, index),
            new Transitions.Read(
                pushed, 4, keys.job(nextId), keys.indexOf(pushed(JobOptions.defaults()))),
            new Transitions.Read(pushed, 4, index, job));
    AtomicOperation expected =
        applied(Transitions.claim(keys, read(pushed, 4), t0, 5_000, "n", 9, null)).operation();
    assertThat(expected.mutations()).extracting(AtomicOperation.Mutation::key).contains(job, index);
    for (Transitions.Read r : reads) {
      AtomicOperation op = applied(Transitions.claim(keys, r, t0, 5_000, "n", 9, null)).operation();
      assertThat(op.checks()).isEqualTo(expected.checks());
      assertThat(op.mutations())
          .extracting(AtomicOperation.Mutation::key)
          .containsExactlyElementsOf(
              expected.mutations().stream().map(AtomicOperation.Mutation::key).toList());
      for (int i = 0; i < op.mutations().size(); i++) {
        AtomicOperation.Mutation m = op.mutations().get(i);
        AtomicOperation.Mutation e = expected.mutations().get(i);
        assertThat(m.isDelete()).isEqualTo(e.isDelete());
        if (!m.isDelete()) {
          assertThat(m.value()).isEqualTo(e.value());
        }
      }
    }
  }

  @Test
  void reclaimOnlyAfterTheLeaseEnds() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(refusal(Transitions.reclaim(keys, read(r, 2), t0 + 4_999)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    assertThat(after(Transitions.reclaim(keys, read(r, 2), t0 + 5_000)).state)
        .isEqualTo(JobRecord.State.READY);
  }

  @Test
  void releaseUndoesAClaimButKeepsTheToken() {
    JobRecord pushed = pushed(JobOptions.defaults().priority(2));
    JobRecord r = after(Transitions.claim(keys, read(pushed, 1), t0, 5_000));
    assertThat(refusal(Transitions.release(keys, hold(r, 2, 0))))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    Transitions.Applied plan = applied(Transitions.release(keys, hold(r, 2, 1)));
    JobRecord back = plan.record();
    assertThat(back.state).isEqualTo(JobRecord.State.READY);
    assertThat(back.attempt).isZero();
    assertThat(back.token).isEqualTo(1);
    assertThat(back.leaseUntil).isZero();
    assertThat(keys.indexOf(back))
        .as("its old place in the ready index")
        .isEqualTo(keys.indexOf(pushed));
    assertThat(plan.operation().checks())
        .singleElement()
        .satisfies(c -> assertThat(c.versionstamp()).isEqualTo(2));
    JobRecord again = after(Transitions.claim(keys, read(back, 3), t0, 5_000));
    assertThat(again.token).as("fencing: a new claim still gets a larger token").isEqualTo(2);
    assertThat(again.attempt).isEqualTo(1);
    assertThat(refusal(Transitions.release(keys, hold(back, 3, 1))))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
  }

  @Test
  void holderOperationsRefuseAStaleToken() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(refusal(Transitions.renew(keys, hold(r, 2, 0), t0, 5_000)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(refusal(Transitions.complete(keys, hold(r, 2, 0), t0, nextId)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(refusal(Transitions.fail(keys, hold(r, 2, 0), t0, err(), 0)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(
            refusal(
                Transitions.update(keys, hold(r, 2, 0), t0, 5_000, JobChange.none(), new byte[0])))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    // the holder itself may renew even after its lease ran out, as long as no one took over
    assertThat(after(Transitions.renew(keys, hold(r, 2, 1), t0 + 9_000, 5_000)).leaseUntil)
        .isEqualTo(t0 + 14_000);
  }

  @Test
  void completeWritesTheRepeatInTheSameOperation() {
    JobRecord r =
        claimed(JobOptions.defaults().repeat(2, Duration.ofSeconds(3)).retry(1, Backoff.NONE));
    Transitions.Applied p = applied(Transitions.complete(keys, hold(r, 2, 1), t0 + 10, nextId));
    assertThat(p.after()).as("the completed job is gone").isEmpty();
    JobRecord spawned = p.spawned().orElseThrow();
    assertThat(spawned.id).isEqualTo(nextId);
    assertThat(spawned.repeatCount).isEqualTo(1);
    assertThat(spawned.delayUntil).isEqualTo(t0 + 3_010);
    assertThat(spawned.token).isZero();
    assertThat(spawned.retriesLeft).isEqualTo(1);
    assertThat(p.operation().mutations())
        .extracting(m -> m.isDelete())
        .containsExactly(true, true, false, false);
    JobRecord forever =
        claimed(JobOptions.defaults().repeat(JobOptions.REPEAT_FOREVER, Duration.ZERO));
    assertThat(
            applied(Transitions.complete(keys, hold(forever, 2, 1), t0, nextId))
                .spawned()
                .orElseThrow()
                .repeatCount)
        .isEqualTo(JobOptions.REPEAT_FOREVER);
    JobRecord once = claimed(JobOptions.defaults());
    assertThat(applied(Transitions.complete(keys, hold(once, 2, 1), t0, null)).spawned()).isEmpty();
  }

  @Test
  void failRetriesKeepingTheIdThenDies() {
    JobRecord r = claimed(JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(2))));
    JobRecord retry = after(Transitions.fail(keys, hold(r, 2, 1), t0 + 100, err(), 0));
    assertThat(retry.id).isEqualTo(id);
    assertThat(retry.state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(retry.delayUntil).isEqualTo(t0 + 2_100);
    assertThat(retry.retriesLeft).isZero();
    assertThat(retry.error).isEqualTo(err());
    JobRecord promoted = after(Transitions.promote(keys, read(retry, 3), t0 + 2_100));
    JobRecord again = after(Transitions.claim(keys, read(promoted, 4), t0 + 2_100, 5_000));
    JobRecord dead = after(Transitions.fail(keys, hold(again, 5, 2), t0 + 2_200, err(), 0));
    assertThat(dead.state).isEqualTo(JobRecord.State.DEAD);
    assertThat(after(Transitions.replay(keys, read(dead, 6))).retriesLeft).isEqualTo(1);
    assertThat(refusal(Transitions.replay(keys, read(again, 6))))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
  }

  @Test
  void failDropsAMessageThatMakesTheRecordTooLargeButKeepsTheType() {
    byte[] nearlyFull = new byte[dev.kvmq.store.KvStore.MAX_VALUE_BYTES - 1_000];
    JobRecord big =
        after(
            Transitions.claim(
                keys,
                read(Transitions.push(keys, id, nearlyFull, JobOptions.defaults(), t0).record(), 1),
                t0,
                5_000));
    JobError wordy = new JobError("E", "x".repeat(2_000), Instant.ofEpochMilli(t0));
    Transitions.Applied dead = applied(Transitions.fail(keys, hold(big, 2, 1), t0, wordy, 0));
    assertThat(dead.record().state).isEqualTo(JobRecord.State.DEAD);
    assertThat(dead.record().error)
        .isEqualTo(new JobError("E", Transitions.MESSAGE_DROPPED, wordy.failedAt()));
    JobRecord small = claimed(JobOptions.defaults());
    assertThat(after(Transitions.fail(keys, hold(small, 2, 1), t0, wordy, 0)).error)
        .as("fits: kept whole")
        .isEqualTo(wordy);
  }

  @Test
  void deleteIsRefusedUnderALiveLeaseOnly() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(refusal(Transitions.delete(keys, read(r, 2), t0 + 4_999)))
        .isEqualTo(Transitions.Refusal.PROCESSING);
    assertThat(applied(Transitions.delete(keys, read(r, 2), t0 + 5_000)).after()).isEmpty();
  }

  @Test
  void deleteDeadRemovesDeadLettersOnly() {
    JobRecord r = claimed(JobOptions.defaults());
    JobRecord dead = after(Transitions.fail(keys, hold(r, 2, 1), t0, err(), 0));
    assertThat(refusal(Transitions.deleteDead(keys, read(r, 2), t0 + 9_000)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    assertThat(refusal(Transitions.deleteDead(keys, read(pushed(JobOptions.defaults()), 1), t0)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    Transitions.Applied gone = applied(Transitions.deleteDead(keys, read(dead, 3), t0));
    assertThat(gone.operation().mutations())
        .extracting(m -> m.key())
        .containsExactlyInAnyOrder(keys.job(id), keys.indexOf(dead));
  }

  @Test
  void deleteWaitingTakesWaitingAndDelayedJobsOnly() {
    String other = Ulid.format(t0, 7, 8);
    String third = Ulid.format(t0, 9, 10);
    JobRecord waiting = pushed(JobOptions.defaults());
    JobRecord delayed =
        Transitions.push(
                keys, other, new byte[0], JobOptions.defaults().delay(Duration.ofSeconds(9)), t0)
            .record();
    JobRecord leased =
        after(
            Transitions.claim(
                keys,
                read(
                    Transitions.push(keys, third, new byte[0], JobOptions.defaults(), t0).record(),
                    1),
                t0,
                5_000));
    JobRecord dead = after(Transitions.fail(keys, hold(leased, 2, 1), t0, err(), 0));
    Transitions.Removal live =
        Transitions.deleteWaiting(
            keys,
            java.util.List.of(read(waiting, 1), read(delayed, 1), read(leased, 2), read(dead, 3)),
            t0 + 1);
    assertThat(live.count()).as("not the live lease, not the dead letter").isEqualTo(2);
    assertThat(live.operation().checks())
        .extracting(c -> c.key())
        .containsExactly(keys.job(id), keys.job(other));
    Transitions.Removal expired =
        Transitions.deleteWaiting(keys, java.util.List.of(read(leased, 2)), t0 + 5_000);
    assertThat(expired.count()).as("an expired lease is waiting again").isEqualTo(1);
  }

  @Test
  void quarantineMovesTheIndexEntryAsideAndKeepsTheRecord() {
    JobRecord r = pushed(JobOptions.defaults());
    Transitions.Applied q = Transitions.quarantine(keys, keys.indexOf(r), 4);
    assertThat(q.operation().checks())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.key()).isEqualTo(keys.job(id));
              assertThat(c.versionstamp()).isEqualTo(4);
            });
    assertThat(q.operation().mutations())
        .extracting(m -> m.key(), m -> m.isDelete())
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(keys.indexOf(r), true),
            org.assertj.core.groups.Tuple.tuple(keys.corrupt(id), false));
  }

  @Test
  void recordsRoundTripThroughTheirEncoding() {
    JobRecord r =
        after(
            Transitions.fail(
                keys,
                hold(
                    claimed(
                        JobOptions.defaults()
                            .priority(-2.5)
                            .retry(
                                3,
                                Backoff.exponential(
                                    Duration.ofSeconds(1), 2, Duration.ofSeconds(9), 0.25))
                            .repeat(4, Duration.ofMinutes(1))),
                    2,
                    1),
                t0,
                err(),
                0.3));
    JobRecord back = JobRecord.decode(r.encode());
    assertThat(back.encode()).isEqualTo(r.encode());
    assertThat(back.priority).isEqualTo(-2.5);
    assertThat(back.backoff).isEqualTo(r.backoff);
    assertThat(back.error).isEqualTo(err());
  }

  @Test
  void priorityRankOrdersHigherFirstForEveryFiniteDouble() {
    double[] ascending = {
      -Double.MAX_VALUE,
      -1e300,
      -1,
      -Double.MIN_VALUE,
      0,
      Double.MIN_VALUE,
      0.5,
      1,
      1e300,
      Double.MAX_VALUE
    };
    for (int i = 1; i < ascending.length; i++) {
      assertThat(QueueKeys.rank(ascending[i])).isLessThan(QueueKeys.rank(ascending[i - 1]));
    }
  }

  @Test
  void backoffFormula() {
    Backoff b = Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(10), 0.5);
    assertThat(b.delayFor(1, 0)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delayFor(3, 0)).isEqualTo(Duration.ofSeconds(4));
    assertThat(b.delayFor(10, 0)).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.delayFor(3, 0.999999)).isEqualTo(Duration.ofSeconds(2));
  }

  JobError err() {
    return new JobError("E", "m", Instant.ofEpochMilli(t0));
  }
}
