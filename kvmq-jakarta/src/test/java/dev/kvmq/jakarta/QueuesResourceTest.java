package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.Backoff;
import dev.kvmq.Job;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.io.ByteArrayInputStream;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin API's push and job JSON without a server: a queue on the in-memory store, read and
 * written through the JSON-B codec it was made with ({@link AdminQueue}).
 */
class QueuesResourceTest {

  public record Order(String id, List<String> tags) {}

  interface Types<T> {}

  static class Orders implements Types<List<Order>> {}

  final Jsonb jsonb = JsonbBuilder.create();
  final FakeClock clock = new FakeClock(Instant.parse("2026-12-01T10:00:00Z"));
  final InMemoryKvStore store = new InMemoryKvStore();

  @AfterEach
  void close() throws Exception {
    jsonb.close();
    store.close();
  }

  <S> AdminQueue<S> queue(String name, Type type) {
    JsonbCodec<S> codec = new JsonbCodec<>(jsonb, type);
    Queue<S> q = Queue.builder(store, name, codec).clock(clock).build();
    return new AdminQueue<>(q, codec);
  }

  /**
   * A job pushed by an older version whose state no longer fits the type: its JSON has a null state
   * and the stored text with what JSON-B says of it; bytes that are not UTF-8 are given in base64.
   * A job that decodes has no such field.
   */
  @Test
  void aJobWhoseStateNoLongerDecodesShowsItsStoredTextAndWhy() {
    Queue<String> older =
        Queue.builder(store, "orders", dev.kvmq.Codecs.utf8()).clock(clock).build();
    String id = older.push("{\"id\": [\"not\", \"a\", \"string\"]}").id();
    Job<byte[]> binary =
        Queue.builder(store, "orders", dev.kvmq.Codecs.bytes())
            .clock(clock)
            .build()
            .push(new byte[] {(byte) 0xff});
    AdminQueue<Order> q = queue("orders", Order.class);
    String fits = q.queue().push(new Order("o-1", List.of("a"))).id();

    JsonObject json = QueuesResource.job(q, q.queue().job(id).orElseThrow(), -1);

    assertThat(json.isNull("state")).isTrue();
    JsonObject undecoded = json.getJsonObject("undecodedState");
    assertThat(undecoded.getString("text")).isEqualTo("{\"id\": [\"not\", \"a\", \"string\"]}");
    assertThat(undecoded.getString("error")).isNotBlank();
    assertThat(undecoded.containsKey("base64")).isFalse();

    JsonObject notText =
        QueuesResource.job(q, q.queue().job(binary.id()).orElseThrow(), -1)
            .getJsonObject("undecodedState");
    assertThat(notText.getString("base64")).isEqualTo("/w==");
    assertThat(notText.containsKey("text")).isFalse();

    JsonObject good = QueuesResource.job(q, q.queue().job(fits).orElseThrow(), -1);
    assertThat(good.containsKey("undecodedState")).isFalse();
    assertThat(good.getJsonObject("state").getString("id")).isEqualTo("o-1");
  }

  /**
   * A queue nothing in the application opens is read as the runtime reads it for the admin API
   * (states as JSON values, {@code KvmqRuntime.unopenedQueues}): whatever JSON was stored comes
   * back as that JSON, and a state that is not JSON is shown as stored.
   */
  @Test
  void aQueueOfUnknownTypeShowsItsStatesAsTheJsonTheyWereStoredAs() {
    Queue<String> elsewhere =
        Queue.builder(store, "retired", dev.kvmq.Codecs.utf8()).clock(clock).build();
    String object = elsewhere.push("{\"sku\":\"a-1\",\"qty\":2,\"tags\":[\"x\"]}").id();
    clock.advance(java.time.Duration.ofMillis(1));
    String array = elsewhere.push("[1, \"two\", null]").id();
    clock.advance(java.time.Duration.ofMillis(1));
    String text = elsewhere.push("plain text").id();
    AdminQueue<Object> q = queue("retired", jakarta.json.JsonValue.class);
    AdminQueue<Object> unopened = new AdminQueue<>(q.queue(), q.codec(), false);

    JsonObject first = QueuesResource.job(unopened, q.queue().job(object).orElseThrow(), -1);
    JsonObject second = QueuesResource.job(unopened, q.queue().job(array).orElseThrow(), -1);
    JsonObject third = QueuesResource.job(unopened, q.queue().job(text).orElseThrow(), -1);

    assertThat(first.getJsonObject("state"))
        .isEqualTo(
            Json.createObjectBuilder()
                .add("sku", "a-1")
                .add("qty", 2)
                .add("tags", Json.createArrayBuilder().add("x"))
                .build());
    assertThat(first.containsKey("undecodedState")).isFalse();
    assertThat(second.getJsonArray("state"))
        .isEqualTo(Json.createArrayBuilder().add(1).add("two").addNull().build());
    assertThat(third.isNull("state")).isTrue();
    assertThat(third.getJsonObject("undecodedState").getString("text")).isEqualTo("plain text");
  }

