package dev.kvmq;

import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The held-job step of a worker's pass, for a queue whose held-job policy is a timeout ({@link
 * Queue.Builder#heldTimeout}): reads a bounded batch of the held index up to {@code now - timeout},
 * releases those jobs with the pure {@link Transitions#resolveHeld} in one commit, and logs one
 * warning per job released (docs/semantics.md, "Held jobs"). A held record that can't be read is
 * moved aside like an unreadable record anywhere else ({@link Transitions#quarantine}). A commit
 * that loses a race (the job's transaction ended, or another worker released it first) moves
 * nothing; the next pass reads again.
 *
 * <p>Locking: none; used by one pass at a time.
 */
final class HeldResolver {

  static final int BATCH = 64;
  private static final System.Logger LOG = System.getLogger(HeldResolver.class.getName());

  private final QueueKeys keys;
  private final KvStore store;
  private final long timeoutMillis; // 0: keep held jobs
  private final int batch;

  HeldResolver(QueueKeys keys, KvStore store, Optional<Duration> timeout) {
    this(keys, store, timeout, BATCH);
  }

  /** A resolver that releases up to {@code batch} held jobs per call (tests: small ones). */
  HeldResolver(QueueKeys keys, KvStore store, Optional<Duration> timeout, int batch) {
    this.keys = keys;
    this.store = store;
    this.timeoutMillis = timeout.map(Duration::toMillis).orElse(0L);
    this.batch = batch;
  }

  private GroupBook.Limits limits = g -> Queue.UNLIMITED;

  /** Sets the queue's group limits (default: every group unlimited). */
  HeldResolver limits(GroupBook.Limits limits) {
    this.limits = limits;
    return this;
  }

  /**
   * Releases one batch of the jobs held past the timeout at {@code now}; true if there may be more.
   */
  boolean resolveDue(long now) {
    if (timeoutMillis == 0) {
      return false;
    }
    List<KvEntry> index = store.list(keys.heldUntil(now - timeoutMillis), batch, false);
    if (index.isEmpty()) {
      return false;
    }
    List<Key> jobKeys = new ArrayList<>(index.size());
    for (KvEntry e : index) {
      jobKeys.add(keys.job(QueueKeys.idOf(e.key())));
    }
    List<Transitions.Read> reads = new ArrayList<>(index.size());
    List<Claimer.Quarantine> quarantined = new ArrayList<>();
    List<Optional<KvEntry>> records = store.getMany(jobKeys);
    for (int i = 0; i < records.size(); i++) {
      Optional<KvEntry> e = records.get(i);
      if (e.isPresent()) {
        Claimer.readOrQuarantine(index.get(i).key(), e.get(), quarantined).ifPresent(reads::add);
      }
    }
    Claimer.commitQuarantines(keys, store, quarantined);
    List<JobRecord> held = new ArrayList<>(reads.size());
    for (Transitions.Read read : reads) {
      held.add(read.record());
    }
    GroupBook book = GroupReads.book(store, keys, limits, GroupReads.groupsOf(held));
    Transitions.HeldMove move = Transitions.resolveHeld(keys, reads, now, timeoutMillis, book);
    if (!move.moved().isEmpty() && store.commit(move.operation()).ok()) {
      for (JobRecord r : move.moved()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "job "
                + r.id
                + " of queue "
                + keys.queue
                + " was held since "
                + Instant.ofEpochMilli(r.createdAt())
                + ", longer than the held timeout of "
                + Duration.ofMillis(timeoutMillis)
                + ": its transaction never ended here (the process died before its commit or"
                + " rollback was applied); released it to run");
      }
    }
    return index.size() == batch;
  }

  /**
   * The ranges whose first entries {@link #nextChange} reads: the held jobs, or none when held jobs
   * never time out.
   */
  List<KeyRange> horizon() {
    return timeoutMillis == 0 ? List.of() : List.of(keys.held());
  }

  /**
   * The earliest of {@code at} and the time the oldest held job's timeout passes.
   *
   * @param firsts the first entries of the {@link #horizon()} ranges, in their order
   */
  long nextChange(long at, List<Optional<KvEntry>> firsts) {
    if (firsts.isEmpty() || firsts.get(0).isEmpty()) {
      return at;
    }
    return Math.min(at, QueueKeys.timeOf(firsts.get(0).get().key()) + timeoutMillis);
  }
}
