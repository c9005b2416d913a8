package dev.kvmq;

import java.util.random.RandomGenerator;

/**
 * ULIDs: 26-character, time-ordered identifiers (48-bit millisecond time, 80 random bits, Crockford
 * base32). Ids made by one generator strictly increase, even within one millisecond or when the
 * clock steps back, so "creation order" is the id order.
 *
 * <p>Thread-safe. Time and randomness are given, not read.
 */
final class Ulid {

  private static final char[] ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ".toCharArray();
  private static final long MAX_TIME = (1L << 48) - 1;

  private final RandomGenerator random;
  private long lastTime = -1;
  private long lastHigh; // top 16 of the 80 random bits
  private long lastLow; // low 64 of the 80 random bits

  Ulid(RandomGenerator random) {
    this.random = random;
  }

  /** The next id at {@code epochMillis} (or just after the previous id, if that is later). */
  synchronized String next(long epochMillis) {
    if (epochMillis < 0 || epochMillis > MAX_TIME) {
      throw new IllegalArgumentException("time out of ULID range: " + epochMillis);
    }
    if (epochMillis > lastTime) {
      lastTime = epochMillis;
      lastHigh = random.nextInt(1 << 16);
      lastLow = random.nextLong();
    } else if (++lastLow == 0 && ++lastHigh == (1 << 16)) {
      // 80 random bits used up within one millisecond: move to the next one
      lastTime++;
      lastHigh = 0;
    }
    return format(lastTime, lastHigh, lastLow);
  }

  static String format(long time, long high, long low) {
    char[] out = new char[26];
    for (int i = 9; i >= 0; i--) {
      out[i] = ALPHABET[(int) (time & 31)];
      time >>>= 5;
    }
    // 80 random bits = 16 chars of 5 bits; take from low, then high
    for (int i = 25; i >= 10; i--) {
      out[i] = ALPHABET[(int) (low & 31)];
      low = (low >>> 5) | ((high & 31) << 59);
      high >>>= 5;
    }
    return new String(out);
  }

  /** The millisecond time of an id. */
  static long timestamp(String ulid) {
    long time = 0;
    for (int i = 0; i < 10; i++) {
      int v = decode(ulid.charAt(i));
      time = (time << 5) | v;
    }
    return time;
  }

  /** Tells whether {@code s} has the form of a ULID. */
  static boolean isValid(String s) {
    if (s == null || s.length() != 26 || s.charAt(0) > '7') {
      return false;
    }
    for (int i = 0; i < 26; i++) {
      if (decode(s.charAt(i)) < 0) {
        return false;
      }
    }
    return true;
  }

  private static int decode(char c) {
    for (int i = 0; i < ALPHABET.length; i++) {
      if (ALPHABET[i] == c) {
        return i;
      }
    }
    return -1;
  }
}
