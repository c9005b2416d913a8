package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.Key;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Schema version 4's lock keys and lock modes, as pure functions (no database): which lock each key
 * takes, in which mode, and that the hash computed from a key's bytes is the hash of its lock key.
 * {@code PostgresVersionstampTest} shows the locks at work in PostgreSQL.
 */
class KeyLocksTest {

  @Test
  void lockKeysAreSortedDistinctNeverTheStoreLockAndNoneForHugeBatches() {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < KeyLocks.MAX_KEY_LOCKS; i++) {
      keys.add(Key.of("k", (long) i).encoded());
    }
    KeyLocks.Locks locks = KeyLocks.lockKeys(keys, keys.subList(0, 10));
    assertThat(locks.hashes()).hasSize(KeyLocks.MAX_KEY_LOCKS).doesNotContain(0).isSorted();
    assertThat(KeyLocks.lockKeys(keys, List.of()).hashes()).containsExactly(locks.hashes());
    List<byte[]> many = new ArrayList<>();
    for (int i = 0; i <= KeyLocks.MAX_KEY_LOCKS; i++) {
      many.add(Key.of("m", (long) i).encoded());
    }
    assertThat(KeyLocks.lockKeys(many, List.of())).as("a whole-store lock instead").isNull();
  }

  @Test
  void aKeyOnlyCheckedIsLockedSharedAndAWrittenOneExclusively() {
    byte[] checked = Key.of("kvmq", "q", "startsPaused").encoded();
    byte[] both = Key.of("kvmq", "q", "job", "a").encoded();
    KeyLocks.Locks locks = KeyLocks.lockKeys(List.of(checked, both), List.of(both));
    assertThat(locks.hashes()).hasSize(2);
    for (int i = 0; i < 2; i++) {
      boolean isChecked = locks.hashes()[i] == KeyLocks.lockHash(checked);
      assertThat(locks.shared()[i])
          .as("shared exactly for the key only checked")
          .isEqualTo(isChecked);
    }
  }

  @Test
  void theKeysOfOneJobShareOneLockSoAClaimOfManyJobsLocksNoMoreThanItsJobs() {
    // What the kernel checks and writes to claim 32 jobs: the pause of starts (checked), and
    // for each job its record (checked and written), its ready entry (deleted) and its leased
    // entry (written).
    List<byte[]> checked = new ArrayList<>(List.of(Key.of("kvmq", "q", "startsPaused").encoded()));
    List<byte[]> written = new ArrayList<>();
    for (int i = 0; i < 32; i++) {
      String id = "job-" + i;
      checked.add(Key.of("kvmq", "q", "job", id).encoded());
      written.add(Key.of("kvmq", "q", "job", id).encoded());
      written.add(Key.of("kvmq", "q", "ready", (long) i, id).encoded());
      written.add(Key.of("kvmq", "q", "leased", 1_000L + i, id).encoded());
    }
    KeyLocks.Locks locks = KeyLocks.lockKeys(checked, written);
    assertThat(locks).as("no whole-store lock").isNotNull();
    assertThat(locks.hashes()).hasSize(33);
    assertThat(locks.shared()).containsOnlyOnce(true);
    assertThat(KeyLocks.lockKey(Key.of("kvmq", "q", "group", "parked", "g", 3L, "job-1")))
        .isEqualTo(Key.of("kvmq", "q", "job-1"))
        .isEqualTo(KeyLocks.lockKey(Key.of("kvmq", "q", "job", "job-1")));
    assertThat(KeyLocks.lockKey(Key.of("kvmq", "q", "paused")))
        .isEqualTo(Key.of("kvmq", "q", "paused"));
  }

  @Test
  void theHashOfAKeysBytesIsTheHashOfItsLockKeyAndItsPrefixesAreFoundForKeysOfEveryShape() {
    Random random = new Random(19);
    for (int n = 0; n < 20_000; n++) {
      Object[] parts = new Object[1 + random.nextInt(7)];
      for (int i = 0; i < parts.length; i++) {
        parts[i] = randomPart(random);
      }
      Key key = Key.of(parts);
      assertThat(KeyLocks.lockHash(key.encoded()))
          .as("%s", key)
          .isEqualTo(fnv(KeyLocks.lockKey(key).encoded()));
      int prefixParts = random.nextInt(parts.length + 2);
      Object[] first = Arrays.copyOf(parts, Math.min(prefixParts, parts.length));
      byte[] expected = first.length == 0 ? new byte[0] : Key.of(first).encoded();
      assertThat(Arrays.copyOf(key.encoded(), KeyLocks.endOfPart(key.encoded(), prefixParts)))
          .as("the first %d parts of %s", prefixParts, key)
          .isEqualTo(expected);
    }
  }

  /** Parts of every type, with the bytes that the encoding escapes (0x00, 0xFF) often. */
  private static Object randomPart(Random random) {
    switch (random.nextInt(5)) {
      case 0:
        return random.nextLong();
      case 1:
        return random.nextBoolean();
      case 2:
        {
          byte[] b = new byte[random.nextInt(6)];
          for (int i = 0; i < b.length; i++) {
            int pick = random.nextInt(4);
            b[i] = pick == 0 ? 0 : pick == 1 ? (byte) 0xFF : (byte) random.nextInt(256);
          }
          return b;
        }
      case 3:
        return "s\u0000" + random.nextInt(100) + "\u00ff\u20ac";
      default:
        return "job-" + random.nextInt(1000);
    }
  }

  /**
   * Every node must take the same locks in the same order: the locks of random batches (keys of few
   * jobs, so that hashes repeat, checked and written in every mix) are those of the plain
   * definition, a sorted map from hash to "only checked".
   */
  @Test
  void lockKeysAreThoseOfASortedMapFromHashToOnlyChecked() {
    Random random = new Random(19);
    for (int round = 0; round < 2_000; round++) {
      List<byte[]> checked = new ArrayList<>();
      List<byte[]> written = new ArrayList<>();
      int n = random.nextInt(60);
      for (int i = 0; i < n; i++) {
        byte[] k =
            Key.of("kvmq", "q", "part" + random.nextInt(3), "job-" + random.nextInt(40)).encoded();
        (random.nextBoolean() ? checked : written).add(k);
      }
      java.util.TreeMap<Integer, Boolean> expected = new java.util.TreeMap<>();
      checked.forEach(k -> expected.putIfAbsent(KeyLocks.lockHash(k), true));
      written.forEach(k -> expected.put(KeyLocks.lockHash(k), false));
      KeyLocks.Locks locks = KeyLocks.lockKeys(checked, written);
      if (expected.size() > KeyLocks.MAX_KEY_LOCKS) {
        assertThat(locks).isNull();
        continue;
      }
      assertThat(locks.hashes())
          .containsExactly(expected.keySet().stream().mapToInt(Integer::intValue).toArray());
      for (int i = 0; i < locks.hashes().length; i++) {
        assertThat(locks.shared()[i]).isEqualTo(expected.get(locks.hashes()[i]));
      }
    }
  }

  /** FNV-1a over all the bytes, folded to 32 bits, never 0: what a lock hash is. */
  private static int fnv(byte[] bytes) {
    long h = 0xcbf29ce484222325L;
    for (byte b : bytes) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    int folded = (int) (h ^ (h >>> 32));
    return folded == 0 ? 1 : folded;
  }
}
