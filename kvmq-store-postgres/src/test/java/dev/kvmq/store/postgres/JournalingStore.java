package dev.kvmq.store.postgres;

import dev.kvmq.JobRecordPeek;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A store wrapper for the crash test: it adds a journal entry to every push, claim and completion
 * of the queue {@value #QUEUE}, <em>in the same atomic operation</em>, so the journal holds exactly
 * what was committed, whoever crashed when:
 *
 * <pre>
 * ["journal", "pushed", id]          -> node     the push committed
 * ["journal", "claim", id, token]    -> node     a claim committed, with its fencing token
 * ["journal", "done", id, token]     -> node     a completion committed; token: that of the
 *                                                record it completed (the lease's)
 * </pre>
 *
 * A completion's token is read from the record it checks: the completion checks the record's
 * versionstamp, so when it commits, the record it deletes is the one read here. Nothing else of the
 * operations changes: checks and mutations pass through as they are.
 */
final class JournalingStore extends ForwardingKvStore {

  static final String QUEUE = "jobs";
  static final Key JOBS = Key.of("kvmq", QUEUE, "job");
  private static final Key READY = Key.of("kvmq", QUEUE, "ready");
  static final Key PUSHED = Key.of("journal", "pushed");
  static final Key CLAIMED = Key.of("journal", "claim");
  static final Key DONE = Key.of("journal", "done");

  private final byte[] node;

  JournalingStore(KvStore delegate, String node) {
    super(delegate);
    this.node = node.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    return delegate.commitAll(journaled(operations, false));
  }

  @Override
  public List<CommitResult> claim(KeyRange range, int limit, ClaimPlanner planner) {
    return delegate.claim(range, limit, planningThen(planner, ops -> journaled(ops, true)));
  }

  /**
   * The operations with their journal entries: a push's and a completion's wherever they are
   * committed, a claim's in a claim's commit. A claim's commit also carries the completions that
   * wait for it (the kernel's group committer lets outcomes ride in a claim), so a completion is
   * told from a claim by what it does to the job's record (deletes it under a check), not by the
   * path. The records of the completions are read here, in a claim while it plans: a plain read on
   * another connection, which the claim's row locks do not block.
   */
  private List<AtomicOperation> journaled(List<AtomicOperation> operations, boolean inClaim) {
    List<Key> completed = new ArrayList<>();
    for (AtomicOperation op : operations) {
      Key job = jobDeletedWithCheck(op);
      if (job != null) {
        completed.add(job);
      }
    }
    List<Optional<KvEntry>> records = completed.isEmpty() ? List.of() : delegate.getMany(completed);
    List<AtomicOperation> journaled = new ArrayList<>(operations.size());
    int c = 0;
    for (AtomicOperation op : operations) {
      AtomicOperation.Builder b = copy(op);
      Key job = jobDeletedWithCheck(op);
      if (job != null) {
        Optional<KvEntry> record = records.get(c++);
        long checked = checkedVersionstamp(op, job);
        if (record.isPresent() && record.get().versionstamp() == checked) {
          b.set(DONE.append(idOf(job), JobRecordPeek.token(record.get().value())), node);
        }
        // otherwise the record changed since: the operation's own check refuses it
      } else if (inClaim && deletes(op, READY)) {
        for (AtomicOperation.Mutation m : op.mutations()) {
          if (!m.isDelete() && isJob(m.key())) {
            b.set(CLAIMED.append(idOf(m.key()), JobRecordPeek.token(m.value())), node);
          }
        }
      }
      for (AtomicOperation.Check check : op.checks()) {
        if (check.versionstamp() == AtomicOperation.ABSENT
            && isJob(check.key())
            && sets(op, check.key())) {
          b.set(PUSHED.append(idOf(check.key())), node);
        }
      }
      journaled.add(b.build());
    }
    return journaled;
  }

  /** Whether {@code op} deletes a key under {@code prefix} (a claim takes its job out of ready). */
  private static boolean deletes(AtomicOperation op, Key prefix) {
    return op.mutations().stream().anyMatch(m -> m.isDelete() && m.key().startsWith(prefix));
  }

  private static AtomicOperation.Builder copy(AtomicOperation op) {
    AtomicOperation.Builder b = AtomicOperation.builder();
    for (AtomicOperation.Check check : op.checks()) {
      b.check(check.key(), check.versionstamp());
    }
    for (AtomicOperation.Mutation m : op.mutations()) {
      if (m.isDelete()) {
        b.delete(m.key());
      } else {
        b.set(m.key(), m.value());
      }
    }
    return b;
  }

  /** The job key that {@code op} deletes under a check on it (a completion), or null. */
  private static Key jobDeletedWithCheck(AtomicOperation op) {
    for (AtomicOperation.Mutation m : op.mutations()) {
      if (m.isDelete() && isJob(m.key())) {
        for (AtomicOperation.Check check : op.checks()) {
          if (check.key().equals(m.key()) && check.versionstamp() != AtomicOperation.ABSENT) {
            return m.key();
          }
        }
      }
    }
    return null;
  }

  private static long checkedVersionstamp(AtomicOperation op, Key key) {
    for (AtomicOperation.Check check : op.checks()) {
      if (check.key().equals(key)) {
        return check.versionstamp();
      }
    }
    throw new IllegalStateException("no check on " + key);
  }

  private static boolean sets(AtomicOperation op, Key key) {
    return op.mutations().stream().anyMatch(m -> !m.isDelete() && m.key().equals(key));
  }

  private static boolean isJob(Key key) {
    return key.size() == JOBS.size() + 1 && key.startsWith(JOBS);
  }

  static String idOf(Key key) {
    return key.getString(key.size() - 1);
  }
}
