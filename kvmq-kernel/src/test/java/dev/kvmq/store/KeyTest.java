package dev.kvmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.testing.Seeds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Pins the key order against a reference written from the documented rules, and the encoding
 * against that order.
 */
class KeyTest {

  /** The documented order, part by part, written without the encoding. */
  static int referenceCompare(List<Object> a, List<Object> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = comparePart(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  private static int rank(Object p) {
    if (p instanceof byte[]) {
      return 0;
    }
    if (p instanceof String) {
      return 1;
    }
    if (p instanceof Long) {
      return 2;
    }
    return 3;
  }

  private static int comparePart(Object x, Object y) {
    int r = Integer.compare(rank(x), rank(y));
    if (r != 0) {
      return r;
    }
    if (x instanceof byte[] bx) {
      return Arrays.compareUnsigned(bx, (byte[]) y);
    }
    if (x instanceof String sx) {
      return compareCodePoints(sx, (String) y);
    }
    if (x instanceof Long lx) {
      return Long.compare(lx, (Long) y);
    }
    return Boolean.compare((Boolean) x, (Boolean) y);
  }

  private static int compareCodePoints(String a, String b) {
    int[] ca = a.codePoints().toArray();
    int[] cb = b.codePoints().toArray();
    return Arrays.compare(ca, cb);
  }

  private static final char[] CHARS = {'\0', 'a', 'b', '\u00e9', '\uFFFF', 'z'};

  static Object randomPart(SplittableRandom r) {
    switch (r.nextInt(5)) {
      case 0:
        {
          byte[] b = new byte[r.nextInt(4)];
          for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (r.nextBoolean() ? r.nextInt(3) - 1 : r.nextInt(256));
          }
          return b;
        }
      case 1:
        {
          StringBuilder sb = new StringBuilder();
          int n = r.nextInt(4);
          for (int i = 0; i < n; i++) {
            if (r.nextInt(5) == 0) {
              sb.appendCodePoint(0x1F600 + r.nextInt(3));
            } else {
              sb.append(CHARS[r.nextInt(CHARS.length)]);
            }
          }
          return sb.toString();
        }
      case 2:
        return r.nextLong();
      case 3:
        return new long[] {-1, 0, 1, Long.MIN_VALUE, Long.MAX_VALUE}[r.nextInt(5)];
      default:
        return r.nextBoolean();
    }
  }

  static List<Object> randomTuple(SplittableRandom r) {
    List<Object> parts = new ArrayList<>();
    int n = 1 + r.nextInt(4);
    for (int i = 0; i < n; i++) {
      parts.add(randomPart(r));
    }
    return parts;
  }

  @Test
  void encodingOrderEqualsTupleOrder() {
    Seeds.forEach(
        "encodingOrderEqualsTupleOrder",
        5000,
        1,
        r -> {
          List<Object> a = randomTuple(r);
          List<Object> b =
              r.nextInt(4) == 0
                  ? new ArrayList<>(a.subList(0, 1 + r.nextInt(a.size())))
                  : randomTuple(r);
          Key ka = Key.of(a);
          Key kb = Key.of(b);
          int expected = Integer.signum(referenceCompare(a, b));
          assertThat(Integer.signum(ka.compareTo(kb))).isEqualTo(expected);
          assertThat(Integer.signum(Arrays.compareUnsigned(ka.encoded(), kb.encoded())))
              .isEqualTo(expected);
          assertThat(ka.equals(kb)).isEqualTo(expected == 0);
        });
  }

  /** The documented encoding, written byte by byte from the class documentation. */
  static byte[] referenceEncoding(List<Object> parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (Object p : parts) {
      if (p instanceof byte[] || p instanceof String) {
        out.write(p instanceof byte[] ? 0x01 : 0x02);
        byte[] b =
            p instanceof byte[] bytes
                ? bytes
                : ((String) p).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (byte x : b) {
          out.write(x);
          if (x == 0) {
            out.write(0xFF);
          }
        }
        out.write(0);
      } else if (p instanceof Long l) {
        out.write(0x03);
        long v = l ^ Long.MIN_VALUE;
        for (int shift = 56; shift >= 0; shift -= 8) {
          out.write((int) (v >>> shift));
        }
      } else {
        out.write((Boolean) p ? 0x05 : 0x04);
      }
    }
    return out.toByteArray();
  }

  @Test
  void theEncodingIsTheDocumentedOneForOfAndAppendAlike() {
    // stored keys are these bytes: a change would orphan every store's data
    assertThat(
            java.util.HexFormat.of()
                .formatHex(Key.of("kvmq", "q", "job", "01ARZ3NDEKTSV4RRFFQ69G5FAV").encoded()))
        .isEqualTo(
            "026b766d7100027100026a6f620002303141525a334e44454b5453563452524646513639473546415600");
    assertThat(Key.of(-1L, true, false, new byte[] {0, 1}, "a\u0000").encoded())
        .containsExactly(
            0x03, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05, 0x04, 0x01, 0x00, 0xff,
            0x01, 0x00, 0x02, 'a', 0x00, 0xff, 0x00);
    Seeds.forEach(
        "theEncodingIsTheDocumentedOne",
        5_000,
        1,
        r -> {
          List<Object> parts = randomTuple(r);
          byte[] expected = referenceEncoding(parts);
          assertThat(Key.of(parts).encoded()).as("of %s", parts).containsExactly(expected);
          int split = r.nextInt(parts.size());
          Key head = Key.of(parts.subList(0, split + 1));
          assertThat(head.append(parts.subList(split + 1, parts.size()).toArray()).encoded())
              .as("append to %s", head)
              .containsExactly(expected);
        });
  }

  /**
   * A string part is copied char by char only when every char is 0x01-0x7F, checked four at a time:
   * one char outside that range, at any place of a string of any length, takes the UTF-8 path.
   */
  @Test
  void aStringWithOneCharThatIsNotPlainAsciiAnywhereEncodesAsTheReferenceSays() {
    char[] specials = {'\0', '\u0001', '\u007f', '\u0080', '\u00e9', '\u00ff', '\u0100', '\uFFFF'};
    for (int length = 1; length <= 13; length++) {
      for (int at = 0; at < length; at++) {
        for (char c : specials) {
          char[] chars = new char[length];
          Arrays.fill(chars, 'a');
          chars[at] = c;
          List<Object> parts = List.of("q", new String(chars));
          assertThat(Key.of(parts).encoded())
              .as("%d chars, %04x at %d", length, (int) c, at)
              .containsExactly(referenceEncoding(parts));
        }
      }
    }
  }

  @Test
  void decodeInvertsEncode() {
    Seeds.forEach(
        "decodeInvertsEncode",
        3000,
        1,
        r -> {
          List<Object> parts = randomTuple(r);
          Key key = Key.of(parts);
          Key back = Key.decode(key.encoded());
          assertThat(back).isEqualTo(key);
          assertThat(back.size()).isEqualTo(parts.size());
        });
  }

  @Test
  void aPrefixEncodesAsABytePrefixAndOrdersFirst() {
    Seeds.forEach(
        "aPrefixEncodesAsABytePrefixAndOrdersFirst",
        2000,
        1,
        r -> {
          Key prefix = Key.of(randomTuple(r));
          Key longer = prefix.append(randomTuple(r).toArray());
          assertThat(longer.startsWith(prefix)).isTrue();
          assertThat(prefix.compareTo(longer)).isNegative();
          assertThat(KeyRange.prefix(prefix).contains(longer)).isTrue();
          assertThat(KeyRange.prefix(prefix).contains(prefix)).isFalse();
        });
  }

  @Test
  void smallIntegersWidenToLong() {
    assertThat(Key.of("a", 1)).isEqualTo(Key.of("a", 1L));
    assertThat(Key.of("a", (short) 2).get(1)).isEqualTo(2L);
  }

  @Test
  void partsAreTypedAndCopied() {
    byte[] raw = {1, 2};
    Key key = Key.of("s", 7L, true, raw);
    raw[0] = 9;
    assertThat(key.getString(0)).isEqualTo("s");
    assertThat(key.getLong(1)).isEqualTo(7L);
    assertThat((byte[]) key.get(3)).containsExactly(1, 2);
    assertThatThrownBy(() -> key.getLong(0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("part 0");
    assertThat(key).hasToString("[\"s\", 7, true, 0x0102]");
  }

  @Test
  void unpairedSurrogatesAreRefused() {
    assertThatThrownBy(() -> Key.of("bad\uD800"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate");
  }

  @Test
  void malformedEncodingsAreRefused() {
    assertThatThrownBy(() -> Key.decode(new byte[] {0x02, 'a'}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unterminated");
    assertThatThrownBy(() -> Key.decode(new byte[] {0x09}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown type tag");
    assertThatThrownBy(() -> Key.decode(new byte[] {0x03, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("truncated");
    assertThatThrownBy(() -> Key.decode(new byte[0])).isInstanceOf(IllegalArgumentException.class);
    // strings must be strict UTF-8: a bad continuation byte, an overlong form, an encoded surrogate
    for (byte[] bad :
        new byte[][] {
          {0x02, (byte) 0xC3, 0x28, 0x00},
          {0x02, (byte) 0xC1, (byte) 0xBF, 0x00},
          {0x02, (byte) 0xED, (byte) 0xA0, (byte) 0x80, 0x00}
        }) {
      assertThatThrownBy(() -> Key.decode(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not UTF-8");
    }
    byte[] tooLong = new byte[KvStore.MAX_KEY_BYTES + 2];
    tooLong[0] = 0x01;
    java.util.Arrays.fill(tooLong, 1, tooLong.length - 1, (byte) 'x');
    assertThatThrownBy(() -> Key.decode(tooLong)).hasMessageContaining("over the limit");
  }

  @Test
  void theLongestKeyIsAccepted() {
    // 1 tag + payload + 1 terminator
    Key longest = Key.of("x".repeat(KvStore.MAX_KEY_BYTES - 2));
    assertThat(longest.encodedLength()).isEqualTo(KvStore.MAX_KEY_BYTES);
  }
}
