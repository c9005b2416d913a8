package dev.kvmq.jakarta;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Strict UTF-8: bytes that are not UTF-8 are refused, not replaced (as {@code new String} does).
 */
final class Utf8 {

  private Utf8() {}

  /**
   * Decodes UTF-8 bytes.
   *
   * @param bytes the bytes
   * @return the text, or empty if the bytes are not UTF-8
   */
  static Optional<String> decode(byte[] bytes) {
    try {
      // a new decoder reports malformed and unmappable input instead of replacing it
      return Optional.of(
          StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }
}
