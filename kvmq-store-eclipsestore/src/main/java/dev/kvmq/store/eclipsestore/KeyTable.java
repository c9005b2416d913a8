package dev.kvmq.store.eclipsestore;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The point lookups of the key index: an open-addressing hash table (linear probing) of the {@link
 * Entry}s by their keys' bytes, beside the {@link java.util.TreeSet} that keeps them in key order
 * for ranges. Why: a commit looks up every key it checks or writes, and in a tree of a few hundred
 * thousand entries each lookup walks about twenty nodes, each a comparison that reads an entry's
 * bytes from wherever its page lives; the group committer spent most of its CPU there (JFR, {@code
 * docs/performance.md}). Here a lookup hashes the key once and, as a rule, compares one entry.
 *
 * <p>Each slot holds an entry and its key's hash (compared before the key, so a probe past another
 * key's slot rarely reads that key); a removal shifts the entries after it back, so there are no
 * tombstones. The table doubles past three quarters full and halves under an eighth full (never
 * under {@value #MIN_CAPACITY} slots): 8 bytes a slot (a compressed reference and an int), about 11
 * to 21 bytes a key while it grows, against the tree's node of about 40.
 *
 * <p>Not thread-safe: {@link PageMap}'s locking covers it (lookups under the read lock, changes
 * under the write lock).
 */
final class KeyTable {

  static final int MIN_CAPACITY = 16;

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Entry[] slots;
  private int[] hashes;
  private int mask;
  private int size;

  /** An empty table. */
  KeyTable() {
    this(0);
  }

  /** A table sized for {@code expected} keys. */
  private KeyTable(int expected) {
    allocate(capacityFor(expected));
  }

  /** A table of {@code entries}, whose keys must be distinct. */
  static KeyTable of(List<Entry> entries) {
    KeyTable t = new KeyTable(entries.size());
    for (Entry e : entries) {
      t.insert(e, hashOf(e));
    }
    return t;
  }

  /** The number of entries. */
  int size() {
    return size;
  }

  /** The number of slots (for tests). */
  int capacity() {
    return slots.length;
  }

  /** The entry whose key is {@code key}'s bytes, or null. */
  Entry find(byte[] key) {
    return find(key, hash(key));
  }

  /** As {@link #find(byte[])}, with the key's {@link #hash(byte[])} already computed. */
  Entry find(byte[] key, int h) {
    Entry[] s = slots;
    int[] hs = hashes;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      Entry e = s[i];
      if (e == null) {
        return null;
      }
      if (hs[i] == h && e.keyEquals(key)) {
        return e;
      }
    }
  }

  /** Adds {@code e}, whose key must not be in the table and hashes to {@code h}. */
  void add(Entry e, int h) {
    if (size + 1 > slots.length / 4 * 3) {
      resize(slots.length * 2);
    }
    insert(e, h);
  }

  /**
   * Removes {@code e} itself (the entry object), whose key hashes to {@code h}.
   *
   * @throws IllegalStateException if {@code e} is not in the table, which would be a bug
   */
  void remove(Entry e, int h) {
    int i = h & mask;
    while (slots[i] != e) {
      if (slots[i] == null) {
        throw new IllegalStateException("an entry is not in the key table");
      }
      i = (i + 1) & mask;
    }
    // shift back the entries of the run after i that could live at i
    int hole = i;
    for (int j = (i + 1) & mask; slots[j] != null; j = (j + 1) & mask) {
      int home = hashes[j] & mask;
      // j's entry may move to the hole if its home is not cyclically in (hole, j]
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        slots[hole] = slots[j];
        hashes[hole] = hashes[j];
        hole = j;
      }
    }
    slots[hole] = null;
    hashes[hole] = 0;
    size--;
    if (slots.length > MIN_CAPACITY && size < slots.length / 8) {
      resize(slots.length / 2);
    }
  }

  private void insert(Entry e, int h) {
    int i = h & mask;
    while (slots[i] != null) {
      i = (i + 1) & mask;
    }
    slots[i] = e;
    hashes[i] = h;
    size++;
  }

  private void resize(int capacity) {
    Entry[] oldSlots = slots;
    int[] oldHashes = hashes;
    allocate(capacity);
    size = 0;
    for (int i = 0; i < oldSlots.length; i++) {
      if (oldSlots[i] != null) {
        insert(oldSlots[i], oldHashes[i]);
      }
    }
  }

  private void allocate(int capacity) {
    slots = new Entry[capacity];
    hashes = new int[capacity];
    mask = capacity - 1;
  }

  /** The smallest power of two that holds {@code expected} keys at most three quarters full. */
  static int capacityFor(int expected) {
    int c = MIN_CAPACITY;
    while (c / 4 * 3 < expected) {
      c *= 2;
    }
    return c;
  }

  private static int hashOf(Entry e) {
    int from = e.off + Entry.HEADER;
    return hash(e.buf, from, from + e.keyLength());
  }

  /** The hash of a whole key: what {@link #find(byte[], int)}, add and remove take. */
  static int hash(byte[] key) {
    return hash(key, 0, key.length);
  }

  /**
   * The hash of {@code b[from, to)}: eight bytes at a time, each word multiplied and folded in,
   * then mixed (MurmurHash3's finalizer), so that keys that differ only in their last bytes (a
   * queue's job ids) spread over the table.
   */
  static int hash(byte[] b, int from, int to) {
    long h = 0x9E3779B97F4A7C15L ^ (to - from);
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long w = (long) LONGS.get(b, i);
      h = Long.rotateLeft(h ^ (w * 0xC2B2AE3D27D4EB4FL), 31) * 0x9E3779B97F4A7C15L;
    }
    long tail = 0;
    for (int shift = 0; i < to; i++, shift += 8) {
      tail |= (b[i] & 0xFFL) << shift;
    }
    h = Long.rotateLeft(h ^ (tail * 0xC2B2AE3D27D4EB4FL), 31) * 0x9E3779B97F4A7C15L;
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return (int) h;
  }

  /** For tests: whether every entry can be found from its home slot. */
  boolean consistent() {
    int n = 0;
    for (int i = 0; i < slots.length; i++) {
      if (slots[i] == null) {
        continue;
      }
      n++;
      if (hashes[i] != hashOf(slots[i])) {
        return false;
      }
      for (int j = hashes[i] & mask; j != i; j = (j + 1) & mask) {
        if (slots[j] == null) {
          return false;
        }
      }
    }
    return n == size;
  }
}
