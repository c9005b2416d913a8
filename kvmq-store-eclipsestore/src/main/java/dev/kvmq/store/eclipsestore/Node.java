package dev.kvmq.store.eclipsestore;

import java.util.Arrays;

/**
 * One key-value pair as persisted: a small object in one of the doubly linked rings that
 * start and end at a sentinel of {@link StoreRoot#rings}. Adding a key stores the new node and re-stores its
 * two neighbours (their links changed); changing a value stores the node and its new byte
 * array; deleting re-stores the two neighbours. Each is a few hundred bytes whatever the
 * number of keys. The ring's order means nothing: the key order lives in the heap index that
 * the store rebuilds at start.
 *
 * <p>A plain class, not a record: EclipseStore stores plain classes without JVM flags.
 */
final class Node {

  /** Two bytes of key length (unsigned, big-endian), the encoded key, then the value. */
  byte[] data;

  /** The versionstamp of the commit that last wrote this key. */
  long versionstamp;

  Node prev;
  Node next;

  Node(byte[] data, long versionstamp) {
    this.data = data;
    this.versionstamp = versionstamp;
  }

  static byte[] pack(byte[] key, byte[] value) {
    byte[] d = new byte[2 + key.length + value.length];
    d[0] = (byte) (key.length >>> 8);
    d[1] = (byte) key.length;
    System.arraycopy(key, 0, d, 2, key.length);
    System.arraycopy(value, 0, d, 2 + key.length, value.length);
    return d;
  }

  /** A node that only carries a key (or a range bound) to search the index with. */
  static Node probe(byte[] key) {
    return new Node(pack(key, new byte[0]), 0);
  }

  int keyLength() {
    return ((data[0] & 0xFF) << 8) | (data[1] & 0xFF);
  }

  byte[] key() {
    return Arrays.copyOfRange(data, 2, 2 + keyLength());
  }

  byte[] value() {
    return Arrays.copyOfRange(data, 2 + keyLength(), data.length);
  }

  /** Orders nodes by their keys' bytes, unsigned: the order of {@code Key#compareTo}. */
  static int compareKeys(Node a, Node b) {
    return Arrays.compareUnsigned(a.data, 2, 2 + a.keyLength(), b.data, 2, 2 + b.keyLength());
  }
}
