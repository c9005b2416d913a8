package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * The history part of {@link QueueModelContract}'s reference model (docs/semantics.md, "History"):
 * a random retention per run, what pruning must leave, and the check that listing and counting by
 * status, paged by a cursor, match the model after every step.
 */
final class HistoryModel {

  private HistoryModel() {}

  /** A retention for one run: every kind of keep for completed jobs and dead letters. */
  static Retention randomRetention(SplittableRandom r) {
    Retention.Keep completed =
        switch (r.nextInt(5)) {
          case 0 -> Retention.Keep.none();
          case 1 -> Retention.Keep.newest(1 + r.nextInt(3));
          case 2 -> Retention.Keep.youngerThan(Duration.ofMillis(1_000 + r.nextInt(8) * 1_000L));
          case 3 -> Retention.Keep.atMost(Duration.ofMillis(3_000 + r.nextInt(8) * 1_000L), 2);
          default -> Retention.Keep.unlimited();
        };
    Retention.Keep dead =
        switch (r.nextInt(6)) {
          case 0 -> Retention.Keep.none();
          case 1 -> Retention.Keep.newest(1 + r.nextInt(2));
          case 2 -> Retention.Keep.youngerThan(Duration.ofMillis(5_000));
          default -> Retention.Keep.unlimited();
        };
    return Retention.defaults().completed(completed).dead(dead);
  }

  /** What pruning at {@code now} leaves of the jobs in {@code state}: the model's rule. */
  static void prune(
      Map<String, QueueModelContract.M> model,
      JobRecord.State state,
      Retention.Keep keep,
      long now) {
    List<QueueModelContract.M> kept = ended(model, state);
    List<QueueModelContract.M> gone = new ArrayList<>();
    for (QueueModelContract.M m : kept) {
      if (keep.maxAge().isPresent() && m.finishedAt <= now - keep.maxAge().get().toMillis()) {
        gone.add(m);
      }
    }
    kept.removeAll(gone);
    if (keep.maxCount().isPresent()) {
      while (kept.size() > keep.maxCount().getAsLong()) {
        gone.add(kept.remove(0));
      }
    }
    gone.forEach(m -> model.remove(m.id));
  }

  /** The jobs in {@code state}, oldest end first (the history index's order). */
  private static List<QueueModelContract.M> ended(
      Map<String, QueueModelContract.M> model, JobRecord.State state) {
    return new ArrayList<>(
        model.values().stream()
            .filter(m -> m.state == state)
            .sorted(
                Comparator.<QueueModelContract.M>comparingLong(m -> m.finishedAt)
                    .thenComparing(m -> m.id))
            .toList());
  }

  /**
   * Every status listed page by page (random page sizes, each next page from the last one's cursor)
   * and counted: the ids in the index's order, as the model has them; kept jobs with their outcome,
   * result and finish time.
   */
  static void check(
      Queue<String> queue, Map<String, QueueModelContract.M> model, long now, SplittableRandom r) {
    for (JobStatus status : JobStatus.values()) {
      checkListing(queue, JobFilter.status(status), expected(model, status), r);
      // the same status narrowed to a unique-key prefix ("k" takes every key, "kN" one)
      String prefix = r.nextBoolean() ? "k" : "k" + r.nextInt(3);
      List<String> withKey =
          expected(model, status).stream()
              .filter(
                  id -> {
                    UniqueKey u = model.get(id).unique;
                    return u != null && u.key().startsWith(prefix);
                  })
              .toList();
      checkListing(queue, JobFilter.status(status).uniqueKeyPrefix(prefix), withKey, r);
    }
    for (QueueModelContract.M m : model.values()) {
      if (m.state == JobRecord.State.COMPLETED) {
        Job<String> j = queue.job(m.id).orElseThrow();
        assertThat(j.status()).isEqualTo(JobStatus.COMPLETED);
        assertThat(j.result()).as("result of %s", m.id).isEqualTo(Optional.ofNullable(m.result));
        assertThat(j.finishedAt().map(java.time.Instant::toEpochMilli)).hasValue(m.finishedAt);
        assertThat(j.attempts()).isNotEmpty();
        Attempt last = j.attempts().get(j.attempts().size() - 1);
        assertThat(last.number()).isEqualTo(j.attempt());
        assertThat(last.endedAt().map(java.time.Instant::toEpochMilli)).hasValue(m.finishedAt);
        assertThat(last.error()).isEmpty();
      }
    }
  }

  /**
   * One filter's count and its listing page by page (random page sizes, each page from the last
   * one's cursor): {@code expected}'s ids, in its order.
   */
  private static void checkListing(
      Queue<String> queue, JobFilter filter, List<String> expected, SplittableRandom r) {
    JobStatus status = filter.status();
    assertThat(queue.count(filter)).as("count of %s", filter).isEqualTo(expected.size());
    List<String> listed = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      JobPage<String> page = queue.list(filter, cursor, 1 + r.nextInt(4));
      page.jobs().forEach(j -> listed.add(j.id()));
      cursor = page.next().orElse(null);
      assertThat(++pages).as("paging ends").isLessThan(10_000);
      if (cursor != null) {
        assertThat(page.jobs()).isNotEmpty();
      }
    } while (cursor != null);
    assertThat(listed).as("listing of %s by cursor", filter).containsExactlyElementsOf(expected);
    if (cursor == null && r.nextInt(10) == 0 && status != JobStatus.WAITING) {
      String foreign = queue.list(JobFilter.status(JobStatus.WAITING), null, 1).next().orElse(null);
      if (foreign != null) {
        String f = foreign;
        assertThatThrownBy(() -> queue.list(filter, f, 1))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not a cursor");
      }
    }
  }

  /** The ids a listing of {@code status} must give, in its index's order. */
  private static List<String> expected(Map<String, QueueModelContract.M> model, JobStatus status) {
    JobRecord.State state =
        switch (status) {
          case WAITING -> JobRecord.State.READY;
          case DELAYED -> JobRecord.State.DELAYED;
          case PROCESSING -> JobRecord.State.LEASED;
          case DEAD -> JobRecord.State.DEAD;
          case HELD -> JobRecord.State.HELD;
          case COMPLETED -> JobRecord.State.COMPLETED;
          case CANCELLED -> JobRecord.State.CANCELLED;
        };
    Comparator<QueueModelContract.M> order =
        switch (state) {
          case READY -> QueueModelContract.Run.ORDER;
          case DELAYED -> Comparator.comparingLong(m -> m.delayUntil);
          case LEASED -> Comparator.comparingLong(m -> m.leaseUntil);
          case HELD -> Comparator.comparingLong(m -> m.heldAt);
          case DEAD, COMPLETED -> Comparator.comparingLong(m -> m.finishedAt);
          case CANCELLED -> Comparator.comparingLong(m -> m.cancelledAt);
        };
    Comparator<QueueModelContract.M> byId = Comparator.comparing(m -> m.id);
    return model.values().stream()
        .filter(m -> m.state == state)
        .sorted(state == JobRecord.State.READY ? order : order.thenComparing(byId))
        .map(m -> m.id)
        .toList();
  }
}