  @Test
  void deletingTheWaitingJobsOfAQueueThatKeepsChangingIsAConflictThatSaysWhatToDo() {
    // a store on which every commit's checks fail, as when workers change the queue under
    // each attempt of the one atomic operation
    Queue<String> q =
        Queue.builder(new ChecksAlwaysFail(store), "busy", dev.kvmq.Codecs.utf8())
            .clock(clock)
            .build();
    Queue.builder(store, "busy", dev.kvmq.Codecs.utf8()).clock(clock).build().push("x");

    ControlRest.Refused refused =
        catchThrowableOfType(ControlRest.Refused.class, () -> ControlRest.deleteWaiting(q));

    assertThat(refused.status).isEqualTo(409);
    assertThat(refused).hasMessageContaining("pause the queue and try again");
    assertThat(store.count(dev.kvmq.store.KeyRange.all())).isPositive();
  }

  /** Delegates everything but commits, whose checks all fail. */
  private record ChecksAlwaysFail(InMemoryKvStore store) implements dev.kvmq.store.KvStore {
    @Override
    public java.util.Optional<dev.kvmq.store.KvEntry> get(dev.kvmq.store.Key key) {
      return store.get(key);
    }

    @Override
    public List<java.util.Optional<dev.kvmq.store.KvEntry>> getMany(List<dev.kvmq.store.Key> keys) {
      return store.getMany(keys);
    }

    @Override
    public List<dev.kvmq.store.KvEntry> list(
        dev.kvmq.store.KeyRange range, int limit, boolean reverse) {
      return store.list(range, limit, reverse);
    }

    @Override
    public dev.kvmq.store.CommitResult commit(dev.kvmq.store.AtomicOperation operation) {
      return dev.kvmq.store.CommitResult.checkFailed();
    }

    @Override
    public boolean notifiesChanges() {
      return false;
    }

    @Override
    public dev.kvmq.store.KvStore.Subscription subscribe(
        dev.kvmq.store.Key prefix, Runnable listener) {
      return store.subscribe(prefix, listener);
    }

    @Override
    public void close() {}
  }

