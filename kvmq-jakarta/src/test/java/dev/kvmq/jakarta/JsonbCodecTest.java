package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.json.JsonValue;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** JSON-B payloads with Yasson: records and generic types round-trip. */
class JsonbCodecTest {

  public record Order(String id, int quantity, List<String> tags) {}

  static class Holder implements JobTypes<List<Order>> {}

  interface JobTypes<T> {}

  final Jsonb jsonb = JsonbBuilder.create();

  @AfterEach
  void close() throws Exception {
    jsonb.close();
  }

  @Test
  void recordsRoundTrip() {
    JsonbCodec<Order> codec = new JsonbCodec<>(jsonb, Order.class);
    Order o = new Order("o-1", 3, List.of("a", "b"));
    byte[] bytes = codec.encode(o);
    assertThat(new String(bytes, StandardCharsets.UTF_8)).contains("\"quantity\":3");
    assertThat(codec.decode(bytes)).isEqualTo(o);
  }

  @Test
  void genericTypesRoundTrip() {
    Type listOfOrders =
        ((java.lang.reflect.ParameterizedType) Holder.class.getGenericInterfaces()[0])
            .getActualTypeArguments()[0];
    JsonbCodec<List<Order>> codec = new JsonbCodec<>(jsonb, listOfOrders);
    List<Order> orders = List.of(new Order("a", 1, List.of()), new Order("b", 2, List.of("x")));
    List<Order> back = codec.decode(codec.encode(orders));
    assertThat(back).isEqualTo(orders);
    assertThat(back.get(0)).isInstanceOf(Order.class);
  }

  public record Bill(String customer, long cents) {}

  public static class Invoice {
    public String number;
    public long cents;
  }

  final Jsonb strict = JsonbBuilder.create(JsonbCodec.config());

  @AfterEach
  void closeStrict() throws Exception {
    strict.close();
  }

