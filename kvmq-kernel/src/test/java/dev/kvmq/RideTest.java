package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.ForwardingKvStore;
import dev.kvmq.testkit.FakeClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Outcomes ride in the next claim's commit (docs/semantics.md, "The group committer"): while the
 * worker's pass is under way, an operation submitted to the group committer starts no commit; the
 * pass's claim takes it when it plans and commits it after the claim's own operations, in the same
 * commit, and runs its callback once the claimed jobs are handed out; a pass that does not claim
 * commits it at its end. The simulations ({@code SimulationContract}) run it under commit faults,
 * crashes and stalls; this test pins each rule on its own.
 */
class RideTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore memory = new InMemoryKvStore();
  final FaultyStore store = new FaultyStore(memory);
  final AtomicInteger commits = new AtomicInteger();
  final ForwardingKvStore counted =
      new ForwardingKvStore(store) {
        @Override
        public List<CommitResult> commitAll(List<AtomicOperation> operations) {
          commits.incrementAndGet();
          return super.commitAll(operations);
        }
      };
  final Queue<String> queue =
      Queue.builder(memory, "q", Codecs.utf8()).clock(clock).random(new Random(1)).build();
  final AtomicBoolean claimComing = new AtomicBoolean(true);
  final GroupCommitter committer = new GroupCommitter(counted);
  final Claimer claimer = new Claimer(queue.keys, counted, 16, "node").rides(committer);

  /** What each callback was given, in the order they ran. */
  final List<String> called = new ArrayList<>();

  RideTest() {
    committer.rideWith(claimComing::get);
  }

  @AfterEach
  void close() {
    memory.close();
  }

  private static final Key X = Key.of("x");

  private void submitSetX(String value) {
    committer.submit(
        AtomicOperation.builder().set(X, value.getBytes(StandardCharsets.UTF_8)).build(),
        (result, failure) ->
            called.add(
                failure != null
                    ? "failed: " + failure.getMessage()
                    : result.ok() ? "committed " + value : "refused " + value));
  }

  private String x() {
    return memory.get(X).map(e -> new String(e.value(), StandardCharsets.UTF_8)).orElse(null);
  }

  @Test
  void withNoClaimComingAnOperationCommitsAtOnce() {
    claimComing.set(false);
    submitSetX("a");
    assertThat(x()).isEqualTo("a");
    assertThat(called).containsExactly("committed a");
    assertThat(commits).hasValue(1);
  }

  @Test
  void anOperationSubmittedWhileAClaimIsComingWaitsAndCommitsInTheClaimsCommit() {
    Job<String> job = queue.push("job");
    submitSetX("a");
    submitSetX("b");
    assertThat(x()).as("waiting for the claim").isNull();
    assertThat(called).isEmpty();
    assertThat(commits).hasValue(0);

    Claimer.Batch batch = claimer.claim(10, clock.millis(), 5_000);

    assertThat(batch.claimed()).extracting(c -> c.record().id).containsExactly(job.id());
    assertThat(x()).as("committed with the claim, in submission order").isEqualTo("b");
    assertThat(commits).as("one commit for the claim and both operations").hasValue(1);
    assertThat(called).as("callbacks wait until the claimed jobs are handed out").isEmpty();
    claimer.settleRiders();
    assertThat(called).containsExactly("committed a", "committed b");
    claimer.settleRiders();
    assertThat(called).as("each callback runs once").hasSize(2);
  }

  @Test
  void aClaimThatFindsNoReadyJobStillCommitsItsRiders() {
    submitSetX("a");
    Claimer.Batch batch = claimer.claim(10, clock.millis(), 5_000);
    assertThat(batch.claimed()).isEmpty();
    assertThat(x()).isEqualTo("a");
    claimer.settleRiders();
    assertThat(called).containsExactly("committed a");
  }

  @Test
  void aRiderWhoseCheckFailsIsRefusedAloneAndTheClaimStands() {
    Job<String> job = queue.push("job");
    committer.submit(
        AtomicOperation.builder()
            .check(X, 12345) // x is absent: the check fails
            .set(X, "never".getBytes(StandardCharsets.UTF_8))
            .build(),
        (result, failure) -> called.add(result.ok() ? "committed" : "refused"));
    Claimer.Batch batch = claimer.claim(10, clock.millis(), 5_000);
    assertThat(batch.claimed()).extracting(c -> c.record().id).containsExactly(job.id());
    assertThat(queue.job(job.id()).orElseThrow().status()).isEqualTo(JobStatus.PROCESSING);
    claimer.settleRiders();
    assertThat(called).containsExactly("refused");
    assertThat(x()).isNull();
  }

  @Test
  void aClaimWhoseCommitFailsGivesItsRidersTheFailureAtOnce() {
    queue.push("job");
    submitSetX("a");
    store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY);
    assertThatThrownBy(() -> claimer.claim(10, clock.millis(), 5_000))
        .isInstanceOf(KvStoreException.class);
    assertThat(called).singleElement().asString().startsWith("failed: ");
    assertThat(x()).isNull();
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    claimer.settleRiders();
    assertThat(called).as("no second callback").hasSize(1);
  }

  @Test
  void whatWaitedIsCommittedByDrainOnceNoClaimIsComing() {
    submitSetX("a");
    assertThat(x()).isNull();
    claimComing.set(false);
    committer.drain();
    assertThat(x()).isEqualTo("a");
    assertThat(called).containsExactly("committed a");
  }

  @Test
  void aClaimerWithoutACommitterTakesNoOperations() {
    queue.push("job");
    submitSetX("a");
    Claimer plain = new Claimer(queue.keys, counted, 16, "node");
    assertThat(plain.claim(10, clock.millis(), 5_000).claimed()).hasSize(1);
    plain.settleRiders();
    assertThat(x()).as("still waiting in the committer").isNull();
    assertThat(called).isEmpty();
  }

  @Test
  void aClaimThatStopsBeforeTheStoreTakesNothingAndSaysSo() {
    queue.push("job");
    memory.commit(
        AtomicOperation.builder()
            .set(queue.keys.startsPaused(), Transitions.encodeTime(clock.millis() + 60_000))
            .build());
    submitSetX("a");
    assertThat(claimer.claim(10, clock.millis(), 5_000).claimed()).isEmpty();
    assertThat(claimer.reachedStore()).as("its starts are paused: no store claim").isFalse();
    claimer.settleRiders();
    assertThat(x()).as("still waiting: the pass commits it").isNull();
    assertThat(called).isEmpty();

    memory.commit(AtomicOperation.builder().delete(queue.keys.startsPaused()).build());
    clock.advance(java.time.Duration.ofMinutes(2));
    assertThat(claimer.claim(10, clock.millis(), 5_000).claimed()).hasSize(1);
    assertThat(claimer.reachedStore()).isTrue();
    claimer.settleRiders();
    assertThat(called).containsExactly("committed a");
  }
}
