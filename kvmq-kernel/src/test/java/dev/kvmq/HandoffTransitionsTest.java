package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link Transitions#pushClaimed}, the handoff's transition (docs/semantics.md, "Handoff"): a push
 * and the claim of the job it pushed, as one operation. Pure checks of the plan, and its effect on
 * a store against the push and the claim committed one after the other.
 */
class HandoffTransitionsTest {

  final QueueKeys keys = new QueueKeys("h");
  final long t0 = 1_000_000;
  final String id = Ulid.format(t0, 1, 2);

  Transitions.Applied handoff(JobOptions o) {
    return Transitions.pushClaimed(
        keys, id, new byte[] {7}, o, t0, Map.of("traceparent", "00-x"), 5_000, "node-a");
  }

  @Test
  void theJobIsLeasedUnderTheFirstTokenAsAClaimOfThePushedJobWouldLeaseIt() {
    JobOptions o =
        JobOptions.defaults()
            .priority(3)
            .retry(2, Backoff.fixed(Duration.ofSeconds(1)))
            .repeat(1, Duration.ZERO);
    JobRecord r = handoff(o).record();
    JobRecord pushed =
        Transitions.pushInto(
            AtomicOperation.builder(),
            keys,
            id,
            new byte[] {7},
            o,
            t0,
            Map.of("traceparent", "00-x"));
    JobRecord claimed =
        TransitionsTest.after(
            Transitions.claim(keys, new Transitions.Read(pushed, 1), t0, 5_000, "node-a"));
    assertThat(r.state).isEqualTo(JobRecord.State.LEASED);
    assertThat(r.token).isEqualTo(1);
    assertThat(r.attempt).isEqualTo(1);
    assertThat(r.leaseUntil).isEqualTo(t0 + 5_000);
    assertThat(r.encode()).isEqualTo(claimed.encode());
  }

  @Test
  void theOperationChecksTheIdNewAndNoPauseAndWritesTheRecordAndItsLeaseEntryOnly() {
    AtomicOperation op = handoff(JobOptions.defaults()).operation();
    assertThat(op.checks())
        .extracting(AtomicOperation.Check::key)
        .containsExactlyInAnyOrder(keys.job(id), keys.paused, keys.startsPaused());
    assertThat(op.checks()).allSatisfy(c -> assertThat(c.expectsAbsent()).isTrue());
    assertThat(op.mutations()).noneMatch(AtomicOperation.Mutation::isDelete);
    assertThat(op.mutations())
        .extracting(AtomicOperation.Mutation::key)
        .hasSize(2)
        .contains(keys.job(id))
        .allMatch(k -> k.equals(keys.job(id)) || keys.leased().contains(k));
  }

  @Test
  void jobsThatAPushDoesNotMakeReadyOrWhoseRulesReadTheStoreAreRefused() {
    assertThatThrownBy(() -> handoff(JobOptions.defaults().delay(Duration.ofMillis(1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("due later");
    assertThatThrownBy(() -> handoff(JobOptions.defaults().group("g")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("group");
    assertThatThrownBy(() -> handoff(JobOptions.defaults().unique(UniqueKey.whileWaiting("k"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unique");
  }

  /**
   * Committed, the handoff leaves exactly the entries that the push and then the claim leave when
   * committed one after the other (versionstamps aside), for random options; and a pause of the
   * queue or of its starts refuses it and leaves nothing.
   */
  @Test
  void committedItLeavesWhatThePushAndThenTheClaimLeave() {
    SplittableRandom r = new SplittableRandom(19);
    for (int i = 0; i < 200; i++) {
      long now = t0 + r.nextInt(1_000_000);
      JobOptions o =
          JobOptions.defaults()
              .priority(r.nextInt(5) - 2)
              .retry(r.nextInt(3), Backoff.fixed(Duration.ofMillis(r.nextInt(5_000))))
              .repeat(r.nextInt(3), Duration.ofMillis(r.nextInt(2) * 1_000L));
      if (r.nextBoolean()) {
        o = o.delayUntil(java.time.Instant.ofEpochMilli(now - r.nextInt(2) * 100L)); // due already
      }
      if (r.nextBoolean()) {
        o = o.timeout(Duration.ofSeconds(1 + r.nextInt(9)));
      }
      String jobId = Ulid.format(now, r.nextLong(), r.nextLong());
      byte[] payload = new byte[r.nextInt(20)];
      KvStore one = new InMemoryKvStore();
      KvStore two = new InMemoryKvStore();
      Transitions.Applied handoff =
          Transitions.pushClaimed(keys, jobId, payload, o, now, Map.of(), 5_000, "n");
      assertThat(one.commit(handoff.operation()).ok()).isTrue();
      Transitions.Applied push = Transitions.push(keys, jobId, payload, o, now);
      long vs = two.commit(push.operation()).versionstamp();
      Transitions.Applied claim =
          TransitionsTest.applied(
              Transitions.claim(keys, new Transitions.Read(push.record(), vs), now, 5_000, "n"));
      assertThat(two.commit(claim.operation()).ok()).isTrue();
      assertThat(contents(one)).as("options %s", o).isEqualTo(contents(two));
      // a second handoff of the same id is refused: the id is taken
      assertThat(one.commit(handoff.operation()).ok()).isFalse();
    }
    for (Key pause : List.of(keys.paused, keys.startsPaused())) {
      KvStore store = new InMemoryKvStore();
      store.commit(AtomicOperation.builder().set(pause, QueueKeys.EMPTY).build());
      assertThat(store.commit(handoff(JobOptions.defaults()).operation()).ok()).isFalse();
      assertThat(contents(store)).containsOnlyKeys(pause.toString());
    }
  }

  private static Map<String, String> contents(KvStore store) {
    return store.list(KeyRange.all(), Integer.MAX_VALUE, false).stream()
        .collect(
            Collectors.toMap(
                (KvEntry e) -> e.key().toString(),
                e -> java.util.HexFormat.of().formatHex(e.value()),
                (a, b) -> a,
                LinkedHashMap::new));
  }
}
