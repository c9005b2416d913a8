package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.store.InMemoryKvStore;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A push inside a JTA transaction: written in it (returned at once) where the store can join, after
 * its commit where it can't, refused in a transaction marked for rollback; and how the mode is
 * chosen per queue.
 */
class JobQueueTransactionTest {

  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "bills", Codecs.utf8()).build();
  final FakeTransaction tx = new FakeTransaction();

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void inTransactionAPushIsWrittenThroughTheTransactionAndReturnedAtOnce() {
    List<String> written = new ArrayList<>();
    InTransactionPush joins =
        new InTransactionPush() {
          @Override
          public <S> List<Job<S>> pushAll(
              Queue<S> q,
              List<S> states,
              JobOptions options,
              TransactionSynchronizationRegistry t) {
            assertThat(t).isSameAs(tx);
            states.forEach(s -> written.add((String) s));
            return q.pushAll(states, options);
          }
        };
    JobQueue<String> bills = new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, joins);

    Optional<Job<String>> job = bills.push("bill");

    assertThat(job).isPresent();
    assertThat(written).containsExactly("bill");
    assertThat(tx.synchronizations).as("nothing waits for the commit").isEmpty();
  }

  @Test
  void afterCommitAPushWaitsForTheCommitAndARollbackDropsIt() {
    JobQueue<String> bills = new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, null);

    assertThat(bills.push("committed")).isEmpty();
    assertThat(queue.counts().waiting()).isZero();
    tx.complete(Status.STATUS_COMMITTED);
    assertThat(queue.counts().waiting()).isEqualTo(1);

    FakeTransaction second = new FakeTransaction();
    JobQueue<String> again = new JobQueue<>(queue, second, JobOptions.defaults(), () -> {}, null);
    assertThat(again.push("rolled back")).isEmpty();
    second.complete(Status.STATUS_ROLLEDBACK);
    assertThat(queue.counts().waiting()).isEqualTo(1);
  }

  @Test
  void aTransactionMarkedForRollbackIsRefusedInEitherModeAndNothingIsWritten() {
    tx.status = Status.STATUS_MARKED_ROLLBACK;
    InTransactionPush joins =
        new InTransactionPush() {
          @Override
          public <S> List<Job<S>> pushAll(
              Queue<S> q,
              List<S> states,
              JobOptions options,
              TransactionSynchronizationRegistry t) {
            throw new AssertionError("must not write");
          }
        };
    for (InTransactionPush mode : new InTransactionPush[] {joins, null}) {
      JobQueue<String> bills = new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, mode);
      assertThatThrownBy(() -> bills.push("doomed"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("queue bills")
          .hasMessageContaining("marked for rollback")
          .hasMessageContaining("nothing was pushed");
    }
    assertThat(tx.synchronizations).isEmpty();
    assertThat(queue.counts().waiting()).isZero();
  }

  @Test
  void onAStoreThatCantJoinAPushIsHeldAtOnceReleasedByTheCommitAndDroppedByTheRollback() {
    List<Integer> woken = new ArrayList<>();
    JobQueue<String> bills =
        new JobQueue<>(
            queue, tx, JobOptions.defaults(), () -> woken.add(1), HeldInTransaction.INSTANCE);

    Job<String> committed = bills.push("committed").orElseThrow();
    assertThat(committed.status()).isEqualTo(JobStatus.HELD);
    assertThat(queue.job(committed.id())).as("written durably at once").isPresent();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 1));
    tx.complete(Status.STATUS_COMMITTED);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(1, 0, 0, 0, 0));
    assertThat(queue.job(committed.id()).orElseThrow().status()).isEqualTo(JobStatus.WAITING);

    FakeTransaction second = new FakeTransaction();
    JobQueue<String> again =
        new JobQueue<>(queue, second, JobOptions.defaults(), () -> {}, HeldInTransaction.INSTANCE);
    List<Job<String>> rolledBack = again.pushAll(List.of("a", "b"));
    assertThat(queue.counts().held()).isEqualTo(2);
    second.complete(Status.STATUS_ROLLEDBACK);
    assertThat(queue.counts()).isEqualTo(new QueueCounts(1, 0, 0, 0, 0));
    assertThat(queue.job(rolledBack.get(0).id())).isEmpty();
    assertThat(woken).isNotEmpty();
  }

  @Test
  void aHeldPushInATransactionMarkedForRollbackIsRefusedAndWritesNothing() {
    tx.status = Status.STATUS_MARKED_ROLLBACK;
    JobQueue<String> bills =
        new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, HeldInTransaction.INSTANCE);
    assertThatThrownBy(() -> bills.push("doomed"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("marked for rollback")
        .hasMessageContaining("nothing was pushed");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 0));
    assertThat(tx.synchronizations).isEmpty();
  }

  @Test
  void aRollbackAfterTheHeldTimeoutReleasedTheJobCantUndoIt() {
    JobQueue<String> bills =
        new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, HeldInTransaction.INSTANCE);
    Job<String> job = bills.push("slow transaction").orElseThrow();
    queue.releaseHeld(List.of(job.id())); // as the held timeout would
    tx.complete(Status.STATUS_ROLLEDBACK);
    assertThat(queue.job(job.id()).orElseThrow().status())
        .as("released already: it runs, and the rollback logs that it could not drop it")
        .isEqualTo(JobStatus.WAITING);
  }

  @Test
  void theHeldTimeoutIsKeepByDefaultOrADuration() {
    assertThat(TransactionPush.heldTimeout("q", new KvmqConfig(k -> Optional.empty()))).isNull();
    KvmqConfig keep =
        new KvmqConfig(
            k -> Optional.ofNullable(Map.of("kvmq.queue.q.held-timeout", "keep").get(k)));
    assertThat(TransactionPush.heldTimeout("q", keep)).isNull();
    KvmqConfig ten =
        new KvmqConfig(
            k -> Optional.ofNullable(Map.of("kvmq.queue.q.held-timeout", "PT10M").get(k)));
    assertThat(TransactionPush.heldTimeout("q", ten)).isEqualTo(java.time.Duration.ofMinutes(10));
    for (String bad : List.of("soon", "PT0S", "-PT1S")) {
      KvmqConfig c =
          new KvmqConfig(k -> Optional.ofNullable(Map.of("kvmq.queue.q.held-timeout", bad).get(k)));
      assertThatThrownBy(() -> TransactionPush.heldTimeout("q", c))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("kvmq.queue.q.held-timeout");
    }
  }

  @Test
  void theModeDefaultsToInTransactionAndIsChecked() {
    KvmqConfig none = new KvmqConfig(k -> Optional.empty());
    assertThat(TransactionPush.of("q", none)).isEqualTo(TransactionPush.IN_TRANSACTION);

    KvmqConfig after =
        new KvmqConfig(
            k ->
                Optional.ofNullable(
                    Map.of("kvmq.queue.q.transaction-push", "After-Commit").get(k)));
    assertThat(TransactionPush.of("q", after)).isEqualTo(TransactionPush.AFTER_COMMIT);

    KvmqConfig in =
        new KvmqConfig(
            k ->
                Optional.ofNullable(
                    Map.of("kvmq.queue.q.transaction-push", "in-transaction").get(k)));
    assertThat(TransactionPush.of("q", in)).isEqualTo(TransactionPush.IN_TRANSACTION);

    KvmqConfig bad =
        new KvmqConfig(
            k -> Optional.ofNullable(Map.of("kvmq.queue.q.transaction-push", "xa").get(k)));
    assertThatThrownBy(() -> TransactionPush.of("q", bad))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"xa\"")
        .hasMessageContaining("in-transaction or after-commit");
  }

  /** An active transaction that the test completes. */
  static final class FakeTransaction implements TransactionSynchronizationRegistry {
    int status = Status.STATUS_ACTIVE;
    final List<Synchronization> synchronizations = new ArrayList<>();

    void complete(int outcome) {
      synchronizations.forEach(Synchronization::beforeCompletion);
      status = outcome;
      synchronizations.forEach(s -> s.afterCompletion(outcome));
    }

    @Override
    public Object getTransactionKey() {
      return this;
    }

    @Override
    public void putResource(Object key, Object value) {}

    @Override
    public Object getResource(Object key) {
      return null;
    }

    @Override
    public void registerInterposedSynchronization(Synchronization sync) {
      synchronizations.add(sync);
    }

    @Override
    public int getTransactionStatus() {
      return status;
    }

    @Override
    public void setRollbackOnly() {
      status = Status.STATUS_MARKED_ROLLBACK;
    }

    @Override
    public boolean getRollbackOnly() {
      return status == Status.STATUS_MARKED_ROLLBACK;
    }
  }
}
