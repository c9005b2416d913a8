package dev.kvmq.store;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The parts of a {@link Key} and their order-preserving encoding (the format is in {@link Key}'s
 * comment): checking and normalizing parts, encoding them, and decoding canonical encodings only.
 * Stateless.
 */
final class KeyCodec {

  private static final byte BYTES = 0x01;
  private static final byte STRING = 0x02;
  private static final byte LONG = 0x03;
  private static final byte FALSE = 0x04;
  private static final byte TRUE = 0x05;

  private KeyCodec() {}

  /** Checks a part and gives its stored form: small integers widened, byte arrays copied. */
  static Object normalize(Object part, int index) {
    if (part == null) {
      throw new NullPointerException("key part " + index + " is null");
    }
    if (part instanceof String s) {
      requireUtf8(s, index);
      return s;
    }
    if (part instanceof Long || part instanceof Boolean) {
      return part;
    }
    if (part instanceof Integer || part instanceof Short || part instanceof Byte) {
      return ((Number) part).longValue();
    }
    if (part instanceof byte[] bytes) {
      return bytes.clone();
    }
    throw new IllegalArgumentException(
        "key part "
            + index
            + " is a "
            + typeName(part)
            + "; a key part is a byte[], String, long or boolean");
  }

  private static void requireUtf8(String s, int index) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isSurrogate(s.charAt(i))) {
        try {
          StandardCharsets.UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .encode(CharBuffer.wrap(s));
        } catch (CharacterCodingException e) {
          throw new IllegalArgumentException(
              "key part " + index + " is a string with an unpaired surrogate; it has no UTF-8 form",
              e);
        }
        return;
      }
    }
  }

  /**
   * Encodes {@code parts[from..]} after {@code prefix} (the encoding of the parts before), into one
   * array of the exact size: keys are encoded on every queue transition.
   */
  static byte[] encode(byte[] prefix, Object[] parts, int from) {
    // the bytes of each byte[] part and of each string with a char outside 0x01-0x7F; a string of
    // those chars only (ids, names: nearly all) is written char by char, with no copy of its own
    byte[][] raw = null;
    int size = prefix.length;
    for (int i = from; i < parts.length; i++) {
      Object part = parts[i];
      if (part instanceof String s && isPlainAscii(s)) {
        size += 2 + s.length();
      } else if (part instanceof byte[] || part instanceof String) {
        byte[] b =
            part instanceof byte[] bytes ? bytes : ((String) part).getBytes(StandardCharsets.UTF_8);
        if (raw == null) {
          raw = new byte[parts.length - from][];
        }
        raw[i - from] = b;
        size += 2 + b.length;
        for (byte x : b) {
          if (x == 0) {
            size++;
          }
        }
      } else {
        size += part instanceof Long ? 9 : 1;
      }
    }
    byte[] out = Arrays.copyOf(prefix, size);
    int at = prefix.length;
    for (int i = from; i < parts.length; i++) {
      Object part = parts[i];
      byte[] b = raw == null ? null : raw[i - from];
      if (b != null) {
        out[at++] = part instanceof byte[] ? BYTES : STRING;
        for (byte x : b) {
          out[at++] = x;
          if (x == 0) {
            out[at++] = (byte) 0xFF;
          }
        }
        out[at++] = 0;
      } else if (part instanceof String s) {
        out[at++] = STRING;
        for (int j = 0; j < s.length(); j++) {
          out[at++] = (byte) s.charAt(j);
        }
        out[at++] = 0;
      } else if (part instanceof Long l) {
        out[at++] = LONG;
        long v = l ^ Long.MIN_VALUE;
        for (int shift = 56; shift >= 0; shift -= 8) {
          out[at++] = (byte) (v >>> shift);
        }
      } else {
        out[at++] = (Boolean) part ? TRUE : FALSE;
      }
    }
    return out;
  }

  /** Whether every char of {@code s} is 0x01-0x7F: its UTF-8 is its chars, with no 0 to escape. */
  private static boolean isPlainAscii(String s) {
    int n = s.length();
    int i = 0;
    // c is 0x01-0x7F exactly when (c - 1) | c has no bit above the lowest seven (c = 0 gives -1):
    // four chars a step, one branch for the four
    for (; i + 3 < n; i += 4) {
      int c0 = s.charAt(i);
      int c1 = s.charAt(i + 1);
      int c2 = s.charAt(i + 2);
      int c3 = s.charAt(i + 3);
      if ((((c0 - 1) | c0 | (c1 - 1) | c1 | (c2 - 1) | c2 | (c3 - 1) | c3) & ~0x7F) != 0) {
        return false;
      }
    }
    for (; i < n; i++) {
      int c = s.charAt(i);
      if ((((c - 1) | c) & ~0x7F) != 0) {
        return false;
      }
    }
    return true;
  }

  private static final class Buf {
    private byte[] bytes;
    private int size;

    Buf(int capacity) {
      bytes = new byte[Math.max(capacity, 8)];
    }

    void write(int b) {
      if (size == bytes.length) {
        bytes = Arrays.copyOf(bytes, bytes.length * 2);
      }
      bytes[size++] = (byte) b;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(bytes, size);
    }
  }

  /**
   * Decodes the parts of an encoding. Every sequence it accepts is the encoding of its parts
   * (escapes, longs and tags have one form each, and strings are strict UTF-8).
   *
   * @throws IllegalArgumentException if the bytes are not a key encoding
   */
  static Object[] decode(byte[] encoded) {
    if (encoded.length == 0) {
      throw new IllegalArgumentException("not a key encoding: no bytes");
    }
    List<Object> parts = new ArrayList<>();
    int i = 0;
    while (i < encoded.length) {
      byte tag = encoded[i++];
      switch (tag) {
        case BYTES, STRING -> {
          Buf raw = new Buf(16);
          while (true) {
            if (i >= encoded.length) {
              throw malformed(encoded, "unterminated part");
            }
            byte b = encoded[i++];
            if (b != 0) {
              raw.write(b);
            } else if (i < encoded.length && encoded[i] == (byte) 0xFF) {
              raw.write(0);
              i++;
            } else {
              break;
            }
          }
          byte[] bytes = raw.toByteArray();
          parts.add(tag == BYTES ? bytes : utf8(bytes, encoded));
        }
        case LONG -> {
          if (i + 8 > encoded.length) {
            throw malformed(encoded, "truncated long");
          }
          parts.add(ByteBuffer.wrap(encoded, i, 8).getLong() ^ Long.MIN_VALUE);
          i += 8;
        }
        case FALSE -> parts.add(Boolean.FALSE);
        case TRUE -> parts.add(Boolean.TRUE);
        default -> throw malformed(encoded, "unknown type tag " + tag);
      }
    }
    return parts.toArray();
  }

  /** Strict UTF-8: malformed input (which {@code new String} would replace) is refused. */
  private static String utf8(byte[] bytes, byte[] encoded) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw malformed(encoded, "a string part that is not UTF-8");
    }
  }

  static String typeName(Object part) {
    return part == null ? "null" : part.getClass().getName();
  }

  private static IllegalArgumentException malformed(byte[] encoded, String why) {
    return new IllegalArgumentException(
        "not a key encoding (" + why + "): " + Key.abbreviate(HexFormat.of().formatHex(encoded)));
  }
}
