package dev.kvmq;

import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
      if (r != null && r.state != JobRecord.State.DEAD && r.state != JobRecord.State.CANCELLED) {
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

  /** See {@link Queue#list(JobFilter, String, int)}. */
  JobPage<S> page(JobFilter filter, String cursor, int limit) {
    throw new UnsupportedOperationException("not yet");
  }

  /** See {@link Queue#count(JobFilter)}. */
  long count(JobFilter filter) {
    throw new UnsupportedOperationException("not yet");
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
