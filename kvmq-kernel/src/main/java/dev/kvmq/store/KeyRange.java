package dev.kvmq.store;

import java.util.Arrays;
import java.util.Objects;

/**
 * A contiguous range of keys in the order of {@link Key}, for {@link KvStore#list} and {@link
 * KvStore#count}.
 *
 * <p>A range is a prefix ({@link #prefix(Key)}: every key that the prefix strictly prefixes, not
 * the prefix itself), or a start and an end ({@link #between}), or a prefix narrowed by a start or
 * an end inside it ({@link #from(Key)}, {@link #until(Key)}), as in Deno KV's list selectors.
 * Stores see a range as two byte bounds over {@link Key#encoded()}: {@link #lowerBound()} inclusive
 * and {@link #upperBound()} exclusive.
 *
 * <p>Instances are immutable.
 */
public final class KeyRange {

  private final byte[] lower;
  private final byte[] upper;
  private final Key prefix;

  private KeyRange(byte[] lower, byte[] upper, Key prefix) {
    this.lower = lower;
    this.upper = upper;
    this.prefix = prefix;
  }

  /**
   * Every key that {@code prefix} strictly prefixes ({@code prefix} itself is not in it).
   *
   * @param prefix the common first parts
   * @return the range
   * @throws NullPointerException if {@code prefix} is null
   */
  public static KeyRange prefix(Key prefix) {
    Objects.requireNonNull(prefix, "prefix");
    byte[] p = prefix.encodedInternal();
    return new KeyRange(Key.afterPrefix(p), Key.endOfPrefix(p), prefix);
  }

  /**
   * The keys from {@code start} (inclusive) to {@code end} (exclusive).
   *
   * @param start the first key of the range
   * @param end the first key after the range
   * @return the range (empty if {@code end} is not after {@code start})
   * @throws NullPointerException if an argument is null
   */
  public static KeyRange between(Key start, Key end) {
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(end, "end");
    return new KeyRange(start.encodedInternal(), end.encodedInternal(), null);
  }

  /**
   * Every key of the store.
   *
   * @return the range of all keys
   */
  public static KeyRange all() {
    return new KeyRange(new byte[] {0x00}, new byte[] {(byte) 0xFF}, null);
  }

  /**
   * Narrows a prefix range to start at {@code start} (inclusive).
   *
   * @param start a key inside this prefix range
   * @return the narrower range
   * @throws NullPointerException if {@code start} is null
   * @throws IllegalStateException if this range is not a prefix range
   * @throws IllegalArgumentException if {@code start} is not strictly prefixed by this range's
   *     prefix
   */
  public KeyRange from(Key start) {
    requireInside(start, "start");
    return new KeyRange(max(lower, start.encodedInternal()), upper, prefix);
  }

  /**
   * Narrows a prefix range to end before {@code end} (exclusive).
   *
   * @param end a key inside this prefix range
   * @return the narrower range
   * @throws NullPointerException if {@code end} is null
   * @throws IllegalStateException if this range is not a prefix range
   * @throws IllegalArgumentException if {@code end} is not strictly prefixed by this range's prefix
   */
  public KeyRange until(Key end) {
    requireInside(end, "end");
    return new KeyRange(lower, min(upper, end.encodedInternal()), prefix);
  }

  /**
   * Tells whether a key lies in this range.
   *
   * @param key the key
   * @return true if {@code lowerBound() <= key.encoded() < upperBound()}
   * @throws NullPointerException if {@code key} is null
   */
  public boolean contains(Key key) {
    byte[] k = key.encodedInternal();
    return Arrays.compareUnsigned(k, lower) >= 0 && Arrays.compareUnsigned(k, upper) < 0;
  }

  /**
   * Returns the inclusive lower bound over {@link Key#encoded()} (a copy).
   *
   * @return the bound; it may not be the encoding of a valid key
   */
  public byte[] lowerBound() {
    return lower.clone();
  }

  /**
   * Returns the exclusive upper bound over {@link Key#encoded()} (a copy).
   *
   * @return the bound; it may not be the encoding of a valid key
   */
  public byte[] upperBound() {
    return upper.clone();
  }

  /**
   * Tells whether no key can lie in this range.
   *
   * @return true if the upper bound is not after the lower bound
   */
  public boolean isEmpty() {
    return Arrays.compareUnsigned(lower, upper) >= 0;
  }

  @Override
  public String toString() {
    return prefix != null ? "KeyRange[prefix " + prefix + "]" : "KeyRange[...]";
  }

  private void requireInside(Key key, String what) {
    Objects.requireNonNull(key, what);
    if (prefix == null) {
      throw new IllegalStateException("only a prefix range can be narrowed by a " + what);
    }
    if (!key.startsWith(prefix) || key.size() == prefix.size()) {
      throw new IllegalArgumentException(what + " " + key + " is not inside prefix " + prefix);
    }
  }

  private static byte[] max(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b) >= 0 ? a : b;
  }

  private static byte[] min(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b) <= 0 ? a : b;
  }
}
