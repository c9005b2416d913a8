package dev.kvmq;

import java.nio.charset.StandardCharsets;

/** The codecs the kernel ships. */
public final class Codecs {

  private Codecs() {}

  private static final Codec<byte[]> BYTES =
      new Codec<>() {
        @Override
        public byte[] encode(byte[] state) {
          return state.clone();
        }

        @Override
        public byte[] decode(byte[] bytes) {
          return bytes.clone();
        }
      };

  private static final Codec<String> UTF8 =
      new Codec<>() {
        @Override
        public byte[] encode(String state) {
          return state.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
          return new String(bytes, StandardCharsets.UTF_8);
        }
      };

  /**
   * Stores the bytes as they are.
   *
   * @return the identity codec for {@code byte[]}
   */
  public static Codec<byte[]> bytes() {
    return BYTES;
  }

  /**
   * Stores strings as UTF-8.
   *
   * @return the UTF-8 codec for {@code String}
   */
  public static Codec<String> utf8() {
    return UTF8;
  }
}
