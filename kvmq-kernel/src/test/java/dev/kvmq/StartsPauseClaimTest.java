package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A claimer reads the pause of the queue's starts only while it is in doubt (docs/flow-control.md,
 * "Pausing starts"): a claim checks that key in its commit anyway, so after a read found no pause
 * the claims that follow skip the read, and a pause committed since (by another node, say) fails
 * the next claim, which starts nothing, and makes the claimer read it again.
 */
class StartsPauseClaimTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore memory = new InMemoryKvStore();
  final AtomicInteger pauseReads = new AtomicInteger();
  final Queue<String> queue =
      Queue.builder(memory, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  final Key pauseKey = queue.keys.startsPaused();

  /** The in-memory store, counting the reads of the pause key. */
  final ForwardingKvStore store =
      new ForwardingKvStore(memory) {
        @Override
        public Optional<KvEntry> get(Key key) {
          if (key.equals(pauseKey)) {
            pauseReads.incrementAndGet();
          }
          return super.get(key);
        }
      };

  @AfterEach
  void close() {
    memory.close();
  }

  private void pauseStartsUntil(long until) {
    assertThat(
            memory
                .commit(
                    AtomicOperation.builder().set(pauseKey, Transitions.encodeTime(until)).build())
                .ok())
        .isTrue();
  }

  private static List<String> payloads(Claimer.Batch batch) {
    return batch.claimed().stream()
        .map(c -> new String(c.record().payload, java.nio.charset.StandardCharsets.UTF_8))
        .toList();
  }

  @Test
  void claimsAfterOneThatReadNoPauseDoNotReadItAgain() {
    Claimer claimer = new Claimer(queue.keys, store);
    queue.push("a");
    assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("a");
    assertThat(pauseReads).as("the first claim reads the pause: none").hasValue(1);
    for (int i = 0; i < 5; i++) {
      queue.push("b" + i);
      assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("b" + i);
    }
    assertThat(pauseReads).as("no claim read it again").hasValue(1);
  }

  @Test
  void aPauseCommittedAfterTheLastReadFailsTheNextClaimAndIsReadBeforeTheOneAfter() {
    Claimer claimer = new Claimer(queue.keys, store);
    queue.push("a");
    assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("a");
    long until = clock.millis() + 1_000;
    pauseStartsUntil(until); // another node's handler paused the queue's starts
    queue.push("b");

    Claimer.Batch refused = claimer.claim(10, clock.millis(), 5_000);
    assertThat(refused.claimed()).as("the commit's check refuses every claim").isEmpty();
    assertThat(refused.more()).as("it asks for another pass").isTrue();
    assertThat(memory.count(queue.keys.ready())).as("b still waits").isEqualTo(1);

    Claimer.Batch blocked = claimer.claim(10, clock.millis(), 5_000);
    assertThat(blocked.claimed()).isEmpty();
    assertThat(claimer.blockedUntil()).as("the pause was read: its end").isEqualTo(until);
    assertThat(blocked.more()).isFalse();

    clock.advance(java.time.Duration.ofMillis(1_000));
    assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("b");
    assertThat(memory.get(pauseKey)).as("the ended pause is removed").isEmpty();
  }

  @Test
  void aGroupsJobIsNeitherClaimedNorBlockedUnderAPauseTheClaimHasNotRead() {
    Queue<String> grouped =
        Queue.builder(memory, "g", Codecs.utf8())
            .clock(clock)
            .random(new Random(2))
            .groupLimit("tenant", 1)
            .build();
    Key pause = grouped.keys.startsPaused();
    Claimer claimer = new Claimer(grouped.keys, store).flow(grouped.groupLimits(), null);
    grouped.push("first", JobOptions.defaults().group("tenant"));
    assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("first");
    assertThat(
            memory
                .commit(
                    AtomicOperation.builder()
                        .set(pause, Transitions.encodeTime(clock.millis() + 1_000))
                        .build())
                .ok())
        .isTrue();
    grouped.push("other", JobOptions.defaults().group("other-tenant"));

    Claimer.Batch refused = claimer.claim(10, clock.millis(), 5_000);
    assertThat(refused.claimed()).isEmpty();
    assertThat(refused.more()).isTrue();
    assertThat(memory.count(grouped.keys.ready()))
        .as("the grouped job is still ready, not blocked")
        .isEqualTo(1);

    clock.advance(java.time.Duration.ofMillis(1_000));
    assertThat(payloads(claimer.claim(10, clock.millis(), 5_000))).containsExactly("other");
    assertThat(memory.get(pause)).as("the ended pause is removed").isEmpty();
  }
}
