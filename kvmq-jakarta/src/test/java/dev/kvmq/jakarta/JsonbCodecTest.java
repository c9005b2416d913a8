package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;
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
}
