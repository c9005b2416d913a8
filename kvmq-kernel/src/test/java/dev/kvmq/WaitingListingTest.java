package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Queue#list} and {@link Queue#count} of {@link JobStatus#WAITING} take the jobs of groups
 * that wait for a free slot of their group (parked) too: a waiting job is one that is due and not
 * running, whether its group lets it start now or not, as {@link Queue#counts()} counts it.
 */
class WaitingListingTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8())
          .clock(clock)
          .random(new Random(1))
          .groupLimit(1)
          .build();
  final JobFilter waiting = JobFilter.status(JobStatus.WAITING);

  @AfterEach
  void close() {
    store.close();
  }

  /** a1, b1 and n1 are ready; a2, a3 and b2 are parked behind their group's limit of 1. */
  void pushSix() {
    queue.pushAll(List.of("a1", "a2", "a3"), JobOptions.defaults().group("a"));
    queue.pushAll(List.of("b1", "b2"), JobOptions.defaults().group("b"));
    queue.push("n1");
    assertThat(store.count(queue.keys.ready())).isEqualTo(3);
    assertThat(store.count(queue.keys.parkedAll())).isEqualTo(3);
  }

  List<String> listAll(JobFilter filter, int pageSize) {
    List<String> states = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      JobPage<String> page = queue.list(filter, cursor, pageSize);
      page.jobs().forEach(j -> states.add(j.state()));
      cursor = page.next().orElse(null);
      assertThat(++pages).as("paging ends").isLessThan(100);
    } while (cursor != null);
    return states;
  }

  @Test
  void theWaitingListingTakesTheReadyJobsThenTheParkedOnesGroupByGroup() {
    pushSix();

    for (int size = 1; size <= 7; size++) {
      assertThat(listAll(waiting, size))
          .as("pages of %d", size)
          .containsExactly("a1", "b1", "n1", "a2", "a3", "b2");
    }
    assertThat(queue.count(waiting)).isEqualTo(6);
    assertThat(queue.counts().waiting())
        .as("the same number as the queue's summary")
        .isEqualTo(queue.count(waiting));
    assertThat(queue.list(waiting, null, 10).jobs())
        .allSatisfy(j -> assertThat(j.status()).isEqualTo(JobStatus.WAITING));
  }

  @Test
  void aPageBoundaryBetweenTheReadyAndTheParkedJobsLosesNone() {
    pushSix();

    JobPage<String> first = queue.list(waiting, null, 3);
    assertThat(first.jobs()).extracting(Job::state).containsExactly("a1", "b1", "n1");
    JobPage<String> second = queue.list(waiting, first.next().orElseThrow(), 2);
    assertThat(second.jobs()).extracting(Job::state).containsExactly("a2", "a3");
    JobPage<String> last = queue.list(waiting, second.next().orElseThrow(), 2);
    assertThat(last.jobs()).extracting(Job::state).containsExactly("b2");
    assertThat(last.next()).isEmpty();
  }

  @Test
  void aRunningJobLeavesTheWaitingListingAndTheRestOfItsGroupStaysInIt() {
    pushSix();
    ManualScheduler scheduler = new ManualScheduler(clock);
    List<List<String>> seen = new ArrayList<>();
    List<Long> counted = new ArrayList<>();
    Worker<String> w =
        queue.worker(
            (job, ctx) -> {
              if (job.state().equals("a1")) {
                seen.add(listAll(waiting, 2));
                counted.add(queue.count(waiting));
              }
            },
            WorkerOptions.defaults(),
            scheduler);
    w.start();
    scheduler.runUntilIdle();

    assertThat(seen).containsExactly(List.of("b1", "n1", "a2", "a3", "b2"));
    assertThat(counted).containsExactly(5L);
    assertThat(queue.count(waiting)).as("all ran").isZero();
    assertThat(queue.list(waiting, null, 10).jobs()).isEmpty();
    w.stop();
  }

  @Test
  void aCursorThatIsNoWaitingJobsIndexKeyIsRefused() {
    pushSix();
    String groupRecord =
        Base64.getUrlEncoder().withoutPadding().encodeToString(queue.keys.group("a").encoded());
    assertThatThrownBy(() -> queue.list(waiting, groupRecord, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a cursor");
    String intoParked = queue.list(waiting, null, 4).next().orElseThrow();
    assertThat(queue.list(waiting, intoParked, 1).jobs())
        .extracting(Job::state)
        .containsExactly("a3");
    assertThatThrownBy(() -> queue.list(JobFilter.status(JobStatus.DELAYED), intoParked, 1))
        .as("a parked job's cursor is a waiting listing's only")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a cursor");
  }
}
