package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Each transition as a pure function: its plan, its refusals. No store, no clock. */
class TransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String id = Ulid.format(t0, 1, 2);
  final String nextId = Ulid.format(t0 + 5, 3, 4);

  JobRecord pushed(JobOptions o) {
    return Transitions.push(keys, id, new byte[] {1}, o, t0).after();
  }

  JobRecord claimed(JobOptions o) {
    return Transitions.claim(keys, pushed(o), 1, t0, 5_000).after();
  }

  @Test
  void pushIsReadyOrDelayedAndChecksTheIdIsNew() {
    JobRecord ready = pushed(JobOptions.defaults());
    assertThat(ready.state).isEqualTo(JobRecord.State.READY);
    JobRecord delayed = pushed(JobOptions.defaults().delay(Duration.ofSeconds(1)));
    assertThat(delayed.state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(delayed.delayUntil).isEqualTo(t0 + 1_000);
    AtomicOperation op = Transitions.push(keys, id, new byte[0], JobOptions.defaults(), t0).operation();
    assertThat(op.checks()).singleElement().satisfies(c -> assertThat(c.expectsAbsent()).isTrue());
    assertThat(op.mutations()).hasSize(2);
    JobRecord past = pushed(JobOptions.defaults().delayUntil(Instant.ofEpochMilli(t0 - 1)));
    assertThat(past.state).isEqualTo(JobRecord.State.READY);
  }

  @Test
  void promoteOnlyWhenDue() {
    JobRecord delayed = pushed(JobOptions.defaults().delay(Duration.ofSeconds(1)));
    assertThat(Transitions.promote(keys, delayed, 1, t0 + 999).refusal()).isEqualTo(Transitions.Refusal.WRONG_STATE);
    assertThat(Transitions.promote(keys, delayed, 1, t0 + 1_000).after().state).isEqualTo(JobRecord.State.READY);
  }

  @Test
  void claimGrowsTokenAndAttemptAndMovesTheIndex() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(r.state).isEqualTo(JobRecord.State.LEASED);
    assertThat(r.token).isEqualTo(1);
    assertThat(r.attempt).isEqualTo(1);
    assertThat(r.leaseUntil).isEqualTo(t0 + 5_000);
    assertThat(Transitions.claim(keys, r, 2, t0, 5_000).refusal()).isEqualTo(Transitions.Refusal.WRONG_STATE);
    JobRecord back = Transitions.reclaim(keys, r, 2, t0 + 5_000).after();
    JobRecord again = Transitions.claim(keys, back, 3, t0 + 5_000, 5_000).after();
    assertThat(again.token).isEqualTo(2);
    assertThat(again.attempt).isEqualTo(2);
  }

  @Test
  void reclaimOnlyAfterTheLeaseEnds() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(Transitions.reclaim(keys, r, 2, t0 + 4_999).refused()).isTrue();
    assertThat(Transitions.reclaim(keys, r, 2, t0 + 5_000).after().state).isEqualTo(JobRecord.State.READY);
  }

  @Test
  void releaseUndoesAClaimButKeepsTheToken() {
    JobRecord pushed = pushed(JobOptions.defaults().priority(2));
    JobRecord r = Transitions.claim(keys, pushed, 1, t0, 5_000).after();
    assertThat(Transitions.release(keys, r, 2, 0).refusal()).isEqualTo(Transitions.Refusal.LEASE_LOST);
    Transitions.Plan plan = Transitions.release(keys, r, 2, 1);
    JobRecord back = plan.after();
    assertThat(back.state).isEqualTo(JobRecord.State.READY);
    assertThat(back.attempt).isZero();
    assertThat(back.token).isEqualTo(1);
    assertThat(back.leaseUntil).isZero();
    assertThat(keys.indexOf(back)).as("its old place in the ready index").isEqualTo(keys.indexOf(pushed));
    assertThat(plan.operation().checks()).singleElement().satisfies(c -> assertThat(c.versionstamp()).isEqualTo(2));
    JobRecord again = Transitions.claim(keys, back, 3, t0, 5_000).after();
    assertThat(again.token).as("fencing: a new claim still gets a larger token").isEqualTo(2);
    assertThat(again.attempt).isEqualTo(1);
    assertThat(Transitions.release(keys, back, 3, 1).refusal()).isEqualTo(Transitions.Refusal.LEASE_LOST);
  }

  @Test
  void holderOperationsRefuseAStaleToken() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(Transitions.renew(keys, r, 2, 0, t0, 5_000).refusal()).isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(Transitions.complete(keys, r, 2, 0, t0, nextId).refusal()).isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(Transitions.fail(keys, r, 2, 0, t0, err(), 0).refusal()).isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(Transitions.update(keys, r, 2, 0, t0, 5_000, JobChange.none(), null).refusal())
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    // the holder itself may renew even after its lease ran out, as long as no one took over
    assertThat(Transitions.renew(keys, r, 2, 1, t0 + 9_000, 5_000).after().leaseUntil).isEqualTo(t0 + 14_000);
  }

  @Test
  void completeWritesTheRepeatInTheSameOperation() {
    JobRecord r = claimed(JobOptions.defaults().repeat(2, Duration.ofSeconds(3)).retry(1, Backoff.NONE));
    Transitions.Plan p = Transitions.complete(keys, r, 2, 1, t0 + 10, nextId);
    assertThat(p.spawned().id).isEqualTo(nextId);
    assertThat(p.spawned().repeatCount).isEqualTo(1);
    assertThat(p.spawned().delayUntil).isEqualTo(t0 + 3_010);
    assertThat(p.spawned().token).isZero();
    assertThat(p.spawned().retriesLeft).isEqualTo(1);
    assertThat(p.operation().mutations()).extracting(m -> m.isDelete()).containsExactly(true, true, false, false);
    JobRecord forever = claimed(JobOptions.defaults().repeat(JobOptions.REPEAT_FOREVER, Duration.ZERO));
    assertThat(Transitions.complete(keys, forever, 2, 1, t0, nextId).spawned().repeatCount)
        .isEqualTo(JobOptions.REPEAT_FOREVER);
    JobRecord once = claimed(JobOptions.defaults());
    assertThat(Transitions.complete(keys, once, 2, 1, t0, null).spawned()).isNull();
  }

  @Test
  void failRetriesKeepingTheIdThenDies() {
    JobRecord r = claimed(JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(2))));
    JobRecord retry = Transitions.fail(keys, r, 2, 1, t0 + 100, err(), 0).after();
    assertThat(retry.id).isEqualTo(id);
    assertThat(retry.state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(retry.delayUntil).isEqualTo(t0 + 2_100);
    assertThat(retry.retriesLeft).isZero();
    assertThat(retry.error).isEqualTo(err());
    JobRecord again = Transitions.claim(keys, Transitions.promote(keys, retry, 3, t0 + 2_100).after(), 4, t0 + 2_100, 5_000).after();
    JobRecord dead = Transitions.fail(keys, again, 5, 2, t0 + 2_200, err(), 0).after();
    assertThat(dead.state).isEqualTo(JobRecord.State.DEAD);
    assertThat(Transitions.replay(keys, dead, 6).after().retriesLeft).isEqualTo(1);
    assertThat(Transitions.replay(keys, again, 6).refused()).isTrue();
  }

  @Test
  void deleteIsRefusedUnderALiveLeaseOnly() {
    JobRecord r = claimed(JobOptions.defaults());
    assertThat(Transitions.delete(keys, r, 2, t0 + 4_999).refusal()).isEqualTo(Transitions.Refusal.PROCESSING);
    assertThat(Transitions.delete(keys, r, 2, t0 + 5_000).refused()).isFalse();
  }

  @Test
  void recordsRoundTripThroughTheirEncoding() {
    JobRecord r = Transitions.fail(keys, claimed(JobOptions.defaults().priority(-2.5)
        .retry(3, Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(9), 0.25))
        .repeat(4, Duration.ofMinutes(1))), 2, 1, t0, err(), 0.3).after();
    JobRecord back = JobRecord.decode(r.encode());
    assertThat(back.encode()).isEqualTo(r.encode());
    assertThat(back.priority).isEqualTo(-2.5);
    assertThat(back.backoff).isEqualTo(r.backoff);
    assertThat(back.error).isEqualTo(err());
  }

  @Test
  void priorityRankOrdersHigherFirstForEveryFiniteDouble() {
    double[] ascending = {-Double.MAX_VALUE, -1e300, -1, -Double.MIN_VALUE, 0, Double.MIN_VALUE, 0.5, 1, 1e300, Double.MAX_VALUE};
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
