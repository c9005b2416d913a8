package dev.kvmq;

import dev.kvmq.TransitionTable.Event;
import dev.kvmq.TransitionTable.Node;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The push of a job with a unique key (docs/flow-control.md, "Unique jobs"): pure functions from
 * what was read (the key's entry and the job it names) and the time to one atomic operation, or to
 * the duplicate it found.
 *
 * <p>The key's entry {@code ["kvmq", queue, "unique", key]} names the job holding it. A push that
 * takes the key checks the entry absent (or, when it takes over an entry whose throttle period
 * ended or whose job is gone, checks the entry's versionstamp), so of two pushes of one key at the
 * same instant one commits and the other's commit fails; made again from a fresh read, it finds the
 * first one's job. The entry is deleted in the operation that ends its holder's scope ({@link
 * Transitions#releaseUnique}), checked by the holder's versionstamp.
 */
final class UniqueTransitions {

  private UniqueTransitions() {}

  /**
   * The value of a unique key's entry: the id of the job that took the key, and for a {@link
   * UniqueKey.Scope#PERIOD throttle} key the end of its period (epoch ms); 0 for a key held by its
   * job, as long as the job's scope lasts.
   *
   * @param id the job's id
   * @param until the end of a throttle period, or 0
   */
  record Holder(String id, long until) {

    private static final byte FORMAT = 1;

    byte[] encode() {
      byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
      return ByteBuffer.allocate(1 + 8 + idBytes.length)
          .put(FORMAT)
          .putLong(until)
          .put(idBytes)
          .array();
    }

    static Holder decode(byte[] bytes) {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      if (bytes.length < 9 || in.get() != FORMAT) {
        throw new IllegalStateException(
            "unknown unique key entry (" + bytes.length + " bytes): written by a newer kvmq?");
      }
      long until = in.getLong();
      return new Holder(new String(bytes, 9, bytes.length - 9, StandardCharsets.UTF_8), until);
    }

    /** Whether the key is taken at {@code now} by time alone: a throttle period not yet over. */
    boolean throttles(long now) {
      return until != 0 && until > now;
    }
  }

  /**
   * What a push of a unique key read: the key's entry (empty if the key is free) and its
   * versionstamp, and the job the entry names as read.
   *
   * @param entry the entry, or empty
   * @param entryVersionstamp the entry's versionstamp (read only when present)
   * @param holder the job the entry names: empty if there is none
   * @param holderUnreadable whether the job the entry names exists but can't be decoded
   */
  record KeyRead(
      Optional<Holder> entry,
      long entryVersionstamp,
      Optional<Transitions.Read> holder,
      boolean holderUnreadable) {

    /** A free key. */
    static KeyRead free() {
      return new KeyRead(Optional.empty(), AtomicOperation.ABSENT, Optional.empty(), false);
    }
  }

  /** The plan of a push with a unique key. */
  sealed interface Plan permits Create, Debounce, Duplicate {}

  /**
   * The key is free (or its entry is over): commit {@code applied}, which writes the job and takes
   * the key; a failed commit means another push took it first.
   *
   * @param applied the operation and the new job
   */
  record Create(Transitions.Applied applied) implements Plan {}

  /**
   * The key's holder is waiting and the push debounces: commit {@code applied}, which gives the
   * holder the pushed state and due time.
   *
   * @param applied the operation and the holder after it
   */
  record Debounce(Transitions.Applied applied) implements Plan {}

  /**
   * The key is taken: nothing to commit.
   *
   * @param id the holder's id
   * @param holder the holder as read; empty if it has finished within a throttle period (or can't
   *     be read)
   */
  record Duplicate(String id, Optional<JobRecord> holder) implements Plan {}

  /**
   * Plans the push of a new job {@code id} with {@code o.unique()} from what was read of its key.
   *
   * @param read the key's entry and its holder
   * @param traceContext the pusher's trace context
   * @param g the book of the groups of the new job and of the holder (a new job of a group is
   *     admitted or parked; a debounce that moves a holder between ready and delayed frees or takes
   *     its group's slot)
   * @param admitLater whether a new due job of a group is left for a promotion to admit: written
   *     delayed, due at once, its group's record untouched ({@link Transitions#pushInto(
   *     dev.kvmq.store.AtomicOperation.Builder, QueueKeys, String, byte[], JobOptions, long, Map,
   *     GroupBook, boolean)}), and no parked job of the last holder's group is admitted; a debounce
   *     is planned as without it
   */
  static Plan push(
      QueueKeys k,
      KeyRead read,
      String id,
      byte[] payload,
      JobOptions o,
      long now,
      Map<String, String> traceContext,
      GroupBook g,
      boolean admitLater) {
    UniqueKey unique = o.unique();
    Key entryKey = k.unique(unique.key());
    if (read.entry().isPresent()) {
      Holder h = read.entry().get();
      Optional<JobRecord> holder = read.holder().map(Transitions.Read::record);
      boolean holds =
          holder.isPresent()
              && holder.get().holdsUnique
              && holder.get().unique != null
              && holder.get().unique.key().equals(unique.key());
      if (h.throttles(now) || holds || read.holderUnreadable()) {
        if (unique.debounced() && holder.isPresent() && waiting(holder.get())) {
          return debounce(k, read, payload, o, now, g);
        }
        return new Duplicate(h.id(), holder);
      }
      // the entry is over: a throttle period that ended, or a holder gone (or no longer holding:
      // an entry an older kvmq left): take it over, checking the entry and that its job is gone
    }
    AtomicOperation.Builder op = AtomicOperation.builder();
    if (read.entry().isPresent()) {
      op.check(entryKey, read.entryVersionstamp());
      if (read.entry().get().until() != 0) {
        // a throttle period that ended: its job, if it still runs, no longer has a say
      } else if (read.holder().isEmpty()) {
        op.checkAbsent(k.job(read.entry().get().id()));
      } else {
        Transitions.Read holder = read.holder().get();
        op.check(k.job(holder.record().id), holder.versionstamp());
      }
    } else {
      op.checkAbsent(entryKey);
    }
    JobRecord r = Transitions.pushInto(op, k, id, payload, o, now, traceContext, g, admitLater);
    if (!admitLater) {
      // with admitLater the new job moves no group, and the book holds at most the last holder's
      // group: finishing it would only admit that group's parked jobs, writing its record inside
      // the caller's transaction; the group's next commit of its own admits them instead
      g.finishInto(op);
    }
    long until = unique.scope() == UniqueKey.Scope.PERIOD ? now + unique.period().toMillis() : 0;
    op.set(entryKey, new Holder(id, until).encode());
    return new Create(new Transitions.Applied(op.build(), Optional.of(r), Optional.empty()));
  }

  /** Ready or delayed: not claimed, not held, not dead. */
  private static boolean waiting(JobRecord r) {
    return r.state == JobRecord.State.READY || r.state == JobRecord.State.DELAYED;
  }

  /**
   * The holder gets the pushed state and due time: due at the push's due time, ready or delayed;
   * its id, priority, retries and key stay. The operation checks the holder's versionstamp and the
   * key entry's.
   */
  private static Debounce debounce(
      QueueKeys k, KeyRead read, byte[] payload, JobOptions o, long now, GroupBook g) {
    Transitions.Read holder = read.holder().orElseThrow();
    JobRecord before = holder.record();
    JobRecord.Draft d = before.draft();
    d.payload = payload;
    d.delayUntil = o.dueAt(java.time.Instant.ofEpochMilli(now)).toEpochMilli();
    d.state = d.delayUntil > now ? JobRecord.State.DELAYED : JobRecord.State.READY;
    g.move(before, d);
    JobRecord after = d.build();
    TransitionTable.check(Event.DEBOUNCE, Node.of(before), Node.of(after));
    Key job = k.job(before.id);
    AtomicOperation.Builder op =
        AtomicOperation.builder()
            .check(job, holder.versionstamp())
            .check(k.unique(o.unique().key()), read.entryVersionstamp())
            .set(job, after.encode());
    Key oldIndex = k.indexOf(before);
    Key newIndex = k.indexOf(after);
    if (!oldIndex.equals(newIndex)) {
      op.delete(oldIndex).set(newIndex, QueueKeys.EMPTY);
    }
    g.finishInto(op);
    return new Debounce(new Transitions.Applied(op.build(), Optional.of(after), Optional.empty()));
  }
}
