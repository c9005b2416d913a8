package dev.kvmq;

import static dev.kvmq.TransitionsTest.after;
import static dev.kvmq.TransitionsTest.applied;
import static dev.kvmq.TransitionsTest.hold;
import static dev.kvmq.TransitionsTest.read;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The history's pure rules (docs/semantics.md, "History"), with no store and no clock: attempts
 * kept per claim, completion and failure kept or not per the retention, which records are past a
 * retention, and pruning that touches only what it read.
 */
class HistoryTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_700_000_000_000L;
  final String id = Ulid.format(t0, 1, 1);

  JobRecord pushed(JobOptions o) {
    return Transitions.push(keys, id, new byte[] {1}, o, t0).record();
  }

  JobRecord claimedOn(JobRecord r, long at, String node) {
    return after(Transitions.claim(keys, read(r, 1), at, 5_000, node));
  }

  JobError error(long at) {
    return new JobError("E", "boom", Instant.ofEpochMilli(at));
  }

  @Test
  void aClaimStartsAnAttemptOnItsNodeAndAFailureEndsItWithItsError() {
    JobRecord leased = claimedOn(pushed(JobOptions.defaults().retry(1, Backoff.NONE)), t0, "n1");
    assertThat(leased.attempts)
        .containsExactly(
            new Attempt(1, Instant.ofEpochMilli(t0), Optional.empty(), "n1", Optional.empty()));
    JobRecord retried =
        after(
            Transitions.fail(
                keys,
                hold(leased, 2, 1),
                t0 + 10,
                error(t0 + 10),
                0,
                false,
                true,
                GroupBook.none()));
    assertThat(retried.attempts)
        .containsExactly(
            new Attempt(
                1,
                Instant.ofEpochMilli(t0),
                Optional.of(Instant.ofEpochMilli(t0 + 10)),
                "n1",
                Optional.of(error(t0 + 10))));
    assertThat(retried.finishedAt).as("a retry has not ended the job").isEqualTo(-1);
    JobRecord again = claimedOn(retried, t0 + 20, "n2");
    JobRecord dead =
        after(
            Transitions.fail(
                keys,
                hold(again, 3, 2),
                t0 + 30,
                error(t0 + 30),
                0,
                false,
                true,
                GroupBook.none()));
    assertThat(dead.state).isEqualTo(JobRecord.State.DEAD);
    assertThat(dead.finishedAt).isEqualTo(t0 + 30);
    assertThat(dead.attempts).extracting(Attempt::node).containsExactly("n1", "n2");
  }

  @Test
  void aReclaimEndsTheAttemptAsExpiredAndAReleaseForgetsIt() {
    JobRecord leased = claimedOn(pushed(JobOptions.defaults()), t0, "n1");
    JobRecord back = after(Transitions.reclaim(keys, read(leased, 2), t0 + 5_000));
    Attempt expired = back.attempts.get(0);
    assertThat(expired.endedAt()).contains(Instant.ofEpochMilli(t0 + 5_000));
    assertThat(expired.error().orElseThrow().type()).isEqualTo(History.LEASE_EXPIRED);
    JobRecord claimedAhead = claimedOn(back, t0 + 6_000, "n2");
    JobRecord released = after(Transitions.release(keys, hold(claimedAhead, 3, 2)));
    assertThat(released.attempts).as("the attempt never started").containsExactly(expired);
  }

  @Test
  void aRecordKeepsItsLatestAttemptsOnly() {
    JobRecord r = pushed(JobOptions.defaults().retry(100, Backoff.NONE));
    long at = t0;
    for (int i = 0; i < Attempt.KEPT + 5; i++) {
      JobRecord leased = claimedOn(r, at, "n");
      r =
          after(
              Transitions.fail(
                  keys,
                  hold(leased, 2, leased.token),
                  at + 1,
                  error(at),
                  0,
                  false,
                  true,
                  GroupBook.none()));
      at += 10;
    }
    assertThat(r.attempt).isEqualTo(Attempt.KEPT + 5);
    assertThat(r.attempts).hasSize(Attempt.KEPT);
    assertThat(r.attempts.get(0).number()).isEqualTo(6);
    assertThat(r.attempts.get(Attempt.KEPT - 1).number()).isEqualTo(Attempt.KEPT + 5);
  }

  @Test
  void aKeptCompletionIsInTheCompletedIndexWithItsResultAndANotKeptOneIsGone() {
    JobRecord leased = claimedOn(pushed(JobOptions.defaults()), t0, "n1");
    Transitions.Applied kept =
        applied(Transitions.complete(keys, hold(leased, 2, 1), t0 + 7, null, true, "42"));
    JobRecord done = kept.record();
    assertThat(done.state).isEqualTo(JobRecord.State.COMPLETED);
    assertThat(done.result).isEqualTo("42");
    assertThat(done.finishedAt).isEqualTo(t0 + 7);
    assertThat(done.attempts.get(0).endedAt()).contains(Instant.ofEpochMilli(t0 + 7));
    assertThat(keys.indexOf(done)).isEqualTo(Key.of("kvmq", "t", "completed", t0 + 7, id));
    assertThat(kept.operation().mutations())
        .anyMatch(m -> !m.isDelete() && m.key().equals(keys.indexOf(done)))
        .anyMatch(m -> !m.isDelete() && m.key().equals(keys.job(id)));

    Transitions.Applied gone =
        applied(Transitions.complete(keys, hold(leased, 2, 1), t0 + 7, null, false, "42"));
    assertThat(gone.after()).isEmpty();
    assertThat(gone.operation().mutations()).allMatch(m -> m.isDelete());
  }

  @Test
  void aLastFailureOfAQueueThatKeepsNoDeadLettersRemovesTheJob() {
    JobRecord leased = claimedOn(pushed(JobOptions.defaults()), t0, "n1");
    Transitions.Applied gone =
        applied(
            Transitions.fail(
                keys,
                hold(leased, 2, 1),
                t0 + 1,
                error(t0 + 1),
                0,
                false,
                false,
                GroupBook.none()));
    assertThat(gone.after()).isEmpty();
    assertThat(gone.operation().mutations()).hasSize(2).allMatch(m -> m.isDelete());
  }

  @Test
  void aRecordWithHistoryRoundTripsAndOneWithoutHasNoneOfIt() {
    JobRecord leased = claimedOn(pushed(JobOptions.defaults()), t0, "node-é");
    JobRecord done =
        applied(Transitions.complete(keys, hold(leased, 2, 1), t0 + 7, null, true, "résultat"))
            .record();
    JobRecord back = JobRecord.decode(done.encode());
    assertThat(back.result).isEqualTo("résultat");
    assertThat(back.attempts).isEqualTo(done.attempts);
    assertThat(back.finishedAt).isEqualTo(t0 + 7);
    assertThat(back.state).isEqualTo(JobRecord.State.COMPLETED);
    assertThat(back.encode()).isEqualTo(done.encode());

    JobRecord plain = JobRecord.decode(pushed(JobOptions.defaults()).encode());
    assertThat(plain.result).isNull();
    assertThat(plain.attempts).isEmpty();
    assertThat(plain.finishedAt).isEqualTo(-1);
  }

  @Test
  void aRecordTooLargeForItsAttemptsDropsTheirMessagesFirst() {
    JobRecord.Draft d = pushed(JobOptions.defaults()).draft();
    d.payload = new byte[Queue.MAX_STATE_BYTES];
    List<Attempt> attempts = new ArrayList<>();
    String longText = "é".repeat(JobRecord.ATTEMPT_TEXT_CHARS);
    for (int i = 1; i <= Attempt.KEPT; i++) {
      attempts.add(
          new Attempt(
              i,
              Instant.ofEpochMilli(t0),
              Optional.of(Instant.ofEpochMilli(t0)),
              "n".repeat(Queue.MAX_NODE_LENGTH),
              Optional.of(new JobError(longText, longText, Instant.ofEpochMilli(t0)))));
    }
    d.attempts = List.copyOf(attempts);
    d.result = "r".repeat(Queue.MAX_RESULT_BYTES);
    History.shrink(d, d.build().encode().length);
    assertThat(d.build().encode().length)
        .isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_VALUE_BYTES);
    assertThat(d.attempts).isNotEmpty();
    assertThat(d.attempts.get(d.attempts.size() - 1).number()).isEqualTo(Attempt.KEPT);
  }

  /**
   * A claim adds an attempt and a failure an error: on a record of the largest state, whose kept
   * attempts and last error fill it, neither may make it too large for the store. The claim keeps
   * the new attempt (the older ones lose their messages, then go) and, if it must, the last error's
   * message; the failure after it the same.
   */
  @Test
  void aClaimOrAFailureNeverMakesTheRecordTooLargeToStore() {
    String wide = "\u20AC"; // 3 bytes in UTF-8
    JobRecord.Draft d =
        pushed(
                JobOptions.defaults()
                    .retry(20, Backoff.NONE)
                    .unique(UniqueKey.whileWaitingOrRunning(wide.repeat(UniqueKey.MAX_KEY_LENGTH))))
            .draft();
    d.payload = new byte[Queue.MAX_STATE_BYTES];
    String node = wide.repeat(Queue.MAX_NODE_LENGTH);
    List<Attempt> attempts = new ArrayList<>();
    for (int i = 1; i <= Attempt.KEPT; i++) {
      attempts.add(
          new Attempt(
              i,
              Instant.ofEpochMilli(t0),
              Optional.of(Instant.ofEpochMilli(t0)),
              node,
              Optional.of(new JobError("E", "m", Instant.ofEpochMilli(t0)))));
    }
    d.attempts = List.copyOf(attempts);
    d.attempt = Attempt.KEPT;
    // a last error as long as still fits beside them
    String message = "";
    for (int step = 1 << 14; step > 0; step /= 2) {
      d.error = new JobError("E", message + wide.repeat(step), Instant.ofEpochMilli(t0));
      if (d.build().encode().length <= dev.kvmq.store.KvStore.MAX_VALUE_BYTES) {
        message += wide.repeat(step);
      }
    }
    d.error = new JobError("E", message, Instant.ofEpochMilli(t0));
    JobRecord full = d.build();
    assertThat(full.encode().length).isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_VALUE_BYTES);

    JobRecord leased = claimedOn(full, t0 + 1, node);
    assertThat(leased.encode().length)
        .as("the claimed record")
        .isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_VALUE_BYTES);
    assertThat(leased.state).isEqualTo(JobRecord.State.LEASED);
    assertThat(leased.attempts).last().satisfies(a -> assertThat(a.number()).isEqualTo(11));
    assertThat(leased.error.type()).isEqualTo("E");

    JobRecord failed =
        after(
            Transitions.fail(
                keys,
                hold(leased, 2, leased.token),
                t0 + 2,
                new JobError("F", wide.repeat(100_000), Instant.ofEpochMilli(t0 + 2)),
                0));
    assertThat(failed.encode().length)
        .as("the failed record")
        .isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_VALUE_BYTES);
    assertThat(failed.error.type()).isEqualTo("F");
    assertThat(failed.attempts).last().satisfies(a -> assertThat(a.number()).isEqualTo(11));
  }

  @Test
  void pastRetentionTakesTheOldestPastTheAgeOrBeyondTheCount() {
    List<KvEntry> index = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      index.add(
          new KvEntry(
              Key.of("kvmq", "t", "completed", t0 + i * 1_000L, "id" + i), new byte[0], i + 1));
    }
    long now = t0 + 10_000;
    assertThat(Transitions.pastRetention(index, 5, Retention.Keep.newest(3), now))
        .containsExactlyElementsOf(index.subList(0, 2));
    assertThat(
            Transitions.pastRetention(
                index, 5, Retention.Keep.youngerThan(Duration.ofMillis(8_000)), now))
        .as("completed at now - 8 s or earlier")
        .containsExactlyElementsOf(index.subList(0, 3));
    assertThat(
            Transitions.pastRetention(
                index, 5, Retention.Keep.atMost(Duration.ofMillis(9_500), 2), now))
        .as("the count takes more than the age here")
        .containsExactlyElementsOf(index.subList(0, 3));
    assertThat(Transitions.pastRetention(index, 5, Retention.Keep.unlimited(), now)).isEmpty();
    assertThat(Transitions.pastRetention(index, 5, Retention.Keep.none(), now)).isEqualTo(index);
    assertThat(Transitions.pastRetention(index, 500, Retention.Keep.newest(3), now))
        .as("a batch of a larger index: all of it is beyond the count")
        .isEqualTo(index);
  }

  @Test
  void aPruneRemovesOnlyWhatItReadUnchanged() {
    try (InMemoryKvStore store = new InMemoryKvStore()) {
      JobRecord leased = claimedOn(pushed(JobOptions.defaults()), t0, "n1");
      store.commit(
          Transitions.push(keys, id, new byte[] {1}, JobOptions.defaults(), t0).operation());
      KvEntry job = store.get(keys.job(id)).orElseThrow();
      JobRecord stored = JobRecord.decode(job.value());
      JobRecord claimed =
          after(Transitions.claim(keys, read(stored, job.versionstamp()), t0, 5_000, "n1"));
      store.commit(
          applied(Transitions.claim(keys, read(stored, job.versionstamp()), t0, 5_000, "n1"))
              .operation());
      long vs = store.get(keys.job(id)).orElseThrow().versionstamp();
      store.commit(
          applied(
                  Transitions.complete(
                      keys, hold(claimed, vs, claimed.token), t0 + 1, null, true, null))
              .operation());
      List<KvEntry> read = store.list(keys.completed(), 10, false);
      assertThat(read).hasSize(1);
      // the entry is written again (as if the job moved and came back) before the prune commits
      store.commit(
          dev.kvmq.store.AtomicOperation.builder().set(read.get(0).key(), QueueKeys.EMPTY).build());
      Transitions.Removal stale = Transitions.prune(keys, TransitionTable.Node.COMPLETED, read);
      assertThat(store.commit(stale.operation()).ok()).isFalse();
      assertThat(store.get(keys.job(id))).isPresent();
      Transitions.Removal fresh =
          Transitions.prune(
              keys, TransitionTable.Node.COMPLETED, store.list(keys.completed(), 10, false));
      assertThat(store.commit(fresh.operation()).ok()).isTrue();
      assertThat(store.get(keys.job(id))).isEmpty();
      assertThat(store.count(keys.completed())).isZero();
      assertThat(leased.attempts).hasSize(1);
    }
  }
}
