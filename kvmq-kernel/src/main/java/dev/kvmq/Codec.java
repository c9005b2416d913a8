package dev.kvmq;

/**
 * Turns a job's state into bytes and back. The kernel stores only bytes, so stored jobs do not
 * depend on class loaders or on the classes of one deployment.
 *
 * <p>{@link Codecs} has codecs for {@code byte[]} and {@code String}; the Jakarta module adds
 * JSON-B.
 *
 * @param <S> the state type
 */
public interface Codec<S> {

  /**
   * Encodes a state.
   *
   * @param state the state; never null
   * @return the bytes, at most about 1 MiB (see {@link dev.kvmq.store.KvStore#MAX_VALUE_BYTES})
   * @throws RuntimeException (any) if the state can't be encoded; a push fails with it and writes
   *     nothing
   */
  byte[] encode(S state);

  /**
   * Decodes a state.
   *
   * @param bytes what {@link #encode} wrote
   * @return the state
   * @throws RuntimeException (any) if the bytes can't be decoded; a job whose state can't be
   *     decoded fails like a handler error (retried, then dead-lettered)
   */
  S decode(byte[] bytes);
}
