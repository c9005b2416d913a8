package dev.kvmq.store.eclipsestore;

import java.util.Arrays;

/**
 * One key-value pair in the heap: where its packed bytes are ({@link #buf} at {@link #off}) and
 * which {@link Page} it lives in. Not persisted itself: its bytes are, as part of its page's {@link
 * Page#data}.
 *
 * <p>Packed layout ({@value #HEADER} bytes of header, big-endian):
 *
 * <pre>
 * long  versionstamp
 * short key length (unsigned)
 * int   value length
 * byte[] encoded key, byte[] value
 * </pre>
 *
 * <p>An entry that a commit created or changed has its own small array until its page is rewritten
 * at the end of the group commit; from then on it points into the page's array, so an open store
 * keeps each key's bytes once.
 */
final class Entry {

  static final int HEADER = 14;

  /** The largest encoded key the layout holds. */
  static final int MAX_KEY = 0xFFFF;

  Page page;
  byte[] buf;
  int off;

  Entry(byte[] buf, int off) {
    this.buf = buf;
    this.off = off;
  }

  static byte[] pack(byte[] key, byte[] value, long versionstamp) {
    if (key.length > MAX_KEY) {
      throw new IllegalArgumentException(
          "encoded key too long for the store: " + key.length + " bytes, at most " + MAX_KEY);
    }
    byte[] d = new byte[HEADER + key.length + value.length];
    putLong(d, 0, versionstamp);
    d[8] = (byte) (key.length >>> 8);
    d[9] = (byte) key.length;
    d[10] = (byte) (value.length >>> 24);
    d[11] = (byte) (value.length >>> 16);
    d[12] = (byte) (value.length >>> 8);
    d[13] = (byte) value.length;
    System.arraycopy(key, 0, d, HEADER, key.length);
    System.arraycopy(value, 0, d, HEADER + key.length, value.length);
    return d;
  }

  /** An entry that only carries a key (or a range bound) to search the index with. */
  static Entry probe(byte[] key) {
    return new Entry(pack(key, new byte[0], 0), 0);
  }

  /**
   * Returns the packed size of the entry at {@code off} in {@code buf}, or -1 if the bytes there
   * are not a whole entry.
   */
  static int sizeAt(byte[] buf, int off) {
    if (off < 0 || buf.length - off < HEADER) {
      return -1;
    }
    int keyLength = ((buf[off + 8] & 0xFF) << 8) | (buf[off + 9] & 0xFF);
    int valueLength =
        ((buf[off + 10] & 0xFF) << 24)
            | ((buf[off + 11] & 0xFF) << 16)
            | ((buf[off + 12] & 0xFF) << 8)
            | (buf[off + 13] & 0xFF);
    long size = (long) HEADER + keyLength + valueLength;
    return valueLength < 0 || size > buf.length - off ? -1 : (int) size;
  }

  long versionstamp() {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (buf[off + i] & 0xFF);
    }
    return v;
  }

  int keyLength() {
    return ((buf[off + 8] & 0xFF) << 8) | (buf[off + 9] & 0xFF);
  }

  int valueLength() {
    return ((buf[off + 10] & 0xFF) << 24)
        | ((buf[off + 11] & 0xFF) << 16)
        | ((buf[off + 12] & 0xFF) << 8)
        | (buf[off + 13] & 0xFF);
  }

  int size() {
    return HEADER + keyLength() + valueLength();
  }

  byte[] key() {
    return Arrays.copyOfRange(buf, off + HEADER, off + HEADER + keyLength());
  }

  byte[] value() {
    int start = off + HEADER + keyLength();
    return Arrays.copyOfRange(buf, start, start + valueLength());
  }

  /** Whether this entry's key is {@code key}'s bytes. */
  boolean keyEquals(byte[] key) {
    int from = off + HEADER;
    return Arrays.equals(buf, from, from + keyLength(), key, 0, key.length);
  }

  /** Orders entries by their keys' bytes, unsigned: the order of {@code Key#compareTo}. */
  static int compareKeys(Entry a, Entry b) {
    int as = a.off + HEADER;
    int bs = b.off + HEADER;
    return Arrays.compareUnsigned(a.buf, as, as + a.keyLength(), b.buf, bs, bs + b.keyLength());
  }

  private static void putLong(byte[] d, int at, long v) {
    for (int i = 7; i >= 0; i--) {
      d[at + i] = (byte) v;
      v >>>= 8;
    }
  }
}
