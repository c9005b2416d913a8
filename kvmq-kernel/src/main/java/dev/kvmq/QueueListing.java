package dev.kvmq;

import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Reading a {@link Queue}'s jobs for people: the listing in queue order with places and statuses,
 * its pages, and the dead letters' pages. Reads only; a record that can't be decoded is logged and
 * left out.
 *
 * <p>Locking: none (no state of its own).
 *
 * @param <S> the state type
 */
final class QueueListing<S> {

  private static final System.Logger LOG = System.getLogger(Queue.class.getName());

  /** Priority (higher first), then creation (the id). */
  static final Comparator<JobRecord> QUEUE_ORDER =
      Comparator.<JobRecord>comparingLong(r -> QueueKeys.rank(r.priority)).thenComparing(r -> r.id);

  private final Queue<S> queue;

  QueueListing(Queue<S> queue) {
    this.queue = queue;
  }

  /** See {@link Queue#jobs(JobStatus, int, int)}. */
  List<JobEntry<S>> jobs(JobStatus status, int offset, int limit) {
    if (status == JobStatus.DEAD) {
      throw new IllegalArgumentException(
          "dead letters are listed by deadLetters(), not jobs(DEAD, ...)");
    }
    if (status == JobStatus.CANCELLED) {
      throw new IllegalArgumentException(
          "cancelled jobs have left the queue: jobs(...) lists none; read one with job(id)");
    }
    checkPage(offset, limit);
    long now = queue.clock.millis();
    List<JobRecord> records = new ArrayList<>();
    for (KvEntry e : queue.store.list(queue.keys.jobs())) {
      JobRecord r = readable(e);
      if (r != null
          && r.state != JobRecord.State.DEAD
          && r.state != JobRecord.State.CANCELLED
          && r.state != JobRecord.State.COMPLETED) {
        records.add(r);
      }
    }
    records.sort(QUEUE_ORDER);
    List<JobEntry<S>> entries = new ArrayList<>(Math.min(limit, records.size()));
    int place = 0;
    int skipped = 0;
    for (JobRecord r : records) {
      JobStatus st = r.statusAt(now);
      int at = st == JobStatus.PROCESSING || st == JobStatus.HELD ? 0 : ++place;
      if (status != null && st != status) {
        continue;
      }
      if (skipped < offset) {
        skipped++;
        continue;
      }
      if (entries.size() == limit) {
        break;
      }
      entries.add(new JobEntry<>(queue.toJob(r, now), at));
    }
    return entries;
  }

  /** See {@link Queue#deadLetters(int, int)}. */
  List<Job<S>> deadLetters(int offset, int limit) {
    checkPage(offset, limit);
    if (limit == 0) {
      return List.of();
    }
    List<KvEntry> index =
        queue.store.list(
            queue.keys.dead(), (int) Math.min((long) offset + limit, Integer.MAX_VALUE), false);
    index = index.subList(Math.min(offset, index.size()), index.size());
    long now = queue.clock.millis();
    List<Key> ids = new ArrayList<>(index.size());
    for (KvEntry e : index) {
      ids.add(queue.keys.job(QueueKeys.idOf(e.key())));
    }
    List<Job<S>> jobs = new ArrayList<>(ids.size());
    for (Optional<KvEntry> e : queue.store.getMany(ids)) {
      e.map(this::readable).ifPresent(r -> jobs.add(queue.toJob(r, now)));
    }
    return jobs;
  }

  /** The most jobs a page of {@link Queue#list} holds. */
  static final int MAX_PAGE = 1000;

