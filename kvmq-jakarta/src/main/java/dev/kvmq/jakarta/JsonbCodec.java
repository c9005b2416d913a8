package dev.kvmq.jakarta;

import dev.kvmq.Codec;
import jakarta.json.bind.Jsonb;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A {@link Codec} that stores states as JSON through JSON-B (the server's provider, Yasson
 * on Payara and WildFly). Generic types work: pass the full {@link Type}, such as the
 * type argument of a handler's {@code JobHandler<List<Order>>}.
 *
 * @param <S> the state type
 */
public final class JsonbCodec<S> implements Codec<S> {

  private final Jsonb jsonb;
  private final Type type;

  /**
   * Makes a codec.
   *
   * @param jsonb the JSON-B instance to use (thread-safe; the caller keeps ownership)
   * @param type the state's type
   * @throws NullPointerException if an argument is null
   */
  public JsonbCodec(Jsonb jsonb, Type type) {
    this.jsonb = Objects.requireNonNull(jsonb, "jsonb");
    this.type = Objects.requireNonNull(type, "type");
  }

  /**
   * Returns the state type.
   *
   * @return the type this codec reads and writes
   */
  public Type type() {
    return type;
  }

  /**
   * Writes a state as UTF-8 JSON.
   *
   * @param state the state
   * @return the JSON bytes
   * @throws jakarta.json.bind.JsonbException if JSON-B can't write it
   */
  @Override
  public byte[] encode(S state) {
    return jsonb.toJson(state, type).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Reads a state from UTF-8 JSON.
   *
   * @param bytes the JSON bytes
   * @return the state
   * @throws jakarta.json.bind.JsonbException if the JSON doesn't fit the type
   */
  @Override
  public S decode(byte[] bytes) {
    return jsonb.fromJson(new String(bytes, StandardCharsets.UTF_8), type);
  }
}
