package dev.kvmq.store.postgres;

import dev.kvmq.store.AtomicOperation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The advisory locks of schema versions 2 and 3: which locks a batch takes (one per key it checks
 * or writes, or the whole store above {@value #MAX_KEY_LOCKS} keys), their hash (the same on every
 * node), and how a big batch is cut so that it need not lock the whole store.
 *
 * <p><b>Locking.</b> None: pure functions; the locks themselves are taken by the commit function in
 * PostgreSQL (schema-v3.sql).
 */
final class KeyLocks {

  /**
   * A batch that checks or writes more keys than this locks the whole store instead. Below
   * PostgreSQL's default {@code max_locks_per_transaction} (64), so that commits from every
   * connection at once still fit in its shared lock table.
   */
  static final int MAX_KEY_LOCKS = 48;

  private KeyLocks() {}

  /**
   * Cuts a batch, in order and between operations, into groups that each lock at most {@link
   * #MAX_KEY_LOCKS} distinct keys (by lock hash); an operation that alone locks more is a group of
   * its own.
   */
  static List<List<AtomicOperation>> lockGroups(List<AtomicOperation> operations) {
    List<List<AtomicOperation>> groups = new ArrayList<>();
    List<AtomicOperation> group = new ArrayList<>();
    Set<Integer> locked = new HashSet<>();
    for (AtomicOperation op : operations) {
      Set<Integer> own = new HashSet<>();
      for (AtomicOperation.Check check : op.checks()) {
        own.add(lockHash(check.key().encoded()));
      }
      for (AtomicOperation.Mutation m : op.mutations()) {
        own.add(lockHash(m.key().encoded()));
      }
      Set<Integer> union = new HashSet<>(locked);
      union.addAll(own);
      if (!group.isEmpty() && union.size() > MAX_KEY_LOCKS) {
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

  /**
   * The advisory locks a batch takes, one per key it checks or writes: a 32-bit hash of the key
   * (never 0, which stands for the whole store), sorted and distinct, so that every commit takes
   * its locks in one order and commits can't deadlock on them. Two keys with one hash share a lock:
   * they wait for each other, nothing worse. A batch with more than {@link #MAX_KEY_LOCKS} keys
   * gets null: it locks the whole store instead, so that big batches don't exhaust PostgreSQL's
   * shared lock table. Every node must hash alike: this is part of schema versions 2 and 3.
   */
  static Integer[] lockKeys(List<byte[]> checked, List<byte[]> written) {
    int[] hashes = new int[checked.size() + written.size()];
    int n = 0;
    for (byte[] k : checked) {
      hashes[n++] = lockHash(k);
    }
    for (byte[] k : written) {
      hashes[n++] = lockHash(k);
    }
    int[] distinct = Arrays.stream(hashes).sorted().distinct().toArray();
    if (distinct.length > MAX_KEY_LOCKS) {
      return null;
    }
    Integer[] boxed = new Integer[distinct.length];
    for (int i = 0; i < distinct.length; i++) {
      boxed[i] = distinct[i];
    }
    return boxed;
  }

  /** FNV-1a over the key's bytes, folded to 32 bits; 0 is kept for the store-wide lock. */
  static int lockHash(byte[] key) {
    long h = 0xcbf29ce484222325L;
    for (byte b : key) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    int folded = (int) (h ^ (h >>> 32));
    return folded == 0 ? 1 : folded;
  }
}
