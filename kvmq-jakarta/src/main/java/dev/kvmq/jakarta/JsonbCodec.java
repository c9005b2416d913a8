package dev.kvmq.jakarta;

import dev.kvmq.Codec;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbConfig;
import jakarta.json.bind.JsonbException;
import java.io.StringReader;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

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
 * <p>Input is read with {@link #read(String)}, which also refuses a number or boolean that JSON-B
 * would change silently ({@code 2147483648} for an {@code int}, {@code 1.5} for a {@code long},
 * {@code "yes"} for a {@code boolean}), naming its path and why, whatever the configuration.
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
   * <p>This is how a queue reads its stored jobs, which {@link #encode} wrote: unlike {@link
   * #read}, it does not check that JSON-B kept every number and boolean as given.
   *
   * @param bytes the JSON bytes
   * @return the state
   * @throws JsonbException if the JSON doesn't fit the type, with a message that starts {@code "the
   *     JSON does not fit <type>: "} and gives JSON-B's reason (for an unknown property, its name)
   */
  @Override
  public S decode(byte[] bytes) {
    String json = new String(bytes, StandardCharsets.UTF_8);
    try {
      return jsonb.fromJson(json, type);
    } catch (JsonbException e) {
      throw doesNotFit(e.getMessage(), e);
    }
  }

  /**
   * Reads a state from JSON text that is input, such as the {@code state} of a push over the admin
   * REST API or of a schedule in configuration: as {@link #decode(byte[])} does, and then refuses
   * what JSON-B would silently change. Yasson (3.0) reads {@code 2147483648} into an {@code int} as
   * {@code -2147483648}, {@code 1.5} as {@code 1}, {@code 1e30} into a {@code long} as {@code
   * 5076944270305263616} and {@code "yes"} into a {@code boolean} as {@code false}; so the state is
   * written back as JSON and compared with the input, where both have a value: a number must come
   * back as the same number ({@code 1.0} for an {@code int} is {@code 1}; a {@code double} or
   * {@code float} may round), a boolean as given ({@code "true"} in any case is {@code true}).
   * Strings, nulls and properties the type writes differently (adapters, write-only properties) are
   * not compared.
   *
   * @param json the JSON text
   * @return the state
   * @throws JsonbException if the JSON doesn't fit the type, with a message that starts {@code "the
   *     JSON does not fit <type>: "}: JSON-B's reason (for an unknown property, its name); for JSON
   *     of the wrong kind at the top level, what was expected ({@code expected a JSON object, got a
   *     string}); for a value JSON-B would change, its path and why ({@code failTimes: 2147483648
   *     is out of range of int}, {@code items[2].count: 1.5 is not a whole number}, {@code
   *     stubborn: "yes" is not true or false}); or, for a state that can't be written back as JSON,
   *     JSON-B's reason
   * @throws NullPointerException if {@code json} is null
   */
  public S read(String json) {
    Objects.requireNonNull(json, "json");
    return read(json, () -> parse(json));
  }

  /**
   * As {@link #read(String)}, for input already parsed (the {@code state} of an admin push, read
   * with the rest of the request's body): compared with what JSON-B read without parsing it again.
   *
   * @param json the input
   * @return the state
   * @throws JsonbException as {@link #read(String)}
   * @throws NullPointerException if {@code json} is null
   */
  S read(JsonValue json) {
    Objects.requireNonNull(json, "json");
    Optional<JsonValue> parsed = Optional.of(json);
    return read(json.toString(), () -> parsed);
  }

  private S read(String json, Supplier<Optional<JsonValue>> parsed) {
    S state;
    try {
      state = jsonb.fromJson(json, type);
    } catch (JsonbException e) {
      throw doesNotFit(
          parsed.get().flatMap(in -> StrictInput.wrongKind(in, type)).orElse(e.getMessage()), e);
    }
    if (state == null || state instanceof JsonValue || state instanceof String) {
      return state; // nothing JSON-B could have changed
    }
    Optional<JsonValue> input = parsed.get();
    if (input.isEmpty()) {
      return state; // JSON-B read what JSON-P does not: nothing to compare with
    }
    String written;
    try {
      written = jsonb.toJson(state, type);
    } catch (JsonbException e) {
      throw doesNotFit("it can't be written back as JSON: " + e.getMessage(), e);
    }
    Optional<JsonValue> output = parse(written);
    if (output.isPresent()) {
      Optional<String> changed = StrictInput.changed(input.get(), output.get(), type);
      if (changed.isPresent()) {
        throw doesNotFit(changed.get(), null);
      }
    }
    return state;
  }

  private JsonbException doesNotFit(String why, Throwable cause) {
    return new JsonbException(DOES_NOT_FIT + type.getTypeName() + ": " + why, cause);
  }

  private static Optional<JsonValue> parse(String json) {
    try (JsonReader r = Json.createReader(new StringReader(json))) {
      return Optional.of(r.readValue());
    } catch (JsonException e) {
      return Optional.empty();
    }
  }
}
