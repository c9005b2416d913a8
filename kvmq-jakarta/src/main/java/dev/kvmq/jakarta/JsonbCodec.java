package dev.kvmq.jakarta;

import dev.kvmq.Codec;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbConfig;
import jakarta.json.bind.JsonbException;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A {@link Codec} that stores states as JSON through JSON-B (the server's provider, Yasson on
 * Payara and WildFly). Generic types work: pass the full {@link Type}, such as the type argument of
 * a handler's {@code JobHandler<List<Order>>}.
 *
 * <p>kvmq reads input (a job's {@code state} pushed over the admin REST API) with {@link
 * #config()}: a property that the state's type does not have (a misspelt {@code amount} for {@code
 * cents}) is refused with a {@link JsonbException} that names it, instead of leaving the field at
 * its default value. A queue opts out with {@code @QueueHandler(ignoreUnknownProperties = true)} or
 * {@code kvmq.queue.NAME.ignore-unknown-properties=true}; then such properties are dropped. Stored
 * jobs are read with JSON-B's defaults (unknown properties dropped), so a job stored before a field
 * was removed from its type still runs after the new version is deployed.
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
   * The property that makes JSON-B refuse unknown properties. Yasson 3 (Payara's and WildFly's
   * JSON-B) reads it; the JSON-B 3.0 API of Jakarta EE 10 has no constant for it (JSON-B 3.1 names
   * it {@code JsonbConfig.FAIL_ON_UNKNOWN_PROPERTIES}).
   */
  static final String FAIL_ON_UNKNOWN_PROPERTIES = "jsonb.fail-on-unknown-properties";

  /** How the message of {@link #read}'s refusal starts; the admin REST API cuts it off. */
  static final String DOES_NOT_FIT = "the JSON does not fit ";

  /**
   * The JSON-B configuration of kvmq's queues: unknown properties are refused ({@code
   * jsonb.fail-on-unknown-properties}). For a codec as kvmq's, in tests too: {@code new
   * JsonbCodec<>(JsonbBuilder.create(JsonbCodec.config()), Bill.class)}.
   *
   * @return a new configuration, to change further if needed
   */
  public static JsonbConfig config() {
    return new JsonbConfig().setProperty(FAIL_ON_UNKNOWN_PROPERTIES, true);
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
   * @throws JsonbException if the JSON doesn't fit the type, with a message that starts {@code "the
   *     JSON does not fit <type>: "} and gives JSON-B's reason (for an unknown property, its name)
   */
  @Override
  public S decode(byte[] bytes) {
    return read(new String(bytes, StandardCharsets.UTF_8));
  }

  /**
   * Reads a state from JSON text, as {@link #decode(byte[])} does: for input such as the {@code
   * state} of a push over the admin REST API.
   *
   * @param json the JSON text
   * @return the state
   * @throws JsonbException if the JSON doesn't fit the type (see {@link #decode(byte[])})
   * @throws NullPointerException if {@code json} is null
   */
  public S read(String json) {
    Objects.requireNonNull(json, "json");
    try {
      return jsonb.fromJson(json, type);
    } catch (JsonbException e) {
      throw new JsonbException(DOES_NOT_FIT + type.getTypeName() + ": " + e.getMessage(), e);
    }
  }
}
