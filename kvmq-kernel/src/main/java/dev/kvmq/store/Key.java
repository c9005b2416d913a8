package dev.kvmq.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * A key of a {@link KvStore}: an immutable tuple of one or more parts.
 *
 * <p>A part is a {@code byte[]}, a {@link String}, a {@code long} or a {@code boolean} ({@code
 * int}, {@code short} and {@code byte} are accepted and widened to {@code long}).
 *
 * <h2>Order</h2>
 *
 * Keys are totally ordered, the same way in every store:
 *
 * <ul>
 *   <li>part by part, from the first;
 *   <li>parts of different types order by type: {@code byte[]} &lt; {@code String} &lt; {@code
 *       long} &lt; {@code boolean};
 *   <li>within a type: byte arrays unsigned lexicographically, strings by Unicode code point (the
 *       order of their UTF-8 bytes), longs numerically, {@code false} before {@code true};
 *   <li>a key orders before every key it is a prefix of.
 * </ul>
 *
 * <h2>Encoding</h2>
 *
 * {@link #encoded()} gives an order-preserving byte encoding: comparing two encodings with {@link
 * Arrays#compareUnsigned(byte[], byte[])} gives the same result as {@link #compareTo(Key)}, and the
 * encoding of a key is a byte prefix of the encoding of every key it prefixes. Stores that index
 * bytes (SQL {@code bytea}, sorted files) keep the encoding and get the key back with {@link
 * #decode(byte[])}. The format is stable: it is what durable stores keep on disk.
 *
 * <pre>
 *   byte[]   0x01, bytes with 0x00 written as 0x00 0xFF, then 0x00
 *   String   0x02, UTF-8 bytes escaped the same way, then 0x00
 *   long     0x03, 8 bytes big-endian of (value XOR Long.MIN_VALUE)
 *   boolean  0x04 (false) or 0x05 (true)
 * </pre>
 *
 * <p>Instances are immutable and thread-safe; byte-array parts are copied in and out.
 */
public final class Key implements Comparable<Key> {

  private static final byte[] EMPTY = new byte[0];

  private final Object[] parts;
  private final byte[] encoded;

  /** Arrays.hashCode(encoded), or 0 until first asked for (as String.hash). */
  private int hash;

  private boolean hashIsZero;

  private Key(Object[] parts, byte[] encoded) {
    this.parts = parts;
    this.encoded = encoded;
  }

  /**
   * Makes a key of the given parts.
   *
   * @param parts one or more parts, each a {@code byte[]}, {@code String}, {@code Long}, {@code
   *     Integer}, {@code Short}, {@code Byte} or {@code Boolean}
   * @return the key
   * @throws NullPointerException if {@code parts} or one of its elements is null (the message names
   *     the index)
   * @throws IllegalArgumentException if there are no parts, a part has another type, a string has
   *     an unpaired surrogate (it has no UTF-8 form), or the encoded key is longer than {@link
   *     KvStore#MAX_KEY_BYTES}
   */
  public static Key of(Object... parts) {
    Objects.requireNonNull(parts, "parts");
    if (parts.length == 0) {
      throw new IllegalArgumentException("a key needs at least one part");
    }
    Object[] copy = new Object[parts.length];
    for (int i = 0; i < parts.length; i++) {
      copy[i] = KeyCodec.normalize(parts[i], i);
    }
    return checked(new Key(copy, KeyCodec.encode(EMPTY, copy, 0)));
  }

  /**
   * Makes a key of the given parts.
   *
   * @param parts the parts, as for {@link #of(Object...)}
   * @return the key
   * @throws NullPointerException if {@code parts} or one of its elements is null
   * @throws IllegalArgumentException as for {@link #of(Object...)}
   */
  public static Key of(List<?> parts) {
    Objects.requireNonNull(parts, "parts");
    return of(parts.toArray());
  }

  /**
   * Returns a key of this key's parts followed by the given ones.
   *
   * @param more the parts to add, as for {@link #of(Object...)}
   * @return the longer key
   * @throws NullPointerException if {@code more} or one of its elements is null
   * @throws IllegalArgumentException if a part has another type, or the result is longer than
   *     {@link KvStore#MAX_KEY_BYTES} encoded
   */
  public Key append(Object... more) {
    Objects.requireNonNull(more, "more");
    if (more.length == 0) {
      return this;
    }
    Object[] all = Arrays.copyOf(parts, parts.length + more.length);
    for (int i = 0; i < more.length; i++) {
      all[parts.length + i] = KeyCodec.normalize(more[i], parts.length + i);
    }
    return checked(new Key(all, KeyCodec.encode(encoded, all, parts.length)));
  }

  /**
   * Decodes a key from its {@link #encoded()} form.
   *
   * @param encoded the bytes written by {@link #encoded()}
   * @return the key
   * @throws NullPointerException if {@code encoded} is null
   * @throws IllegalArgumentException if the bytes are not a valid key encoding
   */
  public static Key decode(byte[] encoded) {
    Objects.requireNonNull(encoded, "encoded");
    // KeyCodec.decode accepts only canonical encodings, so the bytes are kept, not rebuilt
    return checked(new Key(KeyCodec.decode(encoded), encoded.clone()));
  }

  /**
   * Returns the number of parts.
   *
   * @return one or more
   */
  public int size() {
    return parts.length;
  }

  /**
   * Returns a part: a {@code byte[]} (a copy), {@code String}, {@code Long} or {@code Boolean}.
   *
   * @param index the part's index, from 0
   * @return the part
   * @throws IndexOutOfBoundsException if there is no such part
   */
  public Object get(int index) {
    Object part = parts[Objects.checkIndex(index, parts.length)];
    return part instanceof byte[] bytes ? bytes.clone() : part;
  }

  /**
   * Returns a string part.
   *
   * @param index the part's index, from 0
   * @return the string
   * @throws IndexOutOfBoundsException if there is no such part
   * @throws IllegalStateException if the part is not a string
   */
  public String getString(int index) {
    return typed(index, String.class);
  }

  /**
   * Returns a long part.
   *
   * @param index the part's index, from 0
   * @return the value
   * @throws IndexOutOfBoundsException if there is no such part
   * @throws IllegalStateException if the part is not a long
   */
  public long getLong(int index) {
    return typed(index, Long.class);
  }

  /**
   * Returns the parts as an unmodifiable list (byte arrays copied).
   *
   * @return the parts, in order
   */
  public List<Object> parts() {
    List<Object> list = new ArrayList<>(parts.length);
    for (int i = 0; i < parts.length; i++) {
      list.add(get(i));
    }
    return Collections.unmodifiableList(list);
  }

  /**
   * Returns the order-preserving encoding of this key (a fresh copy).
   *
   * @return the encoded bytes, at most {@link KvStore#MAX_KEY_BYTES} long
   */
  public byte[] encoded() {
    return encoded.clone();
  }

  /**
   * Returns the length of {@link #encoded()} without copying it.
   *
   * @return the encoded length in bytes
   */
  public int encodedLength() {
    return encoded.length;
  }

  /**
   * Tells whether this key starts with all the parts of {@code prefix} (a key starts with itself).
   *
   * @param prefix the possible prefix
   * @return true if {@code prefix} is this key or a prefix of it
   * @throws NullPointerException if {@code prefix} is null
   */
  public boolean startsWith(Key prefix) {
    return prefix.encoded.length <= encoded.length
        && Arrays.equals(
            encoded, 0, prefix.encoded.length, prefix.encoded, 0, prefix.encoded.length);
  }

  /**
   * Compares by the order described in the class documentation.
   *
   * @param other the key to compare with
   * @return negative, zero or positive as this key orders before, with or after
   * @throws NullPointerException if {@code other} is null
   */
  @Override
  public int compareTo(Key other) {
    return Arrays.compareUnsigned(encoded, other.encoded);
  }

  /**
   * Two keys are equal when they have equal parts of equal types.
   *
   * @param o the other object
   * @return whether {@code o} is an equal key
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof Key k && Arrays.equals(encoded, k.encoded);
  }

  @Override
  public int hashCode() {
    // computed on first use (most keys are never hashed); a race computes it twice, alike
    int h = hash;
    if (h == 0 && !hashIsZero) {
      h = Arrays.hashCode(encoded);
      if (h == 0) {
        hashIsZero = true;
      } else {
        hash = h;
      }
    }
    return h;
  }

  /**
   * Returns a readable form such as {@code ["jobs", 7, true, 0x00ff]}.
   *
   * @return the parts, for logs and messages
   */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      Object p = parts[i];
      if (p instanceof String s) {
        sb.append('"').append(s.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
      } else if (p instanceof byte[] b) {
        sb.append("0x").append(HexFormat.of().formatHex(b));
      } else {
        sb.append(p);
      }
    }
    return sb.append(']').toString();
  }

  /** Lower bound (inclusive) of the encodings of the keys that {@code prefix} strictly prefixes. */
  static byte[] afterPrefix(byte[] prefix) {
    byte[] b = Arrays.copyOf(prefix, prefix.length + 1);
    b[prefix.length] = 0x00;
    return b;
  }

  /** Upper bound (exclusive) of the encodings of the keys that {@code prefix} strictly prefixes. */
  static byte[] endOfPrefix(byte[] prefix) {
    byte[] b = Arrays.copyOf(prefix, prefix.length + 1);
    b[prefix.length] = (byte) 0xFF;
    return b;
  }

  byte[] encodedInternal() {
    return encoded;
  }

  private <T> T typed(int index, Class<T> type) {
    Object part = parts[Objects.checkIndex(index, parts.length)];
    if (!type.isInstance(part)) {
      throw new IllegalStateException(
          "part "
              + index
              + " of "
              + this
              + " is a "
              + KeyCodec.typeName(part)
              + ", not a "
              + type.getSimpleName());
    }
    return type.cast(part);
  }

  private static Key checked(Key key) {
    if (key.encoded.length > KvStore.MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "key is "
              + key.encoded.length
              + " bytes encoded, over the limit of "
              + KvStore.MAX_KEY_BYTES
              + ": "
              + abbreviate(key.toString()));
    }
    return key;
  }

  static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 77) + "...";
  }
}