  @Test
  void aPushTakesJobOptionsAndTheJobAnswersWithTheSameNames() {
    AdminQueue<Order> q = queue("orders", Order.class);

    JsonObject job =
        QueuesResource.push(
            q,
            PushBodyTest.json(
                """
        {"state": {"id": "o-1", "tags": ["a"]}, "priority": 3, "delay": "PT10S", "retryCount": 2,
         "retryBackoff": {"kind": "exponential", "initial": "PT1S", "multiplier": 2, "max": "PT8S", "jitter": 0.5}}"""));

    Job<Order> stored = q.queue().job(job.getString("id")).orElseThrow();
    assertThat(stored.state()).isEqualTo(new Order("o-1", List.of("a")));
    assertThat(stored.retriesLeft()).isEqualTo(2);
    assertThat(stored.retryBackoff())
        .isEqualTo(Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(8), 0.5));
    assertThat(stored.delayUntil()).isEqualTo(Instant.parse("2026-12-01T10:00:10Z"));
    assertThat(job.getJsonObject("state").getString("id")).isEqualTo("o-1");
    assertThat(job.getInt("retryCount")).as("the push's retryCount, as in JobOptions").isEqualTo(2);
    assertThat(job.getInt("retriesLeft")).isEqualTo(2);
    assertThat(job.getJsonObject("retryBackoff").getString("kind")).isEqualTo("exponential");
    assertThat(job.getJsonObject("retryBackoff").getString("max")).isEqualTo("PT8S");
    assertThat(job.getString("repeatDelay")).isEqualTo("PT0S");
    assertThat(job.getString("delayUntil")).isEqualTo("2026-12-01T10:00:10Z");
  }

  /** A misspelt property is named in the 400's detail (it was dropped for a generic message). */
  @Test
  void aStateWithAPropertyItsTypeLacksIsRefusedNamingTheProperty() throws Exception {
    try (Jsonb strict = JsonbBuilder.create(JsonbCodec.config())) {
      JsonbCodec<Order> codec = new JsonbCodec<>(strict, Order.class);
      AdminQueue<Order> q =
          new AdminQueue<>(Queue.builder(store, "strict", codec).clock(clock).build(), codec);
      PushBody.Refused e =
          catchThrowableOfType(
              PushBody.Refused.class,
              () ->
                  QueuesResource.push(
                      q, PushBodyTest.json("{\"state\": {\"id\": \"o-1\", \"tagz\": []}}")));
      assertThat(e).isNotNull();
      assertThat(e.field).isEqualTo("state");
      assertThat(e.getMessage())
          .startsWith("state does not fit the queue's type: " + Order.class.getTypeName())
          .contains("tagz");
      assertThat(q.queue().jobs()).isEmpty();
    }
  }

  public static class Task {
    public int failTimes;
    public long sleepMs;
    public boolean stubborn;
  }

  /**
   * What a new user saw on Payara and WildFly: these pushes answered 201 and stored {@code
   * -2147483648}, {@code 1215752191}, {@code 1}, {@code 5076944270305263616} and {@code false}.
   * Each is refused now with a 400 naming the property and why, and nothing is stored; a state of
   * the wrong JSON kind says what was expected (it said "Internal error: null").
   */
  @Test
  void aStateJsonbWouldChangeIsRefusedNamingThePropertyAndNothingIsStored() throws Exception {
    try (Jsonb strict = JsonbBuilder.create(JsonbCodec.config())) {
      JsonbCodec<Task> codec = new JsonbCodec<>(strict, Task.class);
      AdminQueue<Task> q =
          new AdminQueue<>(Queue.builder(store, "probe", codec).clock(clock).build(), codec);
      String fit = "state does not fit the queue's type: " + Task.class.getTypeName() + ": ";
      String[][] refused = {
        {"{\"failTimes\": 2147483648}", "failTimes: 2147483648 is out of range of int"},
        {"{\"failTimes\": 99999999999}", "failTimes: 99999999999 is out of range of int"},
        {"{\"failTimes\": 1.5}", "failTimes: 1.5 is not a whole number"},
        {"{\"sleepMs\": 1e30}", "sleepMs: 1E+30 is out of range of long"},
        {"{\"stubborn\": \"yes\"}", "stubborn: \"yes\" is not true or false"},
        {"\"text\"", "expected a JSON object, got a string"},
        {"5", "expected a JSON object, got a number"},
      };
      for (String[] r : refused) {
        PushBody.Refused e =
            catchThrowableOfType(
                PushBody.Refused.class,
                () -> QueuesResource.push(q, PushBodyTest.json("{\"state\": " + r[0] + "}")));
        assertThat(e).as(r[0]).isNotNull();
        assertThat(e.field).isEqualTo("state");
        assertThat(e.getMessage()).as(r[0]).isEqualTo(fit + r[1]);
      }
      assertThat(q.queue().jobs()).isEmpty();

      JsonObject job =
          QueuesResource.push(
              q,
              PushBodyTest.json(
                  "{\"state\": {\"failTimes\": 2147483647, \"sleepMs\": 9223372036854775807,"
                      + " \"stubborn\": true}}"));
      assertThat(job.getString("outcome")).isEqualTo(QueuesResource.CREATED);
      Task stored = q.queue().job(job.getString("id")).orElseThrow().state();
      assertThat(stored.failTimes).isEqualTo(Integer.MAX_VALUE);
      assertThat(stored.sleepMs).isEqualTo(Long.MAX_VALUE);
    }
  }

  @Test
  void aPushWithAGroupAnswersCreatedAndTheJobShowsItsGroup() {
    AdminQueue<Order> q = queue("orders", Order.class);

    JsonObject job =
        QueuesResource.push(
            q,
            PushBodyTest.json("{\"state\": {\"id\": \"o-1\", \"tags\": []}, \"group\": \"acme\"}"));

    assertThat(job.getString("outcome")).isEqualTo(QueuesResource.CREATED);
    assertThat(job.getString("group")).isEqualTo("acme");
    assertThat(job.containsKey("unique")).as("no unique key, no field").isFalse();
    assertThat(q.queue().job(job.getString("id")).orElseThrow().group()).contains("acme");
    JsonObject plain =
        QueuesResource.push(q, PushBodyTest.json("{\"state\": {\"id\": \"o-2\", \"tags\": []}}"));
    assertThat(plain.containsKey("group")).as("no group, no field").isFalse();
  }

  @Test
  void aPushWithATimeoutAndInterruptOnCancelStoresThemAndTheJobShowsThem() {
    AdminQueue<Order> q = queue("orders", Order.class);

    JsonObject job =
        QueuesResource.push(
            q,
            PushBodyTest.json(
                "{\"state\": {\"id\": \"o-1\", \"tags\": []}, \"timeout\": \"PT45S\","
                    + " \"interruptOnCancel\": true}"));

    Job<Order> stored = q.queue().job(job.getString("id")).orElseThrow();
    assertThat(stored.timeout()).contains(Duration.ofSeconds(45));
    assertThat(stored.interruptOnCancel()).isTrue();
    assertThat(job.getString("timeout")).isEqualTo("PT45S");
    assertThat(job.getBoolean("interruptOnCancel")).isTrue();
    JsonObject plain =
        QueuesResource.push(q, PushBodyTest.json("{\"state\": {\"id\": \"o-2\", \"tags\": []}}"));
    assertThat(plain.containsKey("timeout")).as("no timeout of its own, no field").isFalse();
    assertThat(plain.getBoolean("interruptOnCancel")).isFalse();
  }

  @Test
  void aDuplicatePushAnswersTheJobThatHoldsTheKeyAndWritesNothing() {
    AdminQueue<Order> q = queue("orders", Order.class);
    String body =
        "{\"state\": {\"id\": \"%s\", \"tags\": []}, \"delay\": \"PT1M\","
            + " \"unique\": {\"key\": \"sync-7\", \"scope\": \"waiting-or-running\"}}";

    JsonObject first = QueuesResource.push(q, PushBodyTest.json(body.formatted("first")));
    JsonObject again = QueuesResource.push(q, PushBodyTest.json(body.formatted("again")));

    assertThat(first.getString("outcome")).isEqualTo("created");
    assertThat(first.getJsonObject("unique"))
        .isEqualTo(PushBody.uniqueJson(dev.kvmq.UniqueKey.whileWaitingOrRunning("sync-7")));
    assertThat(first.getBoolean("holdsUniqueKey")).isTrue();
    assertThat(again.getString("outcome")).isEqualTo("duplicate");
    assertThat(again.getString("id")).isEqualTo(first.getString("id"));
    assertThat(again.getJsonObject("state").getString("id")).isEqualTo("first");
    assertThat(q.queue().counts().delayed()).as("one job for the key").isEqualTo(1);
  }

  @Test
  void aDebouncedPushAnswersTheWaitingJobWithTheNewState() {
    AdminQueue<Order> q = queue("orders", Order.class);
    String body =
        "{\"state\": {\"id\": \"%s\", \"tags\": []}, \"delay\": \"%s\","
            + " \"unique\": {\"key\": \"reindex\", \"scope\": \"waiting\", \"debounce\": true}}";

    JsonObject first = QueuesResource.push(q, PushBodyTest.json(body.formatted("first", "PT10S")));
    JsonObject later = QueuesResource.push(q, PushBodyTest.json(body.formatted("later", "PT30S")));

    assertThat(later.getString("outcome")).isEqualTo("debounced");
    assertThat(later.getString("id")).isEqualTo(first.getString("id"));
    assertThat(later.getJsonObject("state").getString("id")).isEqualTo("later");
    assertThat(later.getString("delayUntil")).isEqualTo("2026-12-01T10:00:30Z");
    assertThat(q.queue().job(first.getString("id")).orElseThrow().state().id()).isEqualTo("later");
  }

  @Test
  void statesOfAGenericTypeGoThroughTheQueuesOwnCodec() {
    Type listOfOrders =
        ((java.lang.reflect.ParameterizedType) Orders.class.getGenericInterfaces()[0])
            .getActualTypeArguments()[0];
    AdminQueue<List<Order>> q = queue("batches", listOfOrders);

    JsonObject job =
        QueuesResource.push(q, PushBodyTest.json("{\"state\": [{\"id\": \"a\", \"tags\": []}]}"));

    assertThat(q.queue().job(job.getString("id")).orElseThrow().state())
        .containsExactly(new Order("a", List.of()));
    assertThat(job.getJsonArray("state").getJsonObject(0).getString("id")).isEqualTo("a");
  }

  @Test
  void aRefusedPushWritesNothing() {
    AdminQueue<Order> q = queue("orders", Order.class);
    for (String body :
        List.of(
            "{\"state\": {\"id\": \"x\"}, \"retryCount\": -1}",
            "{\"state\": {\"id\": \"x\"}, \"retryBackoff\": {\"kind\": \"linear\"}}",
            "{\"state\": {\"id\": \"x\"}, \"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT1S\", \"jitter\": 1}}",
            "{\"state\": {\"id\": \"x\"}, \"delayMs\": 9223372036854775807}",
            "{\"state\": {\"id\": \"x\"}, \"delay\": \"PT2562047788015215H\"}",
            "{\"state\": {\"id\": [1, 2]}}",
            "{\"state\": \"not an order\"}",
            "{\"state\": null}",
            "{\"state\": {\"id\": \"x\"}, \"group\": \"\"}",
            "{\"state\": {\"id\": \"x\"}, \"unique\": {\"key\": \"k\"}}",
            "{\"priority\": 1}")) {
      PushBody.Refused e =
          catchThrowableOfType(
              PushBody.Refused.class, () -> QueuesResource.push(q, PushBodyTest.json(body)));
      assertThat(e).as(body).isNotNull();
      assertThat(e.field).as(body).isNotNull();
      assertThat(e.getMessage()).as(body).doesNotContain("Exception", "\tat ");
    }
    assertThat(q.queue().counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void aBodyThatIsNotUtf8OrNotAnObjectIsRefused() {
    for (byte[] body :
        List.of(
            new byte[] {'{', '"', (byte) 0xC3, '"', ':', '1', '}'},
            "[1]".getBytes(StandardCharsets.UTF_8),
            new byte[0],
            "[".repeat(100_000).getBytes(StandardCharsets.UTF_8))) {
      PushBody.Refused e =
          catchThrowableOfType(
              PushBody.Refused.class,
              () -> QueuesResource.readObject(new ByteArrayInputStream(body)));
      assertThat(e).isNotNull();
      assertThat(e.field).isNull();
    }
  }

  /**
   * Found by a new user: valid JSON that is not an object got "nested too deeply"; content after
   * the object was ignored (a second object silently dropped, with a 201); a field given twice took
   * its last value.
   */
  @Test
  void aBodyIsOneJsonObjectWithEachFieldOnce() {
    for (String body : List.of("[]", "[1,2]", "\"x\"", "5", "null", "true")) {
      assertThat(refusal(body)).as(body).hasMessage("the body must be a JSON object");
    }
    for (String body :
        List.of(
            "{\"state\":{\"to\":\"x\"}} trailing",
            "{\"state\":{\"to\":\"a\"}}{\"state\":{\"to\":\"b\"}}",
            "{\"state\":1} 5")) {
      PushBody.Refused e = refusal(body);
      assertThat(e.field).as(body).isNull();
      assertThat(e.getMessage()).as(body).doesNotContain("nested too deeply");
    }
    PushBody.Refused twice = refusal("{\"state\":{},\"priority\":1,\"priority\":2}");
    assertThat(twice.field).isEqualTo("priority");
    assertThat(twice.getMessage()).contains("\"priority\" twice");
    assertThat(
            QueuesResource.readObject(
                new ByteArrayInputStream(
                    " {\"state\":{\"a\":[1,{\"b\":2}]},\"priority\":1} \n"
                        .getBytes(StandardCharsets.UTF_8))))
        .as("whitespace around the object is fine; nested values are read whole")
        .hasToString("{\"state\":{\"a\":[1,{\"b\":2}]},\"priority\":1}");
  }

  /**
   * A query parameter is read as a whole number by kvmq, not JAX-RS (whose failed conversion is a
   * bare 404); the refusals, a 400 naming the field, need a JAX-RS runtime: RestFuzzIT checks them.
   */
  @Test
  void aQueryParameterIsReadAsAWholeNumber() {
    assertThat(QueuesResource.whole(null, "limit")).isNull();
    assertThat(QueuesResource.whole("25", "limit")).isEqualTo(25);
    assertThat(QueuesResource.whole(" 7 ", "limit")).isEqualTo(7);
    assertThat(QueuesResource.whole("-1", "offset")).isEqualTo(-1); // refused later, by its range
  }

  private static PushBody.Refused refusal(String body) {
    PushBody.Refused e =
        catchThrowableOfType(
            PushBody.Refused.class,
            () ->
                QueuesResource.readObject(
                    new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8))));
    assertThat(e).as(body).isNotNull();
    return e;
  }
}
