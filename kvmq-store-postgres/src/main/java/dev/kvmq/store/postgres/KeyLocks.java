package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The advisory locks of schema version 4: which locks a batch takes, in which mode, their hash (the
 * same on every node), and how a big batch is cut so that it need not lock the whole store.
 *
 * <p>A key is locked through its <em>lock key</em> ({@link #lockKey}): its first two parts and its
 * last. Every key of one job ({@code ["kvmq", queue, "job", id]} and its index entries {@code
 * ["kvmq", queue, "ready", rank, id]}, {@code [..., "leased", until, id]}, ...) has the lock key
 * {@code ["kvmq", queue, id]}, so an operation on one job takes one lock however many of its index
 * entries it moves, and a claim of n jobs takes n + 1 locks instead of 3n + 1. Any function of the
 * key alone is exact: two commits that touch one key compute one lock for it; keys that share a
 * lock key only wait for each other. A key the batch only checks takes its lock shared, a key it
 * writes exclusively: checks of one key (every claim checks the pause of starts) do not wait for
 * each other, and a write waits for them and they for it.
 *
 * <p><b>Locking.</b> None: pure functions; the locks themselves are taken by the commit function in
 * PostgreSQL (schema-v5.sql).
 */
final class KeyLocks {

  /**
   * A batch that takes more locks than this locks the whole store instead. Below PostgreSQL's
   * default {@code max_locks_per_transaction} (64), so that commits from every connection at once
   * still fit in its shared lock table.
   */
  static final int MAX_KEY_LOCKS = 48;

  private KeyLocks() {}

  /**
   * The locks of one batch: parallel arrays, sorted by hash (as signed ints) and distinct, so that
   * every commit takes its locks in one order and commits can't deadlock on them; {@code shared[i]}
   * is true where every key of hash {@code hashes[i]} is only checked.
   */
  record Locks(int[] hashes, boolean[] shared) {}

  /**
   * Cuts a batch, in order and between operations, into groups that each take at most {@link
   * #MAX_KEY_LOCKS} locks; an operation that alone takes more is a group of its own. A batch that
   * takes at most that many in all (the usual case: a claim of n jobs takes n + 1) is one group.
   */
  static List<List<AtomicOperation>> lockGroups(List<AtomicOperation> operations) {
    List<byte[]> all = new ArrayList<>();
    for (AtomicOperation op : operations) {
      addKeys(op, all);
    }
    if (distinctLocks(all) <= MAX_KEY_LOCKS) {
      return List.of(operations);
    }
    List<List<AtomicOperation>> groups = new ArrayList<>();
    List<AtomicOperation> group = new ArrayList<>();
    List<byte[]> locked = new ArrayList<>(); // the keys of the group so far
    for (AtomicOperation op : operations) {
      List<byte[]> own = new ArrayList<>();
      addKeys(op, own);
      List<byte[]> union = new ArrayList<>(locked);
      union.addAll(own);
      if (!group.isEmpty() && distinctLocks(union) > MAX_KEY_LOCKS) {
        groups.add(group);
        group = new ArrayList<>();
        union = own;
      }
      group.add(op);
      locked = union;
    }
    groups.add(group);
    return groups;
  }

  private static void addKeys(AtomicOperation op, List<byte[]> into) {
    for (AtomicOperation.Check check : op.checks()) {
      into.add(check.key().encoded());
    }
    for (AtomicOperation.Mutation m : op.mutations()) {
      into.add(m.key().encoded());
    }
  }

  /** How many distinct locks {@code keys} take. */
  private static int distinctLocks(List<byte[]> keys) {
    int[] hashes = new int[keys.size()];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = lockHash(keys.get(i));
    }
    Arrays.sort(hashes);
    int distinct = 0;
    for (int i = 0; i < hashes.length; i++) {
      if (i == 0 || hashes[i] != hashes[i - 1]) {
        distinct++;
      }
    }
    return distinct;
  }

  /**
   * The advisory locks a batch takes: one per lock key of a key it checks or writes, a 32-bit hash
   * (never 0, which stands for the whole store); exclusive where a key of that hash is written,
   * shared where all are only checked. A batch with more than {@link #MAX_KEY_LOCKS} of them gets
   * null: it locks the whole store instead, so that big batches don't exhaust PostgreSQL's shared
   * lock table. Every node must lock alike: this is part of schema version 4.
   */
  static Locks lockKeys(List<byte[]> checked, List<byte[]> written) {
    // each lock as hash << 1 | shared: sorted, a hash's exclusive entry (0) comes first
    long[] entries = new long[checked.size() + written.size()];
    int n = 0;
    for (byte[] k : written) {
      entries[n++] = (long) lockHash(k) << 1;
    }
    for (byte[] k : checked) {
      entries[n++] = ((long) lockHash(k) << 1) | 1;
    }
    Arrays.sort(entries);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
      if (i == 0 || entries[i] >> 1 != entries[i - 1] >> 1) {
        entries[distinct++] = entries[i]; // the first of its hash: exclusive if any is
      }
    }
    if (distinct > MAX_KEY_LOCKS) {
      return null;
    }
    int[] hashes = new int[distinct];
    boolean[] shared = new boolean[distinct];
    for (int i = 0; i < distinct; i++) {
      hashes[i] = (int) (entries[i] >> 1);
      shared[i] = (entries[i] & 1) == 1;
    }
    return new Locks(hashes, shared);
  }

  /**
   * The key a key is locked by: its first two parts and its last ({@code ["kvmq", queue, id]} for
   * every key of a job); a key of at most three parts is its own.
   */
  static Key lockKey(Key key) {
    int n = key.size();
    if (n <= 3) {
      return key;
    }
    return Key.of(key.get(0), key.get(1), key.get(n - 1));
  }

  /**
   * The lock of a key, from its encoding ({@link Key#encoded()}): the FNV-1a hash, folded to 32
   * bits, of its {@link #lockKey}'s encoding; 0 is kept for the store-wide lock. An encoding is its
   * parts' encodings one after the other, so the lock key's is the key's bytes up to the end of its
   * second part and from the start of its last: found by a scan, without decoding the parts.
   */
  static int lockHash(byte[] key) {
    int n = key.length;
    int parts = 0;
    int endOfSecond = n;
    int lastStart = 0;
    int i = 0;
    while (i < n) {
      int start = i;
      i = skipPart(key, i);
      parts++;
      lastStart = start;
      if (parts == 2) {
        endOfSecond = i;
      }
    }
    long h = FNV_OFFSET;
    if (parts <= 3) {
      h = fnv(h, key, 0, n);
    } else {
      h = fnv(h, key, 0, endOfSecond);
      h = fnv(h, key, lastStart, n);
    }
    int folded = (int) (h ^ (h >>> 32));
    return folded == 0 ? 1 : folded;
  }

  /**
   * Where the first {@code parts} parts of a key's encoding end: the length of the encoding of the
   * key made of them ({@code key.length} if it has no more). The encoding is its parts' encodings
   * one after the other.
   */
  static int endOfPart(byte[] key, int parts) {
    int i = 0;
    for (int p = 0; p < parts && i < key.length; p++) {
      i = skipPart(key, i);
    }
    return i;
  }

  /** The index just after the part that starts at {@code i}. */
  private static int skipPart(byte[] key, int i) {
    int n = key.length;
    byte tag = key[i++];
    if (tag == 0x01 || tag == 0x02) { // bytes or a string: up to a NUL not escaped by 0xFF
      while (i < n) {
        if (key[i] != 0) {
          i++;
        } else if (i + 1 < n && key[i + 1] == (byte) 0xFF) {
          i += 2;
        } else {
          return i + 1;
        }
      }
      return n;
    }
    if (tag == 0x03) { // a long: 8 bytes
      return Math.min(i + 8, n);
    }
    return i; // booleans are the tag alone
  }

  private static final long FNV_OFFSET = 0xcbf29ce484222325L;

  private static long fnv(long h, byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      h ^= bytes[i] & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }
}
