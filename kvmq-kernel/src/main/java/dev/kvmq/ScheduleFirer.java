package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongFunction;

/**
 * The firing step of a worker's pass: reads a bounded batch of the schedules' due index up to now,
 * reads their records (and, for {@link Overlap#SKIP}, their previous jobs), plans each firing with
 * the pure {@link ScheduleTransitions#fire} and commits them as one batch of independent
 * operations. A firing that loses a race (another worker fired the slot first) fails its check and
 * is dropped: the slot was fired once, by the other.
 *
 * <p>A due entry whose record can't be decoded is moved aside ({@link
 * ScheduleTransitions#quarantine}) and logged once; one that does not match its record is removed
 * ({@link ScheduleTransitions#repair}). Neither stops the pass.
 *
 * <p>Locking: none; used by one pass at a time.
 */
final class ScheduleFirer {

  static final int BATCH = 64;
  private static final System.Logger LOG = System.getLogger(ScheduleFirer.class.getName());

  private final QueueKeys keys;
  private final KvStore store;
  private final LongFunction<String> ids;
  private final int batch;

  ScheduleFirer(QueueKeys keys, KvStore store, LongFunction<String> ids) {
    this(keys, store, ids, BATCH);
  }

  /** A firer that fires up to {@code batch} due schedules per call (tests: small ones). */
  ScheduleFirer(QueueKeys keys, KvStore store, LongFunction<String> ids, int batch) {
    this.keys = keys;
    this.store = store;
    this.ids = ids;
    this.batch = batch;
  }

  /** Fires one batch of the schedules due at {@code now}; true if there may be more due. */
  boolean fireDue(long now) {
    List<KvEntry> due = store.list(keys.schedulesDue(now), batch, false);
    if (due.isEmpty()) {
      return false;
    }
    List<Key> recordKeys = new ArrayList<>(due.size());
    for (KvEntry e : due) {
      recordKeys.add(keys.schedule(QueueKeys.idOf(e.key())));
    }
    List<Optional<KvEntry>> records = store.getMany(recordKeys);
    List<ScheduleTransitions.Stored> stored = new ArrayList<>(due.size());
    List<Key> previousKeys = new ArrayList<>();
    List<AtomicOperation> ops = new ArrayList<>(due.size());
    List<String> quarantined = new ArrayList<>(); // per op: the quarantined name, or null
    for (int i = 0; i < due.size(); i++) {
      Key dueKey = due.get(i).key();
      String name = QueueKeys.idOf(dueKey);
      Optional<KvEntry> e = records.get(i);
      ScheduleRecord r = null;
      if (e.isPresent()) {
        try {
          r = ScheduleRecord.decode(e.get().value());
        } catch (ScheduleRecord.Unreadable unreadable) {
          ops.add(ScheduleTransitions.quarantine(keys, dueKey, name, e.get().versionstamp()));
          quarantined.add(name);
          stored.add(null);
          continue;
        }
      }
      long versionstamp = e.map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT);
      Optional<AtomicOperation> repair =
          ScheduleTransitions.repair(keys, dueKey, name, r, versionstamp);
      if (repair.isPresent()) {
        ops.add(repair.get());
        quarantined.add(null);
        stored.add(null);
        continue;
      }
      stored.add(new ScheduleTransitions.Stored(r, versionstamp));
      if (r.overlap == Overlap.SKIP && r.lastJobId != null) {
        previousKeys.add(keys.job(r.lastJobId));
      }
    }
    List<Optional<KvEntry>> previous =
        previousKeys.isEmpty() ? List.of() : store.getMany(previousKeys);
    int p = 0;
    for (ScheduleTransitions.Stored s : stored) {
      if (s == null) {
        continue;
      }
      ScheduleTransitions.Previous prev = ScheduleTransitions.Previous.NONE;
      if (s.record().overlap == Overlap.SKIP && s.record().lastJobId != null) {
        prev = previous(previous.get(p++));
      }
      Optional<ScheduleTransitions.Fired> fired =
          ScheduleTransitions.fire(keys, s, prev, now, () -> ids.apply(now));
      if (fired.isPresent()) {
        ops.add(fired.get().operation());
        quarantined.add(null);
      }
    }
    if (ops.isEmpty()) {
      return due.size() == batch;
    }
    // a refused check: another worker fired or changed the schedule first
    List<CommitResult> results = store.commitAll(ops);
    for (int i = 0; i < results.size(); i++) {
      String name = quarantined.get(i);
      if (name != null && results.get(i).ok()) {
        LOG.log(
            System.Logger.Level.ERROR,
            "schedule "
                + name
                + " of queue "
                + keys.queue
                + " can't be read; moved its due entry aside to "
                + keys.corruptSchedule(name)
                + " (define it again to replace it, or delete it)");
      }
    }
    return due.size() == batch;
  }

  private static ScheduleTransitions.Previous previous(Optional<KvEntry> e) {
    if (e.isEmpty()) {
      return ScheduleTransitions.Previous.NONE;
    }
    JobRecord r;
    try {
      r = JobRecord.decode(e.get().value());
    } catch (IllegalStateException corrupt) {
      r = null; // an unreadable job is not a run in progress; the claim path moves it aside
    }
    return new ScheduleTransitions.Previous(r, e.get().versionstamp());
  }

  /** The ranges whose first entries {@link #nextChange} reads: the schedules' due times. */
  List<KeyRange> horizon() {
    return List.of(keys.dueEntries());
  }

  /**
   * The earliest of {@code at} and the first schedule's next due time.
   *
   * @param firsts the first entries of the {@link #horizon()} ranges, in their order
   */
  long nextChange(long at, List<Optional<KvEntry>> firsts) {
    Optional<KvEntry> first = firsts.get(0);
    return first.isEmpty() ? at : Math.min(at, QueueKeys.timeOf(first.get().key()));
  }
}
