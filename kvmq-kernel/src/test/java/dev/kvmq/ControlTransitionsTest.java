package dev.kvmq;

import static dev.kvmq.TransitionsTest.after;
import static dev.kvmq.TransitionsTest.applied;
import static dev.kvmq.TransitionsTest.hold;
import static dev.kvmq.TransitionsTest.read;
import static dev.kvmq.TransitionsTest.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The control transitions as pure functions (docs/semantics.md, "Cancel", "Timeouts", "Permanent
 * failures", "Snooze", "Poison jobs"): cancel, snooze, permanent failure, the reclaim limit, and
 * the bulk plans. No store, no clock.
 */
class ControlTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String id = Ulid.format(t0, 1, 2);
  final JobError boom = new JobError("X", "boom", Instant.ofEpochMilli(t0));

  JobRecord pushed(JobOptions o) {
    return Transitions.push(keys, id, new byte[] {1}, o, t0).record();
  }

  JobRecord claimed(JobOptions o) {
    return after(Transitions.claim(keys, read(pushed(o), 1), t0, 5_000));
  }

  @Test
  void cancelEndsAJobInEveryStateThatHasNotEndedAndKeepsItInTheCancelledIndex() {
    JobRecord held =
        Transitions.holdInto(
            AtomicOperation.builder(),
            keys,
            id,
            new byte[] {1},
            JobOptions.defaults(),
            t0,
            java.util.Map.of());
    for (JobRecord r :
        List.of(
            pushed(JobOptions.defaults()),
            pushed(JobOptions.defaults().delay(Duration.ofMinutes(1))),
            claimed(JobOptions.defaults()),
            held)) {
      Transitions.Applied plan = applied(Transitions.cancel(keys, read(r, 7), t0 + 10));
      JobRecord c = plan.record();
      assertThat(c.state).isEqualTo(JobRecord.State.CANCELLED);
      assertThat(c.cancelledAt).isEqualTo(t0 + 10);
      assertThat(c.statusAt(t0 + 10)).isEqualTo(JobStatus.CANCELLED);
      assertThat(keys.indexOf(c)).isEqualTo(keys.cancelled(t0 + 10, id));
      assertThat(keys.cancelled().contains(keys.indexOf(c))).isTrue();
      assertThat(plan.operation().checks())
          .singleElement()
          .satisfies(ch -> assertThat(ch.versionstamp()).isEqualTo(7));
      assertThat(c.payload).containsExactly(1);
    }
  }

  @Test
  void deadLettersAndCancelledJobsHaveEndedAndAreNotCancelled() {
    JobRecord dead =
        after(Transitions.fail(keys, hold(claimed(JobOptions.defaults()), 2, 1), t0, boom, 0));
    assertThat(refusal(Transitions.cancel(keys, read(dead, 3), t0)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    JobRecord cancelled =
        after(Transitions.cancel(keys, read(pushed(JobOptions.defaults()), 1), t0));
    assertThat(refusal(Transitions.cancel(keys, read(cancelled, 2), t0)))
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
  }

  /** The fencing: the cancel revokes the lease, so everything the holder does next is refused. */
  @Test
  void aCancelRevokesTheLeaseSoTheHoldersCompleteFailRenewUpdateAndSnoozeAreRefused() {
    JobRecord leased = claimed(JobOptions.defaults().retry(3, Backoff.NONE));
    JobRecord cancelled = after(Transitions.cancel(keys, read(leased, 2), t0 + 1));
    assertThat(leased.attempts).singleElement().satisfies(a -> assertThat(a.endedAt()).isEmpty());
    assertThat(cancelled.attempts)
        .as("the run under way ends with the cancel, without an error")
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.endedAt()).contains(Instant.ofEpochMilli(t0 + 1));
              assertThat(a.error()).isEmpty();
            });
    Transitions.Holding h = hold(cancelled, 3, leased.token);
    assertThat(refusal(Transitions.complete(keys, h, t0 + 2, null)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(refusal(Transitions.fail(keys, h, t0 + 2, boom, 0)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(refusal(Transitions.renew(keys, h, t0 + 2, 5_000)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(
            refusal(Transitions.update(keys, h, t0 + 2, 5_000, JobChange.none(), new byte[] {2})))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    assertThat(refusal(Transitions.snooze(keys, h, t0 + 2, 1_000)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
    // a plan the holder made before the cancel fails the versionstamp check of its commit
    AtomicOperation stale =
        applied(Transitions.complete(keys, hold(leased, 2, leased.token), t0 + 2, null))
            .operation();
    assertThat(stale.checks())
        .singleElement()
        .satisfies(ch -> assertThat(ch.versionstamp()).isEqualTo(2));
  }

  @Test
  void snoozePutsTheJobBackWithoutUsingARetry() {
    JobRecord leased = claimed(JobOptions.defaults().retry(2, Backoff.NONE));
    JobRecord later = after(Transitions.snooze(keys, hold(leased, 2, leased.token), t0, 30_000));
    assertThat(later.state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(later.delayUntil).isEqualTo(t0 + 30_000);
    assertThat(later.retriesLeft).isEqualTo(2);
    assertThat(later.attempt).as("the run counts as an attempt").isEqualTo(1);
    assertThat(later.leaseUntil).isZero();
    JobRecord now = after(Transitions.snooze(keys, hold(leased, 2, leased.token), t0, 0));
    assertThat(now.state).isEqualTo(JobRecord.State.READY);
    assertThat(refusal(Transitions.snooze(keys, hold(leased, 2, leased.token + 1), t0, 0)))
        .isEqualTo(Transitions.Refusal.LEASE_LOST);
  }

  @Test
  void aPermanentFailureIsADeadLetterWhateverRetriesAreLeft() {
    JobRecord leased = claimed(JobOptions.defaults().retry(5, Backoff.NONE));
    JobRecord retried = after(Transitions.fail(keys, hold(leased, 2, 1), t0, boom, 0, false));
    assertThat(retried.state).isEqualTo(JobRecord.State.READY);
    JobRecord dead = after(Transitions.fail(keys, hold(leased, 2, 1), t0, boom, 0, true));
    assertThat(dead.state).isEqualTo(JobRecord.State.DEAD);
    assertThat(dead.error).isEqualTo(boom);
    assertThat(dead.retriesLeft).isEqualTo(5);
  }

  @Test
  void aJobWhoseLeaseExpiredTheLimitTimesIsADeadLetterThatSaysSo() {
    JobRecord r = pushed(JobOptions.defaults().retry(10, Backoff.NONE));
    long now = t0;
    for (int expiry = 1; expiry < 3; expiry++) {
      r = after(Transitions.claim(keys, read(r, 1), now, 5_000));
      now += 5_000;
      r = after(Transitions.reclaim(keys, read(r, 1), now, 3));
      assertThat(r.state).isEqualTo(JobRecord.State.READY);
      assertThat(r.leaseExpiries).isEqualTo(expiry);
    }
    r = after(Transitions.claim(keys, read(r, 1), now, 5_000));
    assertThat(refusal(Transitions.reclaim(keys, read(r, 1), now + 4_999, 3)))
        .as("a live lease is not reclaimed")
        .isEqualTo(Transitions.Refusal.WRONG_STATE);
    JobRecord dead = after(Transitions.reclaim(keys, read(r, 1), now + 5_000, 3));
    assertThat(dead.state).isEqualTo(JobRecord.State.DEAD);
    assertThat(dead.leaseExpiries).isEqualTo(3);
    assertThat(dead.error.type()).isEqualTo(JobError.LEASE_EXPIRED);
    assertThat(dead.error.message()).contains("expired 3 times");
    assertThat(dead.error.failedAt()).isEqualTo(Instant.ofEpochMilli(now + 5_000));
    assertThat(dead.retriesLeft).as("retries are for failures the handler saw").isEqualTo(10);
    JobRecord replayed = after(Transitions.replay(keys, read(dead, 1)));
    assertThat(replayed.leaseExpiries).as("a replay gives the whole limit again").isZero();
  }

  @Test
  void theDefaultReclaimLimitIsFive() {
    assertThat(Queue.DEFAULT_MAX_LEASE_EXPIRIES).isEqualTo(5);
    JobRecord r = pushed(JobOptions.defaults());
    long now = t0;
    for (int i = 0; i < 5; i++) {
      r = after(Transitions.claim(keys, read(r, 1), now, 1));
      now += 1;
      r = after(Transitions.reclaim(keys, read(r, 1), now));
    }
    assertThat(r.state).isEqualTo(JobRecord.State.DEAD);
  }

  @Test
  void timeoutAndInterruptAreKeptInTheRecordAndByTheNextRunOfARepeat() {
    JobOptions o =
        JobOptions.defaults()
            .timeout(Duration.ofSeconds(3))
            .interruptOnCancel(true)
            .repeat(1, Duration.ZERO);
    JobRecord leased = claimed(o);
    assertThat(leased.timeoutMillis).isEqualTo(3_000);
    assertThat(leased.interruptOnCancel).isTrue();
    JobRecord next =
        applied(Transitions.complete(keys, hold(leased, 2, 1), t0, Ulid.format(t0 + 1, 5, 6)))
            .spawned()
            .orElseThrow();
    assertThat(next.timeoutMillis).isEqualTo(3_000);
    assertThat(next.interruptOnCancel).isTrue();
    assertThat(pushed(JobOptions.defaults()).timeoutMillis).isEqualTo(-1);
  }

  @Test
  void aBulkPlanTakesOnlyTheJobsTheFilterMatchesAndNeverALiveLeaseForADelete() {
    JobRecord waiting = pushed(JobOptions.defaults());
    JobRecord delayed = pushed(JobOptions.defaults().delay(Duration.ofMinutes(1)));
    JobRecord leased = claimed(JobOptions.defaults());
    List<Transitions.Read> reads = List.of(read(waiting, 1), read(delayed, 2), read(leased, 3));
    assertThat(
            Transitions.cancelMatching(
                keys, reads, t0, JobFilter.status(JobStatus.WAITING, JobStatus.PROCESSING)))
        .extracting(a -> a.record().state)
        .containsExactly(JobRecord.State.CANCELLED, JobRecord.State.CANCELLED);
    assertThat(
            Transitions.deleteMatching(
                keys, reads, t0, JobFilter.status(JobStatus.DELAYED, JobStatus.PROCESSING)))
        .as("the delayed job only: a live lease is never deleted")
        .hasSize(1);
    assertThat(
            Transitions.deleteMatching(
                keys, reads, t0 + 5_000, JobFilter.status(JobStatus.WAITING)))
        .as("at t0 + 5 s the lease has expired: that job is waiting, and deleted")
        .hasSize(2);
  }
}
