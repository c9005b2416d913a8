package dev.kvmq.store;

import java.util.Objects;

/**
 * An entry read from a {@link KvStore}: a key, its value and the versionstamp of the commit that
 * last wrote it.
 *
 * <p>Immutable: the value is copied in and out.
 */
public final class KvEntry {

  private final Key key;
  private final byte[] value;
  private final long versionstamp;

  /**
   * Makes an entry. Stores call this; users read entries.
   *
   * @param key the key
   * @param value the value bytes (copied)
   * @param versionstamp the versionstamp of the commit that wrote this value, at least 1
   * @throws NullPointerException if {@code key} or {@code value} is null
   * @throws IllegalArgumentException if {@code versionstamp} is less than 1
   */
  public KvEntry(Key key, byte[] value, long versionstamp) {
    this(Objects.requireNonNull(value, "value").clone(), key, versionstamp);
  }

  /**
   * An entry over {@code value} itself, not a copy, for this package's stores: the caller hands
   * over an array that nothing changes.
   */
  static KvEntry sharing(Key key, byte[] value, long versionstamp) {
    return new KvEntry(value, key, versionstamp);
  }

  /** The public constructor's checks, with {@code value} kept as it is (parameters reordered). */
  private KvEntry(byte[] value, Key key, long versionstamp) {
    this.key = Objects.requireNonNull(key, "key");
    this.value = Objects.requireNonNull(value, "value");
    if (versionstamp < 1) {
      throw new IllegalArgumentException("versionstamp must be at least 1: " + versionstamp);
    }
    this.versionstamp = versionstamp;
  }

  /**
   * Returns the key.
   *
   * @return the key
   */
  public Key key() {
    return key;
  }

  /**
   * Returns the value (a fresh copy).
   *
   * @return the value bytes
   */
  public byte[] value() {
    return value.clone();
  }

  /**
   * Returns the value's length without copying it.
   *
   * @return the number of value bytes
   */
  public int valueLength() {
    return value.length;
  }

  /**
   * Returns the versionstamp of the commit that last wrote this key: strictly greater than that of
   * every earlier commit of the same store.
   *
   * @return the versionstamp, at least 1
   */
  public long versionstamp() {
    return versionstamp;
  }

  @Override
  public String toString() {
    return "KvEntry[" + key + " @" + versionstamp + ", " + value.length + " bytes]";
  }
}
