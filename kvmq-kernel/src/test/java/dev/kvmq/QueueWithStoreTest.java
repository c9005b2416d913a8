package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Queue#withStore}: the same queue (name, codec, clock) on another store, for a view that
 * commits in a transaction the caller holds; the original queue stays on its own store.
 */
class QueueWithStoreTest {

  final FakeClock clock = new FakeClock();
  final InMemoryKvStore home = new InMemoryKvStore();
  final InMemoryKvStore other = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(home, "mail", Codecs.utf8()).clock(clock).build();

  @AfterEach
  void close() {
    home.close();
    other.close();
  }

  @Test
  void aPushOnTheOtherStoreIsTheSameQueuesJobThere() {
    clock.advance(Duration.ofMinutes(5));
    Instant now = clock.instant();
    Queue<String> there = queue.withStore(other);

    Job<String> job = there.push("hello");

    assertThat(there.name()).isEqualTo("mail");
    assertThat(there.store()).isSameAs(other);
    assertThat(there.codec()).isSameAs(queue.codec());
    assertThat(job.createdAt()).as("the queue's clock").isEqualTo(now);
    assertThat(Queue.builder(other, "mail", Codecs.utf8()).build().job(job.id()))
        .map(Job::state)
        .contains("hello");
    assertThat(queue.job(job.id())).as("not on the original store").isEmpty();
    assertThat(queue.store()).isSameAs(home);
  }

  @Test
  void aNullStoreIsRefused() {
    assertThatThrownBy(() -> queue.withStore(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("store");
  }
}