  @Test
  void anUnknownPropertyIsRefusedWithItsName() {
    JsonbCodec<Bill> bills = new JsonbCodec<>(strict, Bill.class);
    assertThatThrownBy(() -> bills.read("{\"customer\":\"ada\",\"amount\":1250}"))
        .isInstanceOf(JsonbException.class)
        .hasMessageStartingWith("the JSON does not fit " + Bill.class.getName() + ": ")
        .hasMessageContaining("amount");
    assertThatThrownBy(
            () -> bills.decode("{\"cents\":5,\"amount\":1}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(JsonbException.class)
        .hasMessageContaining("amount");
    assertThat(bills.read("{\"customer\":\"ada\",\"cents\":1250}"))
        .isEqualTo(new Bill("ada", 1250));

    JsonbCodec<Invoice> invoices = new JsonbCodec<>(strict, Invoice.class);
    assertThatThrownBy(() -> invoices.read("{\"number\":\"7\",\"amount\":1250}"))
        .isInstanceOf(JsonbException.class)
        .hasMessageContaining("amount");
  }

  @Test
  void aQueueThatOptedOutDropsUnknownProperties() {
    JsonbCodec<Bill> lenient =
        new JsonbCodec<>(jsonb, Bill.class); // JsonbBuilder.create(): JSON-B's default
    assertThat(lenient.read("{\"customer\":\"ada\",\"cents\":7,\"note\":\"x\"}"))
        .isEqualTo(new Bill("ada", 7));
  }

  @Test
  void jsonThatDoesNotFitIsRefused() {
    JsonbCodec<Order> codec = new JsonbCodec<>(jsonb, Order.class);
    assertThatThrownBy(
            () -> codec.decode("{\"quantity\":\"many\"}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(JsonbException.class);
  }

  public static class Task {
    public int failTimes;
    public long sleepMs;
    public boolean stubborn;
  }

  /** What {@code Task} reads {@code json} as, or why it refuses it. */
  String taskRead(String json) {
    try {
      Task t = new JsonbCodec<Task>(strict, Task.class).read(json);
      return t.failTimes + " " + t.sleepMs + " " + t.stubborn;
    } catch (JsonbException e) {
      return e.getMessage();
    }
  }

  static final String TASK = "the JSON does not fit " + Task.class.getTypeName() + ": ";

  /**
   * What a new user measured on Payara and WildFly: Yasson wrapped, cut or guessed these, and the
   * push answered 201 with the changed value. Each is refused, naming the property and why.
   */
  @Test
  void aNumberOrBooleanJsonbWouldChangeIsRefusedNamingThePropertyAndWhy() {
    assertThat(taskRead("{\"failTimes\":2147483648}"))
        .isEqualTo(TASK + "failTimes: 2147483648 is out of range of int");
    assertThat(taskRead("{\"failTimes\":99999999999}"))
        .isEqualTo(TASK + "failTimes: 99999999999 is out of range of int");
    assertThat(taskRead("{\"failTimes\":1.5}"))
        .isEqualTo(TASK + "failTimes: 1.5 is not a whole number");
    assertThat(taskRead("{\"sleepMs\":1e30}"))
        .isEqualTo(TASK + "sleepMs: 1E+30 is out of range of long");
    assertThat(taskRead("{\"sleepMs\":9223372036854775808}"))
        .isEqualTo(TASK + "sleepMs: 9223372036854775808 is out of range of long");
    assertThat(taskRead("{\"stubborn\":\"yes\"}"))
        .isEqualTo(TASK + "stubborn: \"yes\" is not true or false");
    assertThat(taskRead("{\"stubborn\":1}")).isEqualTo(TASK + "stubborn: 1 is not true or false");
  }

  /** The limits themselves, and input JSON-B reads exactly though not as written, are kept. */
  @Test
  void valuesAtTheLimitsAndExactConversionsAreKept() {
    assertThat(taskRead("{\"failTimes\":2147483647,\"sleepMs\":9223372036854775807}"))
        .isEqualTo("2147483647 9223372036854775807 false");
    assertThat(taskRead("{\"failTimes\":-2147483648,\"sleepMs\":-9223372036854775808}"))
        .isEqualTo("-2147483648 -9223372036854775808 false");
    assertThat(taskRead("{\"failTimes\":1.0,\"sleepMs\":2e3,\"stubborn\":true}"))
        .as("1.0 is exactly 1")
        .isEqualTo("1 2000 true");
    assertThat(taskRead("{\"failTimes\":\"7\",\"stubborn\":\"TRUE\"}"))
        .as("a number or boolean as a string, kept exactly")
        .isEqualTo("7 0 true");
    assertThat(taskRead("{\"stubborn\":\"false\"}")).isEqualTo("0 0 false");
  }

  public static class Item {
    public int count;
  }

  public static class Batch {
    public List<Item> items;
    public Item first;
    public int[] sizes;
    public Set<Integer> ids;
  }

  @Test
  void aNestedPropertyOrAListElementIsNamedByItsPath() {
    JsonbCodec<Batch> batches = new JsonbCodec<>(strict, Batch.class);
    String fit = "the JSON does not fit " + Batch.class.getTypeName() + ": ";
    assertThatThrownBy(
            () -> batches.read("{\"items\":[{\"count\":1},{\"count\":2},{\"count\":1.5}]}"))
        .isInstanceOf(JsonbException.class)
        .hasMessage(fit + "items[2].count: 1.5 is not a whole number");
    assertThatThrownBy(() -> batches.read("{\"first\":{\"count\":4294967296}}"))
        .hasMessage(fit + "first.count: 4294967296 is out of range of int");
    assertThatThrownBy(() -> batches.read("{\"sizes\":[1,2,2147483648]}"))
        .hasMessage(fit + "sizes[2]: 2147483648 is out of range of int");
    assertThatThrownBy(() -> batches.read("{\"ids\":[3,1,4294967297]}"))
        .hasMessage(fit + "ids[2]: 4294967297 is out of range of int");

    Batch b = batches.read("{\"items\":[{\"count\":2147483647}],\"ids\":[3,1,2,1]}");
    assertThat(b.items.get(0).count).isEqualTo(Integer.MAX_VALUE);
    assertThat(b.ids).as("a set writes its own order, without duplicates").containsOnly(1, 2, 3);
  }

  public static class Amounts {
    public BigDecimal exact;
    public double approx;
    public float small;
    public BigInteger big;
    public String text;
  }

  /** Floating-point and big numbers take what they are given (a double rounds, as JSON says). */
  @Test
  void floatingPointAndBigNumbersAndStringsKeepTheirInput() {
    JsonbCodec<Amounts> amounts = new JsonbCodec<>(strict, Amounts.class);
    Amounts a =
        amounts.read(
            "{\"exact\":1e30,\"approx\":1e30,\"small\":0.1,\"big\":99999999999999999999,"
                + "\"text\":5}");
    assertThat(a.exact).isEqualByComparingTo("1e30");
    assertThat(a.approx).isEqualTo(1e30);
    assertThat(a.small).isEqualTo(0.1f);
    assertThat(a.big).isEqualTo(new BigInteger("99999999999999999999"));
    assertThat(a.text).isEqualTo("5");
    Amounts b = amounts.read("{\"exact\":1.5,\"approx\":0.12345678901234567890123,\"small\":1.5}");
    assertThat(b.exact).isEqualByComparingTo("1.5");
    assertThat(b.approx).isEqualTo(0.12345678901234567890123);
    assertThat(b.small).isEqualTo(1.5f);
    assertThatThrownBy(() -> amounts.read("{\"approx\":1e400}"))
        .as("Infinity: JSON-B can't write it, so the queue could not store it")
        .hasMessageStartingWith(
            "the JSON does not fit " + Amounts.class.getTypeName() + ": it can't be written back");
  }

  @Test
  void aTopLevelNumberOrBooleanTypeIsCheckedToo() {
    JsonbCodec<Integer> ints = new JsonbCodec<>(strict, Integer.class);
    assertThatThrownBy(() -> ints.read("2147483648"))
        .hasMessage("the JSON does not fit java.lang.Integer: 2147483648 is out of range of int");
    assertThat(ints.read("2147483647")).isEqualTo(Integer.MAX_VALUE);
    JsonbCodec<Long> longs = new JsonbCodec<>(strict, Long.class);
    assertThatThrownBy(() -> longs.read("1.5"))
        .hasMessage("the JSON does not fit java.lang.Long: 1.5 is not a whole number");
    JsonbCodec<Boolean> booleans = new JsonbCodec<>(strict, Boolean.class);
    assertThatThrownBy(() -> booleans.read("\"yes\""))
        .hasMessage("the JSON does not fit java.lang.Boolean: \"yes\" is not true or false");
    assertThat(new JsonbCodec<String>(strict, String.class).read("\"yes\"")).isEqualTo("yes");
  }

  /** The codec of a queue nothing here opens reads any JSON as it is, as before. */
  @Test
  void aJsonValueTypeReadsAnyJsonUnchanged() {
    JsonbCodec<Object> values = new JsonbCodec<>(jsonb, JsonValue.class);
    String json = "{\"a\":1e400,\"b\":[2147483648,1.5,\"yes\"],\"c\":true}";
    assertThat(values.read(json)).isEqualTo(PushBodyTest.json(json));
  }

  /** JSON of the wrong kind for the whole state said what was expected ("Internal error: null"). */
  @Test
  void jsonOfTheWrongKindSaysWhatWasExpected() {
    assertThat(taskRead("\"text\"")).isEqualTo(TASK + "expected a JSON object, got a string");
    assertThat(taskRead("5")).isEqualTo(TASK + "expected a JSON object, got a number");
    assertThat(taskRead("true")).isEqualTo(TASK + "expected a JSON object, got a boolean");
  }
}
