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
    List<Job<S>> jobs = new ArrayList<>(index.size());
    for (JobRecord r : records(index)) {
      if (r != null) {
        jobs.add(queue.toJob(r, now));
      }
    }
    return jobs;
  }

  /** The most jobs a page of {@link Queue#list} holds. */
  static final int MAX_PAGE = 1000;

  /** The filter's one status; a filter of several is bad input to a listing or a count. */
  private static JobStatus oneStatus(JobFilter filter) {
    try {
      return filter.status();
    } catch (IllegalStateException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** See {@link Queue#list(JobFilter, String, int)}. */
  JobPage<S> page(JobFilter filter, String cursor, int limit) {
    Objects.requireNonNull(filter, "filter");
    if (limit < 1 || limit > MAX_PAGE) {
      throw new IllegalArgumentException("a page holds 1 to " + MAX_PAGE + " jobs: " + limit);
    }
    List<Index> indexes = indexes(oneStatus(filter));
    Key from = cursor == null ? null : start(indexes, filter, cursor);
    return filter.narrowed() ? scan(indexes, from, filter, limit) : rangePage(indexes, from, limit);
  }

  /** A page of a status alone: the next {@code limit} entries of its indexes, and their jobs. */
  private JobPage<S> rangePage(List<Index> indexes, Key from, int limit) {
    List<KvEntry> entries = read(indexes, from, limit + 1);
    Optional<String> next = Optional.empty();
    if (entries.size() > limit) {
      next = Optional.of(cursorOf(entries.get(limit).key()));
      entries = entries.subList(0, limit);
    }
    long now = queue.clock.millis();
    List<Job<S>> jobs = new ArrayList<>(entries.size());
    for (JobRecord r : records(entries)) {
      if (r != null) {
        jobs.add(queue.toJob(r, now));
      }
    }
    return new JobPage<>(jobs, next);
  }

  /**
   * A page of a narrowed filter: walks the status's indexes from {@code from} (inclusive; null for
   * their start) in batches, keeps the jobs whose records match, and stops at the match after the
   * page's last (the next cursor), at the index's end (no cursor), or after {@link
   * JobFilter#MAX_SCAN} entries (a cursor at the first entry not read), whichever comes first.
   */
  private JobPage<S> scan(List<Index> indexes, Key from, JobFilter filter, int limit) {
    long now = queue.clock.millis();
    List<Job<S>> jobs = new ArrayList<>(limit);
    int budget = JobFilter.MAX_SCAN;
    while (true) {
      int n = Math.min(budget, Math.max(limit + 1, SCAN_BATCH));
      List<KvEntry> entries = read(indexes, from, n + 1);
      List<KvEntry> examined = entries.size() > n ? entries.subList(0, n) : entries;
      List<JobRecord> records = records(examined);
      for (int i = 0; i < records.size(); i++) {
        JobRecord r = records.get(i);
        if (r != null && filter.matchesBeyondStatus(r)) {
          if (jobs.size() == limit) {
            return new JobPage<>(jobs, Optional.of(cursorOf(examined.get(i).key())));
          }
          jobs.add(queue.toJob(r, now));
        }
      }
      budget -= examined.size();
      if (entries.size() <= n) {
        return new JobPage<>(jobs, Optional.empty());
      }
      from = entries.get(n).key();
      if (budget == 0) {
        return new JobPage<>(jobs, Optional.of(cursorOf(from)));
      }
    }
  }

  /**
   * Up to {@code n} entries of {@code indexes}, in listing order, from {@code start} (inclusive; a
   * key of one of them) or, when it is null, from the first.
   */
  private List<KvEntry> read(List<Index> indexes, Key start, int n) {
    int from = 0;
    if (start != null) {
      while (!indexes.get(from).range().contains(start)) {
        from++;
      }
    }
    List<KvEntry> entries = new ArrayList<>();
    for (int i = from; i < indexes.size() && entries.size() < n; i++) {
      KeyRange range = indexes.get(i).range();
      if (i == from && start != null) {
        range = range.from(start);
      }
      entries.addAll(queue.store.list(range, n - entries.size(), false));
    }
    return entries;
  }

  /** How many index entries a filtered scan or count reads at once. */
  private static final int SCAN_BATCH = 500;

  /** The job records the index entries name, in their order; null for one gone or unreadable. */
  private List<JobRecord> records(List<KvEntry> entries) {
    List<JobRecord> records = new ArrayList<>(entries.size());
    if (entries.isEmpty()) {
      return records;
    }
    List<Key> ids = new ArrayList<>(entries.size());
    for (KvEntry e : entries) {
      ids.add(queue.keys.job(QueueKeys.idOf(e.key())));
    }
    for (Optional<KvEntry> e : queue.store.getMany(ids)) {
      records.add(e.map(this::readable).orElse(null));
    }
    return records;
  }

  /** See {@link Queue#count(JobFilter)}. */
  long count(JobFilter filter) {
    List<Index> indexes = indexes(oneStatus(Objects.requireNonNull(filter, "filter")));
    if (!filter.narrowed()) {
      long n = 0;
      for (Index index : indexes) {
        n += queue.store.count(index.range());
      }
      return n;
    }
    long count = 0;
    Key from = null;
    while (true) {
      List<KvEntry> entries = read(indexes, from, SCAN_BATCH + 1);
      List<KvEntry> examined =
          entries.size() > SCAN_BATCH ? entries.subList(0, SCAN_BATCH) : entries;
      for (JobRecord r : records(examined)) {
        if (r != null && filter.matchesBeyondStatus(r)) {
          count++;
        }
      }
      if (entries.size() <= SCAN_BATCH) {
        return count;
      }
      from = entries.get(SCAN_BATCH).key();
    }
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
   * queue order. A group or unique-key filter reads these and checks each job ({@link #scan}).
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