  /** See {@link Queue#list(JobFilter, String, int)}. */
  JobPage<S> page(JobFilter filter, String cursor, int limit) {
    Objects.requireNonNull(filter, "filter");
    if (limit < 1 || limit > MAX_PAGE) {
      throw new IllegalArgumentException("a page holds 1 to " + MAX_PAGE + " jobs: " + limit);
    }
    List<Index> indexes = indexes(filter.status());
    int from = 0;
    Key start = null;
    if (cursor != null) {
      start = start(indexes, filter, cursor);
      while (!indexes.get(from).range().contains(start)) {
        from++;
      }
    }
    // the page's entries and one more (the next page's first), from the cursor's index on
    List<KvEntry> entries = new ArrayList<>();
    for (int i = from; i < indexes.size() && entries.size() <= limit; i++) {
      KeyRange range = indexes.get(i).range();
      if (i == from && start != null) {
        range = range.from(start);
      }
      entries.addAll(queue.store.list(range, limit + 1 - entries.size(), false));
    }
    Optional<String> next = Optional.empty();
    if (entries.size() > limit) {
      next = Optional.of(cursorOf(entries.get(limit).key()));
      entries = entries.subList(0, limit);
    }
    List<Key> ids = new ArrayList<>(entries.size());
    for (KvEntry e : entries) {
      ids.add(queue.keys.job(QueueKeys.idOf(e.key())));
    }
    long now = queue.clock.millis();
    List<Job<S>> jobs = new ArrayList<>(ids.size());
    if (!ids.isEmpty()) {
      for (Optional<KvEntry> e : queue.store.getMany(ids)) {
        e.map(this::readable).ifPresent(r -> jobs.add(queue.toJob(r, now)));
      }
    }
    return new JobPage<>(jobs, next);
  }

  /** See {@link Queue#count(JobFilter)}. */
  long count(JobFilter filter) {
    long n = 0;
    for (Index index : indexes(Objects.requireNonNull(filter, "filter").status())) {
      n += queue.store.count(index.range());
    }
    return n;
  }

  /**
   * An index a status lists from, and how many parts past the queue's root its keys have (a name, a
   * position and the job's id; a parked job's key also names its group).
   */
  private record Index(KeyRange range, int parts) {}

  /**
   * The indexes a status lists from, in listing order: one index per state, so a page is a range
   * read. {@code WAITING} is the ready index, then the jobs of groups that wait for a free slot of
   * their group (parked: ready, but over their group's limit), group by group, each group's in
   * queue order. Further filters (a group, a unique key) select a sub-index here when their areas
   * add one.
   */
  private List<Index> indexes(JobStatus status) {
    QueueKeys k = queue.keys;
    return switch (status) {
      case WAITING -> List.of(new Index(k.ready(), 3), new Index(k.parkedAll(), 5));
      case DELAYED -> List.of(new Index(k.delayed(), 3));
      case PROCESSING -> List.of(new Index(k.leased(), 3));
      case DEAD -> List.of(new Index(k.dead(), 3));
      case HELD -> List.of(new Index(k.held(), 3));
      case COMPLETED -> List.of(new Index(k.completed(), 3));
      case CANCELLED -> List.of(new Index(k.cancelled(), 3));
    };
  }

  /** A cursor: the index key the next page starts at, in its order-preserving encoding. */
  private static String cursorOf(Key key) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(key.encoded());
  }

  private Key start(List<Index> indexes, JobFilter filter, String cursor) {
    Key key;
    try {
      key = Key.decode(Base64.getUrlDecoder().decode(cursor));
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw badCursor(filter, cursor);
    }
    // an index key: the root, the index's name, a position (a rank or a time) and the job id
    boolean inside = false;
    for (Index index : indexes) {
      inside |= index.range().contains(key) && key.size() == queue.keys.root.size() + index.parts();
    }
    if (!inside) {
      throw badCursor(filter, cursor);
    }
    try {
      QueueKeys.idOf(key);
      QueueKeys.timeOf(key);
    } catch (RuntimeException e) {
      throw badCursor(filter, cursor);
    }
    return key;
  }

  private IllegalArgumentException badCursor(JobFilter filter, String cursor) {
    return new IllegalArgumentException(
        "\""
            + (cursor.length() > 100 ? cursor.substring(0, 100) + "..." : cursor)
            + "\" is not a cursor of a listing of "
            + filter
            + " in queue "
            + queue.name());
  }

  /** Decodes a record, or logs and returns null for one that can't be read (listings skip it). */
  JobRecord readable(KvEntry e) {
    try {
      return JobRecord.decode(e.value());
    } catch (IllegalStateException corrupt) {
      LOG.log(
          System.Logger.Level.ERROR,
          "job " + e.key() + " of queue " + queue.name() + " can't be read; skipped",
          corrupt);
      return null;
    }
  }

  private static void checkPage(int offset, int limit) {
    if (offset < 0 || limit < 0) {
      throw new IllegalArgumentException(
          "offset and limit must not be negative: " + offset + ", " + limit);
    }
  }
}
