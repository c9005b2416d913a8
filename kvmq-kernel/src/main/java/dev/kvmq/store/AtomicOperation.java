package dev.kvmq.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Checks, sets and deletes that a {@link KvStore} applies all together or not at all.
 *
 * <p>A commit applies only if every check holds at the moment of the commit; it is serializable
 * with every other commit of the store. Each key may be written (set or deleted) at most once per
 * operation; a key may be both checked and written.
 *
 * <p>Build one with {@link #builder()}. Instances are immutable.
 */
public final class AtomicOperation {

  /** The expected versionstamp of a key that must be absent. */
  public static final long ABSENT = 0;

  private final List<Check> checks;
  private final List<Mutation> mutations;

  private AtomicOperation(List<Check> checks, List<Mutation> mutations) {
    this.checks = checks;
    this.mutations = mutations;
  }

  /**
   * Starts an empty operation.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the checks, in the order they were added.
   *
   * @return an unmodifiable list
   */
  public List<Check> checks() {
    return checks;
  }

  /**
   * Returns the sets and deletes, in the order they were added.
   *
   * @return an unmodifiable list
   */
  public List<Mutation> mutations() {
    return mutations;
  }

  /**
   * Tells whether the operation writes nothing (it may still check).
   *
   * @return true if there are no mutations
   */
  public boolean isReadOnly() {
    return mutations.isEmpty();
  }

  @Override
  public String toString() {
    return "AtomicOperation[" + checks.size() + " checks, " + mutations.size() + " mutations]";
  }

  /**
   * A condition of a commit: the key's current versionstamp is {@code versionstamp}, or the key is
   * absent when {@code versionstamp} is {@link AtomicOperation#ABSENT}.
   *
   * @param key the key to check
   * @param versionstamp the expected versionstamp, or {@link AtomicOperation#ABSENT}
   */
  public record Check(Key key, long versionstamp) {

    /**
     * Checks the components.
     *
     * @param key the key to check
     * @param versionstamp the expected versionstamp, or {@link AtomicOperation#ABSENT}
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code versionstamp} is negative
     */
    public Check {
      Objects.requireNonNull(key, "key");
      if (versionstamp < 0) {
        throw new IllegalArgumentException("versionstamp must not be negative: " + versionstamp);
      }
    }

    /**
     * Tells whether this check expects the key to be absent.
     *
     * @return true for an absence check
     */
    public boolean expectsAbsent() {
      return versionstamp == ABSENT;
    }
  }

  /** A set (value present) or a delete (value absent) of one key. */
  public static final class Mutation {
    private final Key key;
    private final byte[] value;

    private Mutation(Key key, byte[] value) {
      this.key = key;
      this.value = value;
    }

    /**
     * Returns the key written.
     *
     * @return the key
     */
    public Key key() {
      return key;
    }

    /**
     * Tells whether this mutation deletes its key.
     *
     * @return true for a delete
     */
    public boolean isDelete() {
      return value == null;
    }

    /**
     * Returns the value set (a fresh copy).
     *
     * @return the bytes
     * @throws IllegalStateException if this mutation is a delete
     */
    public byte[] value() {
      if (value == null) {
        throw new IllegalStateException("a delete of " + key + " has no value");
      }
      return value.clone();
    }

    /** The value itself, not a copy, for this package's stores; null for a delete. Not changed. */
    byte[] valueInternal() {
      return value;
    }

    @Override
    public String toString() {
      return value == null ? "delete " + key : "set " + key + " (" + value.length + " bytes)";
    }
  }

  /**
   * Collects checks and mutations. Not thread-safe; {@link #build()} may be called once or more,
   * each time giving an independent operation.
   */
  public static final class Builder {
    /** Up to this many checks or writes, a repeated key is found by a scan, not a hash. */
    private static final int SCAN_LIMIT = 8;

    private final List<Check> checks = new ArrayList<>(4);
    private final List<Mutation> mutations = new ArrayList<>(4);

    /** The checked keys, once there are more than {@link #SCAN_LIMIT}. */
    private Map<Key, Long> checked;

    /** The written keys, once there are more than {@link #SCAN_LIMIT}. */
    private Set<Key> written;

    private Builder() {}

    /**
     * Requires that {@code key} still has the versionstamp it had when read.
     *
     * @param entry an entry as read from the store
     * @return this builder
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if the key is already checked for another versionstamp
     */
    public Builder check(KvEntry entry) {
      Objects.requireNonNull(entry, "entry");
      return check(entry.key(), entry.versionstamp());
    }

    /**
     * Requires that {@code key} has the versionstamp {@code versionstamp} (or, for {@link
     * AtomicOperation#ABSENT}, that it is absent).
     *
     * @param key the key
     * @param versionstamp the expected versionstamp, or {@link AtomicOperation#ABSENT}
     * @return this builder
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code versionstamp} is negative or the key is already
     *     checked for another versionstamp
     */
    public Builder check(Key key, long versionstamp) {
      Check check = new Check(key, versionstamp);
      Long before = checkedVersion(key);
      if (before == null) {
        checks.add(check);
        if (checked != null) {
          checked.put(key, versionstamp);
        } else if (checks.size() > SCAN_LIMIT) {
          checked = new HashMap<>();
          checks.forEach(c -> checked.put(c.key(), c.versionstamp()));
        }
      } else if (before != versionstamp) {
        throw new IllegalArgumentException(
            "key "
                + key
                + " is checked twice, for versionstamps "
                + before
                + " and "
                + versionstamp);
      }
      return this;
    }

    /**
     * Requires that {@code key} is absent.
     *
     * @param key the key
     * @return this builder
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if the key is already checked for a versionstamp
     */
    public Builder checkAbsent(Key key) {
      return check(key, ABSENT);
    }

    /**
     * Sets {@code key} to {@code value}.
     *
     * @param key the key
     * @param value the value (copied); may be empty
     * @return this builder
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the value is longer than {@link KvStore#MAX_VALUE_BYTES},
     *     or this operation already writes {@code key}
     */
    public Builder set(Key key, byte[] value) {
      Objects.requireNonNull(value, "value");
      if (value.length > KvStore.MAX_VALUE_BYTES) {
        throw new IllegalArgumentException(
            "value for "
                + key
                + " is "
                + value.length
                + " bytes, over the limit of "
                + KvStore.MAX_VALUE_BYTES);
      }
      return write(key, value.clone());
    }

    /**
     * Deletes {@code key} (nothing happens to an absent key, and the commit still applies).
     *
     * @param key the key
     * @return this builder
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if this operation already writes {@code key}
     */
    public Builder delete(Key key) {
      return write(key, null);
    }

    /**
     * Makes the operation.
     *
     * @return the operation with everything added so far
     */
    public AtomicOperation build() {
      return new AtomicOperation(List.copyOf(checks), List.copyOf(mutations));
    }

    private Long checkedVersion(Key key) {
      if (checked != null) {
        return checked.get(key);
      }
      for (Check c : checks) {
        if (c.key().equals(key)) {
          return c.versionstamp();
        }
      }
      return null;
    }

    private boolean isWritten(Key key) {
      if (written != null) {
        return written.contains(key);
      }
      for (Mutation m : mutations) {
        if (m.key().equals(key)) {
          return true;
        }
      }
      return false;
    }

    private Builder write(Key key, byte[] value) {
      Objects.requireNonNull(key, "key");
      if (isWritten(key)) {
        throw new IllegalArgumentException(
            "key " + key + " is written twice in one atomic operation");
      }
      mutations.add(new Mutation(key, value));
      if (written != null) {
        written.add(key);
      } else if (mutations.size() > SCAN_LIMIT) {
        written = new HashSet<>();
        mutations.forEach(m -> written.add(m.key()));
      }
      return this;
    }
  }
}
