package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Listing, counting, cancelling and deleting by group and unique-key prefix ({@link
 * JobFilter#group}, {@link JobFilter#uniqueKeyPrefix}) on the in-memory store: the jobs of the
 * status whose records match, in the index's order, page by page; a page that reads {@link
 * JobFilter#MAX_SCAN} entries without filling ends early with a cursor to go on.
 */
class JobFilterTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "q", Codecs.utf8()).clock(clock).build();

  @AfterEach
  void close() {
    store.close();
  }

  /** Pushes jobs of groups a and b in turn, every third with a unique key: returns their ids. */
  List<String> pushMixed(int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      JobOptions o = JobOptions.defaults().group(i % 2 == 0 ? "a" : "b");
      if (i % 3 == 0) {
        o = o.unique(UniqueKey.whileWaiting((i % 2 == 0 ? "sync-a-" : "sync-b-") + i));
      }
      ids.add(queue.push("job-" + i, o).id());
    }
    return ids;
  }

  List<String> listAll(JobFilter filter, int pageSize) {
    List<String> ids = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      JobPage<String> page = queue.list(filter, cursor, pageSize);
      page.jobs().forEach(j -> ids.add(j.id()));
      cursor = page.next().orElse(null);
      assertThat(++pages).as("paging ends").isLessThan(1_000);
    } while (cursor != null);
    return ids;
  }

  @Test
  void aGroupFilterListsAndCountsThatGroupsJobsInQueueOrder() {
    List<String> ids = pushMixed(23);
    List<String> groupA = new ArrayList<>();
    for (int i = 0; i < ids.size(); i += 2) {
      groupA.add(ids.get(i));
    }
    JobFilter a = JobFilter.status(JobStatus.WAITING).group("a");
    assertThat(listAll(a, 4)).containsExactlyElementsOf(groupA);
    assertThat(listAll(a, 1000)).containsExactlyElementsOf(groupA);
    assertThat(queue.count(a)).isEqualTo(groupA.size());
    assertThat(queue.count(JobFilter.status(JobStatus.WAITING).group("nobody"))).isZero();
    assertThat(queue.list(JobFilter.status(JobStatus.WAITING).group("nobody"), null, 5).jobs())
        .isEmpty();
  }

  @Test
  void aUniqueKeyPrefixFilterTakesJobsPushedWithAMatchingKey() {
    List<String> ids = pushMixed(20);
    List<String> syncA = new ArrayList<>();
    List<String> anyKey = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      if (i % 3 == 0) {
        anyKey.add(ids.get(i));
        if (i % 2 == 0) {
          syncA.add(ids.get(i));
        }
      }
    }
    assertThat(listAll(JobFilter.status(JobStatus.WAITING).uniqueKeyPrefix("sync-a-"), 2))
        .containsExactlyElementsOf(syncA);
    assertThat(listAll(JobFilter.status(JobStatus.WAITING).uniqueKeyPrefix("sync-"), 3))
        .containsExactlyElementsOf(anyKey);
    assertThat(
            listAll(JobFilter.status(JobStatus.WAITING).group("b").uniqueKeyPrefix("sync-a-"), 3))
        .as("both criteria")
        .isEmpty();
  }

  @Test
  void cancelAndDeleteByGroupOrPrefixTouchOnlyTheMatchingJobs() {
    List<String> ids = pushMixed(12);
    long cancelled = queue.cancelAll(JobFilter.status(JobStatus.WAITING).group("a"));
    assertThat(cancelled).isEqualTo(6);
    for (int i = 0; i < ids.size(); i++) {
      assertThat(queue.job(ids.get(i)).orElseThrow().status())
          .as("job %d", i)
          .isEqualTo(i % 2 == 0 ? JobStatus.CANCELLED : JobStatus.WAITING);
    }
    // of group b, jobs 3 and 9 have keys "sync-b-3" and "sync-b-9"
    long deleted = queue.deleteAll(JobFilter.status(JobStatus.WAITING).uniqueKeyPrefix("sync-b-"));
    assertThat(deleted).isEqualTo(2);
    assertThat(queue.job(ids.get(3))).isEmpty();
    assertThat(queue.job(ids.get(9))).isEmpty();
    assertThat(queue.count(JobFilter.status(JobStatus.WAITING))).isEqualTo(4);
    assertThat(queue.count(JobFilter.status(JobStatus.CANCELLED).group("a"))).isEqualTo(6);
  }

  @Test
  void aPageThatReadsMaxScanEntriesWithoutFillingEndsEarlyWithACursor() {
    queue.pushAll(
        Collections.nCopies(JobFilter.MAX_SCAN + 5, "filler"), JobOptions.defaults().group("busy"));
    String late1 = queue.push("late-1", JobOptions.defaults().group("rare")).id();
    String late2 = queue.push("late-2", JobOptions.defaults().group("rare")).id();
    JobFilter rare = JobFilter.status(JobStatus.WAITING).group("rare");

    JobPage<String> first = queue.list(rare, null, 10);
    assertThat(first.jobs()).as("no match among the first MAX_SCAN entries").isEmpty();
    assertThat(first.next()).as("a cursor where the scan stopped").isPresent();
    JobPage<String> second = queue.list(rare, first.next().get(), 10);
    assertThat(second.jobs()).extracting(Job::id).containsExactly(late1, late2);
    assertThat(second.next()).isEmpty();
    assertThat(queue.count(rare)).as("a count reads the whole index").isEqualTo(2);
  }

  @Test
  void badCriteriaAreRefusedNamingTheProblem() {
    JobFilter waiting = JobFilter.status(JobStatus.WAITING);
    assertThatThrownBy(() -> waiting.group(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("group name must not be empty");
    assertThatThrownBy(() -> waiting.group("g".repeat(JobOptions.MAX_GROUP_LENGTH + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most " + JobOptions.MAX_GROUP_LENGTH);
    assertThatThrownBy(() -> waiting.uniqueKeyPrefix(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unique key prefix has 1 to " + UniqueKey.MAX_KEY_LENGTH);
    assertThatThrownBy(() -> waiting.group(null)).isInstanceOf(NullPointerException.class);
    assertThat(waiting.group("a").uniqueKeyPrefix("x"))
        .isEqualTo(JobFilter.status(JobStatus.WAITING).uniqueKeyPrefix("x").group("a"))
        .hasToString("JobFilter[statuses=[WAITING], group=a, uniqueKeyPrefix=x]");
    assertThat(waiting.group("a")).isNotEqualTo(waiting);
  }
}
