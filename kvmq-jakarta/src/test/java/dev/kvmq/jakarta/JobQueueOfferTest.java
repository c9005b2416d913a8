package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.PushResult;
import dev.kvmq.Queue;
import dev.kvmq.UniqueKey;
import dev.kvmq.jakarta.JobQueueTransactionTest.FakeTransaction;
import dev.kvmq.store.InMemoryKvStore;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JobQueue#offer}: the kernel's {@link Queue#offer} for an application, with what the push
 * did (created, duplicate, debounced), the hook that wakes the workers, and transactions.
 */
class JobQueueOfferTest {

  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "mails", Codecs.utf8()).build();
  final AtomicInteger woken = new AtomicInteger();
  final JobOptions welcome = JobOptions.defaults().unique(UniqueKey.whileWaiting("welcome-ada"));

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void aSecondOfferOfATakenKeyIsADuplicateNamingTheFirstJobAndStoresNothing() {
    JobQueue<String> mails =
        new JobQueue<>(queue, null, JobOptions.defaults(), woken::incrementAndGet);

    PushResult<String> first = mails.offer("hello", welcome).orElseThrow();
    PushResult<String> again = mails.offer("hello again", welcome).orElseThrow();

    assertThat(first.outcome()).isEqualTo(PushResult.Outcome.CREATED);
    assertThat(first.job().orElseThrow().state()).isEqualTo("hello");
    assertThat(again.outcome()).isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(again.id()).isEqualTo(first.id());
    assertThat(again.job().orElseThrow().state()).as("the job as stored").isEqualTo("hello");
    assertThat(queue.counts().waiting()).as("one job for the key").isEqualTo(1);
    assertThat(woken).as("a duplicate wrote nothing: no worker to wake").hasValue(1);
  }

  @Test
  void aDebouncedOfferGivesTheWaitingJobTheNewStateAndDueTime() {
    JobQueue<String> mails =
        new JobQueue<>(queue, null, JobOptions.defaults(), woken::incrementAndGet);
    JobOptions debounced =
        JobOptions.defaults()
            .delay(Duration.ofMinutes(1))
            .unique(UniqueKey.whileWaiting("digest-ada").debounce());

    PushResult<String> first = mails.offer("one change", debounced).orElseThrow();
    PushResult<String> second =
        mails.offer("two changes", debounced.delay(Duration.ofMinutes(5))).orElseThrow();

    assertThat(second.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
    assertThat(second.id()).isEqualTo(first.id());
    Job<String> stored = queue.job(first.id()).orElseThrow();
    assertThat(stored.state()).isEqualTo("two changes");
    assertThat(stored.delayUntil())
        .isAfter(first.job().orElseThrow().delayUntil().plus(Duration.ofMinutes(3)));
    assertThat(woken).as("a debounce changed a job: the workers are told").hasValue(2);
  }

  @Test
  void anOfferWithoutAUniqueKeyIsAPushThatCreates() {
    JobQueue<String> mails =
        new JobQueue<>(queue, null, JobOptions.defaults(), woken::incrementAndGet);

    PushResult<String> a = mails.offer("a", JobOptions.defaults()).orElseThrow();
    PushResult<String> b = mails.offer("a", JobOptions.defaults()).orElseThrow();

    assertThat(List.of(a.outcome(), b.outcome())).containsOnly(PushResult.Outcome.CREATED);
    assertThat(a.id()).isNotEqualTo(b.id());
    assertThat(queue.counts().waiting()).isEqualTo(2);
  }

  @Test
  void inATransactionThatTheStoreJoinsTheOfferIsWrittenThroughIt() {
    FakeTransaction tx = new FakeTransaction();
    List<String> offered = new ArrayList<>();
    InTransactionPush joins =
        new InTransactionPush() {
          @Override
          public <S> List<Job<S>> pushAll(
              Queue<S> q, List<S> states, JobOptions o, TransactionSynchronizationRegistry t) {
            throw new AssertionError("an offer is not a pushAll");
          }

          @Override
          public <S> PushResult<S> offer(
              Queue<S> q, S state, JobOptions o, TransactionSynchronizationRegistry t) {
            assertThat(t).isSameAs(tx);
            offered.add((String) state);
            return q.offer(state, o);
          }
        };
    JobQueue<String> mails = new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, joins);

    Optional<PushResult<String>> result = mails.offer("hello", welcome);

    assertThat(result.orElseThrow().created()).isTrue();
    assertThat(offered).containsExactly("hello");
  }

  @Test
  void inATransactionOnAStoreThatCantJoinItAnOfferIsRefusedAndNothingIsWritten() {
    FakeTransaction tx = new FakeTransaction();
    JobQueue<String> mails =
        new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, HeldInTransaction.INSTANCE);

    assertThatThrownBy(() -> mails.offer("hello", welcome))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("queue mails")
        .hasMessageContaining("can't take a unique key")
        .hasMessageContaining("nothing was pushed");
    assertThat(queue.counts().held()).isZero();
    assertThat(queue.counts().waiting()).isZero();
    assertThat(tx.synchronizations).isEmpty();
  }

  @Test
  void afterCommitAnOfferRunsOnCommitAndNotOnRollback() {
    FakeTransaction tx = new FakeTransaction();
    JobQueue<String> mails =
        new JobQueue<>(queue, tx, JobOptions.defaults(), woken::incrementAndGet, null);

    assertThat(mails.offer("hello", welcome)).isEmpty();
    assertThat(queue.counts().waiting()).isZero();
    tx.complete(Status.STATUS_COMMITTED);
    assertThat(queue.counts().waiting()).isEqualTo(1);
    assertThat(woken).hasValue(1);

    FakeTransaction second = new FakeTransaction();
    JobQueue<String> again = new JobQueue<>(queue, second, JobOptions.defaults(), () -> {}, null);
    assertThat(again.offer("other", JobOptions.defaults())).isEmpty();
    second.complete(Status.STATUS_ROLLEDBACK);
    assertThat(queue.counts().waiting()).isEqualTo(1);
  }

  @Test
  void inATransactionMarkedForRollbackAnOfferIsRefused() {
    FakeTransaction tx = new FakeTransaction();
    tx.status = Status.STATUS_MARKED_ROLLBACK;
    JobQueue<String> mails = new JobQueue<>(queue, tx, JobOptions.defaults(), () -> {}, null);

    assertThatThrownBy(() -> mails.offer("hello", welcome))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("marked for rollback");
    assertThat(queue.counts().waiting()).isZero();
    assertThat(tx.synchronizations).isEmpty();
  }
}
