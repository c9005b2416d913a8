package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.testkit.FakeClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link Queue#names}: every queue that holds anything, once, in name order, and nothing else. */
class QueueNamesTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore store = new InMemoryKvStore();

  Queue<String> queue(String name) {
    return Queue.builder(store, name, Codecs.utf8()).clock(clock).build();
  }

  @Test
  void listsEachQueueThatHoldsAnythingOnceInNameOrder() {
    assertThat(Queue.names(store)).isEmpty();
    queue("b").push("x");
    queue("ab").push("x", JobOptions.defaults().delay(Duration.ofMinutes(5)));
    queue("a").push("x");
    queue("a\0b").push("x"); // a name that the NUL after "a" must not skip
    queue("été").push("x");
    queue("paused only").pause();
    queue("scheduled only")
        .schedules()
        .define(
            Schedule.builder(
                    "tick",
                    ScheduleSpec.fixedRate(
                        Duration.ofMinutes(1), Instant.parse("2026-01-01T00:00:00Z")),
                    "x")
                .build());
    queue("empty"); // opened, never written
    store.commit(AtomicOperation.builder().set(Key.of("not kvmq", "q"), new byte[0]).build());
    store.commit(AtomicOperation.builder().set(Key.of("zzz"), new byte[0]).build());

    assertThat(Queue.names(store))
        .containsExactly("a", "a\0b", "ab", "b", "paused only", "scheduled only", "été");
  }
}
