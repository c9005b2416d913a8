package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
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
  void theModeDefaultsToTheSafestTheStoreAllowsAndIsChecked() {
    KvmqConfig none = new KvmqConfig(k -> Optional.empty());
    assertThat(TransactionPush.of("q", none, true)).isEqualTo(TransactionPush.IN_TRANSACTION);
    assertThat(TransactionPush.of("q", none, false)).isEqualTo(TransactionPush.AFTER_COMMIT);

    KvmqConfig after =
        new KvmqConfig(
            k ->
                Optional.ofNullable(
                    Map.of("kvmq.queue.q.transaction-push", "After-Commit").get(k)));
    assertThat(TransactionPush.of("q", after, true)).isEqualTo(TransactionPush.AFTER_COMMIT);

    KvmqConfig in =
        new KvmqConfig(
            k ->
                Optional.ofNullable(
                    Map.of("kvmq.queue.q.transaction-push", "in-transaction").get(k)));
    assertThat(TransactionPush.of("q", in, true)).isEqualTo(TransactionPush.IN_TRANSACTION);
    assertThatThrownBy(() -> TransactionPush.of("q", in, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvmq.queue.q.transaction-push")
        .hasMessageContaining("kvmq.postgres.jta-datasource");

    KvmqConfig bad =
        new KvmqConfig(
            k -> Optional.ofNullable(Map.of("kvmq.queue.q.transaction-push", "xa").get(k)));
    assertThatThrownBy(() -> TransactionPush.of("q", bad, true))
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
