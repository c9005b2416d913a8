package dev.kvmq.jakarta.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.jakarta.JsonbCodec;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JSON-B example of docs/testkit.md, as a real test: a handler of a record state, tested with
 * the codec kvmq's queues use in a server. If this fails, the docs are wrong.
 */
class JsonbTestKitExampleTest {

  /** The state: a public record, as JSON-B needs. */
  public record Bill(String customer, long cents) {}

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  // The JSON-B configuration of kvmq's queues: unknown properties are refused.
  final Jsonb jsonb = JsonbBuilder.create(JsonbCodec.config());
  final JsonbCodec<Bill> codec = new JsonbCodec<>(jsonb, Bill.class);
  final Queue<Bill> queue = Queue.builder(store, "billing", codec).clock(clock).build();

  @AfterEach
  void close() throws Exception {
    store.close();
    jsonb.close();
  }

  @Test
  void aRecordStateGoesThroughJsonb() {
    List<Bill> charged = new ArrayList<>();
    Worker<Bill> worker =
        queue.worker((job, ctx) -> charged.add(job.state()), WorkerOptions.defaults(), scheduler);
    worker.start();

    queue.push(new Bill("ada", 1250));
    scheduler.runUntilIdle();
    assertEquals(List.of(new Bill("ada", 1250)), charged);
  }

  @Test
  void jsonThatDoesNotFitIsRefusedWithTheFieldsName() {
    // What a push over the admin REST API reads: a misspelt field is an error, not a 0.
    JsonbException e =
        assertThrows(
            JsonbException.class,
            () ->
                codec.decode(
                    "{\"customer\":\"ada\",\"amount\":1250}".getBytes(StandardCharsets.UTF_8)));
    assertTrue(e.getMessage().contains("amount"), e.getMessage());
    assertEquals(0, queue.counts().queued());
    assertEquals(
        JobStatus.WAITING,
        queue.push(codec.read("{\"customer\":\"ada\",\"cents\":1250}")).status());
  }
}
