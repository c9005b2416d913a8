package dev.kvmq;

import dev.kvmq.TransitionTable.Event;
import dev.kvmq.TransitionTable.Node;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The group accounting of one atomic operation (docs/flow-control.md, "Groups"): pure, like {@link
 * Transitions}, which calls it for every job an operation moves.
 *
 * <p>A group's record ({@link QueueKeys#group}) counts its <em>admitted</em> jobs (ready and not
 * parked, or leased) and its <em>parked</em> ones (ready, but waiting in the group's parked index
 * for a free slot). A job that would become ready is admitted while {@code admitted < limit} and no
 * job of its group is parked, and parked otherwise; a job that stops being admitted (completed,
 * failed to a delay or a dead letter, deleted) frees its slot, and the same operation admits the
 * group's first parked jobs up to the limit. Every operation that changes a group's counts checks
 * the versionstamp of the record it read and rewrites it, so two operations planned from the same
 * read cannot both commit: {@code admitted <= limit} holds at every commit, whatever the nodes do
 * (a node's own limit; see the docs for nodes that disagree).
 */
final class GroupBook {

  /** How many parked jobs a shell reads per group, ahead of the plan: the ones it may admit. */
  static final int HEADS = 8;

  /**
   * A group's record: its admitted and parked jobs, and until when it admits none ({@code
   * blockedUntil}, epoch ms; 0 when it is not blocked): its rate window was full, or a handler
   * paused its starts. A blocked group is unblocked by the claimer's wake-up once that time has
   * come ({@link QueueKeys#groupWaking}).
   */
  record Counts(int admitted, int parked, long blockedUntil) {
    static final Counts NONE = new Counts(0, 0, 0);

    Counts(int admitted, int parked) {
      this(admitted, parked, 0);
    }

    byte[] encode() {
      if (blockedUntil == 0) {
        return ByteBuffer.allocate(9).put((byte) 1).putInt(admitted).putInt(parked).array();
      }
      return ByteBuffer.allocate(17)
          .put((byte) 2)
          .putInt(admitted)
          .putInt(parked)
          .putLong(blockedUntil)
          .array();
    }

    static Counts decode(byte[] bytes) {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      byte version = bytes.length > 0 ? in.get() : 0;
      if (version == 1 && bytes.length == 9) {
        return new Counts(in.getInt(), in.getInt(), 0);
      }
      if (version == 2 && bytes.length == 17) {
        return new Counts(in.getInt(), in.getInt(), in.getLong());
      }
      throw new IllegalStateException(
          "not a group record of this kvmq: " + bytes.length + " bytes");
    }
  }

  /**
   * What the shell read of one group before planning.
   *
   * @param group the group
   * @param counts its record, {@link Counts#NONE} when absent
   * @param versionstamp the record's versionstamp, {@link AtomicOperation#ABSENT} when absent
   * @param heads its first parked jobs, in parked order (read only when some are parked)
   */
  record Read(String group, Counts counts, long versionstamp, List<Transitions.Read> heads) {}

  /** The limits of a queue's groups. */
  @FunctionalInterface
  interface Limits {
    /** The limit of {@code group}; {@link Queue#UNLIMITED} for none. */
    int of(String group);
  }

  /** The rate limits of a queue's groups (docs/flow-control.md, "Rate limits"). */
  @FunctionalInterface
  interface Rates {
    /** No group has a rate limit. */
    Rates NONE = g -> null;

    /** The rate limit of {@code group}; null for none. */
    RateLimit of(String group);
  }

  /** An operation's book of a group. */
  private static final class Entry {
    final Read read;
    final int limit;
    int admitted;
    int parked;
    long blockedUntil;
    boolean changed;

    Entry(Read read, int limit) {
      this.read = read;
      this.limit = limit;
      this.admitted = read.counts().admitted();
      this.parked = read.counts().parked();
      this.blockedUntil = read.counts().blockedUntil();
    }

    /** Whether a job may be admitted now: a free slot, and the group is not blocked. */
    boolean admits() {
      return admitted < limit && blockedUntil == 0;
    }
  }

  private final QueueKeys keys;
  private final Limits limits;
  // empty and immutable in a book of no group, the book of nearly every claim and completion
  private final Map<String, Entry> groups;
  private final Set<String> touched = new HashSet<>();
  private final List<JobRecord> admittedHeads = new ArrayList<>();

  private GroupBook(QueueKeys keys, Limits limits, Map<String, Read> reads) {
    this.keys = keys;
    this.limits = limits;
    if (reads.isEmpty()) {
      groups = Map.of();
    } else {
      groups = new LinkedHashMap<>();
      for (Read r : reads.values()) {
        groups.put(r.group(), new Entry(r, limits.of(r.group())));
      }
    }
  }

  /**
   * The book of an operation that moves no job of a group between admitted, parked and neither (an
   * operation on jobs of no group, a claim, a reclaim, a renewal): one that does is a bug.
   */
  static GroupBook none() {
    return new GroupBook(null, g -> Queue.UNLIMITED, Map.of());
  }

  /** A book over what the shell read of the groups an operation touches. */
  static GroupBook of(QueueKeys keys, Limits limits, Map<String, Read> reads) {
    return new GroupBook(keys, limits, reads);
  }

  /** The groups the shell must read before planning a move of {@code r}; empty if none. */
  static boolean counts(JobRecord r) {
    return r != null && r.group != null;
  }

  private static boolean admitted(JobRecord r) {
    return r != null
        && r.group != null
        && ((r.state == JobRecord.State.READY && !r.parked) || r.state == JobRecord.State.LEASED);
  }

  private static boolean parked(JobRecord r) {
    return r != null && r.group != null && r.parked;
  }

  /**
   * Books a job's move: {@code before} (null for a new job) becomes {@code after} (null when it is
   * removed). A job that becomes ready without having been admitted is admitted, or parked: this
   * sets {@code after.parked}.
   *
   * @throws IllegalStateException if the move changes a group's counts and the group was not read
   */
  void move(JobRecord before, JobRecord.Draft after) {
    String group = after != null ? after.group : before != null ? before.group : null;
    if (group == null) {
      return;
    }
    boolean wasAdmitted = admitted(before);
    boolean wasParked = parked(before);
    if (before != null) {
      touched.add(before.id);
    }
    if (after != null) {
      touched.add(after.id);
    }
    if (after != null && after.state == JobRecord.State.LEASED) {
      after.parked = false;
      if (!wasAdmitted) {
        throw new IllegalStateException("a job of group " + group + " leased unadmitted. A bug.");
      }
      return;
    }
    if (after != null && after.state == JobRecord.State.READY) {
      if (wasAdmitted) {
        after.parked = false;
        return;
      }
      if (wasParked) {
        after.parked = true;
        return;
      }
      Entry e = entry(group);
      e.changed = true;
      if (e.admits() && e.parked == 0) {
        e.admitted++;
        after.parked = false;
      } else {
        e.parked++;
        after.parked = true;
      }
      return;
    }
    if (after != null) {
      after.parked = false;
    }
    if (wasAdmitted || wasParked) {
      Entry e = entry(group);
      e.changed = true;
      if (wasAdmitted) {
        e.admitted = Math.max(0, e.admitted - 1);
      } else {
        e.parked = Math.max(0, e.parked - 1);
      }
    }
  }

  /**
   * Books a claim's block of a ready, admitted job of a blocked group ({@link
   * TransitionTable.Event#BLOCK}): it becomes parked ({@code after.parked}), freeing its slot.
   *
   * @throws IllegalStateException if {@code before} is not admitted and ready, or its group was not
   *     read
   */
  void park(JobRecord before, JobRecord.Draft after) {
    if (before.state != JobRecord.State.READY || before.parked || before.group == null) {
      throw new IllegalStateException("only a ready, admitted job is blocked. A bug.");
    }
    Entry e = entry(before.group);
    touched.add(before.id);
    after.parked = true;
    e.admitted = Math.max(0, e.admitted - 1);
    e.parked++;
    e.changed = true;
  }

  /**
   * Blocks {@code group}'s admissions until {@code until} (or the later time it is already blocked
   * until): no job of it is admitted by this operation, nor by any other before the claimer wakes
   * the group at that time.
   */
  void block(String group, long until) {
    Entry e = entry(group);
    if (until > e.blockedUntil) {
      e.blockedUntil = until;
      e.changed = true;
    }
  }

  /**
   * Unblocks {@code group} if its blocked time has come at {@code now}: this operation then admits
   * its first parked jobs up to its limit. False when it is not blocked, or blocked past {@code
   * now}.
   */
  boolean wake(String group, long now) {
    Entry e = entry(group);
    if (e.blockedUntil == 0 || e.blockedUntil > now) {
      return false;
    }
    e.blockedUntil = 0;
    e.changed = true;
    return true;
  }

  /**
   * Whether {@code group} has a free slot, is not blocked, and has parked jobs read to fill it
   * with: then this operation admits its first parked jobs up to its limit ({@link #finishInto}).
   * That is the case of a group whose limit is higher under this book's limits than under the ones
   * that parked its jobs (a limit raised or removed); a group with no admitted job has no commit to
   * come that would admit them otherwise.
   */
  boolean reopen(String group) {
    Entry e = entry(group);
    if (!e.admits() || e.parked == 0 || e.read.heads().isEmpty()) {
      return false;
    }
    e.changed = true;
    return true;
  }

  private Entry entry(String group) {
    Entry e = groups.get(group);
    if (e == null) {
      throw new IllegalStateException(
          "the operation moves a job of group " + group + ", which was not read. Indicates a bug.");
    }
    return e;
  }

  /**
   * Finishes the operation: admits each changed group's first parked jobs up to its limit (those
   * the operation does not move already), then checks and writes the record of every group whose
   * counts changed (deleted when both are zero).
   */
  void finishInto(AtomicOperation.Builder op) {
    if (groups.isEmpty()) {
      return;
    }
    for (Entry e : groups.values()) {
      for (Transitions.Read head : e.read.heads()) {
        if (!e.admits() || e.parked == 0) {
          break;
        }
        JobRecord h = head.record();
        if (touched.contains(h.id) || !h.parked) {
          continue;
        }
        JobRecord.Draft d = h.draft();
        d.parked = false;
        JobRecord after = d.build();
        TransitionTable.check(Event.ADMIT, Node.PARKED, Node.READY);
        Key job = keys.job(h.id);
        op.check(job, head.versionstamp())
            .set(job, after.encode())
            .delete(keys.indexOf(h))
            .set(keys.indexOf(after), QueueKeys.EMPTY);
        touched.add(h.id);
        admittedHeads.add(after);
        e.admitted++;
        e.parked--;
        e.changed = true;
      }
      if (!e.changed) {
        continue;
      }
      String group = e.read.group();
      Key key = keys.group(group);
      op.check(key, e.read.versionstamp());
      if (e.admitted == 0 && e.parked == 0 && e.blockedUntil == 0) {
        if (e.read.versionstamp() != AtomicOperation.ABSENT) {
          op.delete(key);
        }
      } else {
        op.set(key, new Counts(e.admitted, e.parked, e.blockedUntil).encode());
      }
      long wasBlocked = e.read.counts().blockedUntil();
      if (wasBlocked != e.blockedUntil) {
        if (wasBlocked != 0) {
          op.delete(keys.groupWaking(wasBlocked, group));
        }
        if (e.blockedUntil != 0) {
          op.set(keys.groupWaking(e.blockedUntil, group), QueueKeys.EMPTY);
        }
      }
    }
  }

  /** The parked jobs {@link #finishInto} admitted, as they are after the commit. */
  List<JobRecord> admittedHeads() {
    return List.copyOf(admittedHeads);
  }
}
