package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A push whose commit the store failed throws {@link PushFailedException}, naming the jobs the
 * commit wrote, so that the caller can look them up (docs/semantics.md, "A push whose commit
 * failed"): the ids are the stored jobs' when the commit was applied, and name no job when it was
 * not.
 */
class PushFailureTest {

  final FakeClock clock = new FakeClock();
  final FaultyStore store = new FaultyStore(new InMemoryKvStore());
  final Queue<String> queue =
      Queue.builder(store, "pushes", Codecs.utf8()).clock(clock).groupLimit(1).build();

  @AfterEach
  void close() {
    store.close();
  }

  void failCommits(FaultyStore.Mode mode) {
    store.failCommits(op -> true, mode);
  }

  void storeWorks() {
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
  }

  @Test
  void aPushWhoseCommitWasAppliedNamesTheStoredJob() {
    failCommits(FaultyStore.Mode.AFTER_APPLY);
    PushFailedException e = catchThrowableOfType(PushFailedException.class, () -> queue.push("a"));
    storeWorks();

    assertThat(e.jobIds()).hasSize(1);
    Job<String> stored = queue.job(e.jobIds().get(0)).orElseThrow();
    assertThat(stored.state()).isEqualTo("a");
    assertThat(e)
        .isInstanceOf(KvStoreException.class)
        .hasCauseInstanceOf(KvStoreException.class)
        .hasMessageContaining("job " + stored.id() + " of queue pushes")
        .hasMessageContaining("injected failure after apply")
        .hasMessageEndingWith("look it up by id (Queue.job) before pushing again");
  }

  @Test
  void aPushWhoseCommitWasNotAppliedNamesAJobThatIsNotThere() {
    failCommits(FaultyStore.Mode.BEFORE_APPLY);
    PushFailedException e = catchThrowableOfType(PushFailedException.class, () -> queue.push("a"));
    storeWorks();

    assertThat(e.jobIds()).singleElement().satisfies(id -> assertThat(Ulid.isValid(id)).isTrue());
    assertThat(queue.job(e.jobIds().get(0))).isEmpty();
    assertThat(queue.jobs()).isEmpty();
  }

  @Test
  void aPushOfManyJobsNamesThemAllInPushOrder() {
    List<String> states = IntStream.range(0, 7).mapToObj(i -> "s" + i).toList();
    failCommits(FaultyStore.Mode.AFTER_APPLY);
    PushFailedException e =
        catchThrowableOfType(
            PushFailedException.class, () -> queue.pushAll(states, JobOptions.defaults()));
    storeWorks();

    assertThat(e.jobIds()).hasSize(7).doesNotHaveDuplicates();
    assertThat(e.jobIds())
        .extracting(id -> queue.job(id).orElseThrow().state())
        .containsExactlyElementsOf(states);
    assertThat(e)
        .hasMessageContaining("of 7 jobs (" + e.jobIds().get(0) + ", ")
        .hasMessageContaining(e.jobIds().get(4) + ", and 2 more) of queue pushes");
    assertThatThrownBy(() -> e.jobIds().add("x")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void aPushOfAJobOfAGroupAndAHoldNameTheirJobs() {
    failCommits(FaultyStore.Mode.AFTER_APPLY);
    PushFailedException grouped =
        catchThrowableOfType(
            PushFailedException.class, () -> queue.push("g", JobOptions.defaults().group("g")));
    PushFailedException held =
        catchThrowableOfType(
            PushFailedException.class, () -> queue.holdAll(List.of("h"), JobOptions.defaults()));
    storeWorks();

    assertThat(queue.job(grouped.jobIds().get(0)).orElseThrow().state()).isEqualTo("g");
    assertThat(queue.job(held.jobIds().get(0)).orElseThrow().status()).isEqualTo(JobStatus.HELD);
  }

  @Test
  void anOfferNamesTheJobItCreatedOrTheHolderItDebounced() {
    JobOptions debounced =
        JobOptions.defaults()
            .delay(Duration.ofMinutes(1))
            .unique(UniqueKey.whileWaiting("k").debounce());
    failCommits(FaultyStore.Mode.AFTER_APPLY);
    PushFailedException created =
        catchThrowableOfType(PushFailedException.class, () -> queue.offer("first", debounced));
    PushFailedException debounce =
        catchThrowableOfType(PushFailedException.class, () -> queue.offer("second", debounced));
    storeWorks();

    String holder = created.jobIds().get(0);
    assertThat(queue.offer("third", debounced.delay(Duration.ofMinutes(2))).id())
        .as("the created job holds the key")
        .isEqualTo(holder);
    assertThat(debounce.jobIds()).as("the debounce names the holder").containsExactly(holder);
  }

  @Test
  void aPushHandedOffToAnIdleWorkerNamesItsJob() {
    ManualScheduler scheduler = new ManualScheduler(clock);
    queue.worker((job, ctx) -> {}, WorkerOptions.defaults().handoff(true), scheduler).start();
    scheduler.runUntilIdle();
    failCommits(FaultyStore.Mode.AFTER_APPLY);
    PushFailedException e = catchThrowableOfType(PushFailedException.class, () -> queue.push("a"));
    storeWorks();

    assertThat(queue.job(e.jobIds().get(0)).orElseThrow().status())
        .as("leased to the worker, which never heard of it: it runs after its lease")
        .isEqualTo(JobStatus.PROCESSING);
    scheduler.advance(Duration.ofMinutes(1));
    assertThat(queue.job(e.jobIds().get(0)).orElseThrow())
        .as("run after its lease expired, kept in the history")
        .satisfies(
            j -> {
              assertThat(j.status()).isEqualTo(JobStatus.COMPLETED);
              assertThat(j.attempt()).isEqualTo(2);
            });
    scheduler.shutdownNow();
  }

  @Test
  void aReadThatFailsBeforeTheCommitThrowsTheStoresOwnException() {
    store.failReads(true);
    assertThatThrownBy(
            () -> queue.offer("a", JobOptions.defaults().unique(UniqueKey.whileWaiting("k"))))
        .isExactlyInstanceOf(KvStoreException.class);
    store.failReads(false);
    assertThat(queue.jobs()).isEmpty();
  }
}
