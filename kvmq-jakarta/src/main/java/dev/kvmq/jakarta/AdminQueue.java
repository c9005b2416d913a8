package dev.kvmq.jakarta;

import dev.kvmq.Queue;
import jakarta.json.Json;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.ByteArrayInputStream;
import java.util.Objects;

/**
 * A queue of this application with the JSON-B codec the admin REST API turns its states into JSON
 * and back with. {@link KvmqRuntime} keeps one per queue, beside the queue, so the API never has to
 * guess the codec of a queue (the types say that {@code codec} is for the same {@code S}). The
 * codec reads input strictly (unknown properties refused) unless the queue opted out; the queue
 * itself reads its stored jobs leniently.
 *
 * @param <S> the state type
 * @param queue the queue
 * @param codec the JSON-B codec for the queue's state type that reads the API's input
 * @param opened true for a queue this application opens (a handler, an injection point); false for
 *     one the store holds that nothing here opens, read with states as JSON values ({@link
 *     KvmqRuntime#unopenedQueues()}), to which the API does not push
 */
record AdminQueue<S>(Queue<S> queue, JsonbCodec<S> codec, boolean opened) {

  AdminQueue {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(codec, "codec");
  }

  /**
   * A queue this application opens.
   *
   * @param queue the queue
   * @param codec the JSON-B codec for the queue's state type that reads the API's input
   */
  AdminQueue(Queue<S> queue, JsonbCodec<S> codec) {
    this(queue, codec, true);
  }

  /**
   * A state as JSON, as the queue stores it.
   *
   * @param state the state, or null
   * @return its JSON ({@code null} for null)
   * @throws jakarta.json.bind.JsonbException if JSON-B can't write it
   */
  JsonValue toJson(S state) {
    if (state == null) {
      return JsonValue.NULL;
    }
    try (JsonReader r = Json.createReader(new ByteArrayInputStream(codec.encode(state)))) {
      return r.readValue();
    }
  }

  /**
   * Reads a state from the API's input JSON (unknown properties refused unless the queue opted out;
   * a number or boolean JSON-B would change refused: {@link JsonbCodec#read}).
   *
   * @param json the state's JSON
   * @return the state
   * @throws jakarta.json.bind.JsonbException if the JSON does not fit the queue's state type
   */
  S fromJson(JsonValue json) {
    return codec.read(json);
  }

  /**
   * Names the state type, for error messages.
   *
   * @return the type's name
   */
  String typeName() {
    return codec.type().getTypeName();
  }
}
