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

  /**
   * The copy keeps every setting, the limits above all: a push admits or parks a job of a group by
   * the queue's limits, and a copy without them once admitted every job pushed in the caller's
   * transaction (found by a new user's test on PostgreSQL: 4 jobs of a group limited to 1 ran at
   * once).
   */
  @Test
  void theCopyKeepsTheLimitsAndSettingsSoAPushThereIsAdmittedByTheSameRules() {
    RateLimit rate = new RateLimit(10, Duration.ofSeconds(1));
    RateLimit groupRate = new RateLimit(2, Duration.ofSeconds(1));
    Queue<String> limited =
        Queue.builder(home, "mail", Codecs.utf8())
            .clock(clock)
            .groupLimit(1)
            .groupLimit("bulk", 3)
            .rateLimit(rate)
            .groupRateLimit(groupRate)
            .groupRateLimit("bulk", rate)
            .heldTimeout(Duration.ofMinutes(10))
            .defaultTimeout(Duration.ofMinutes(1))
            .maxLeaseExpiries(2)
            .retention(Retention.none())
            .node("n1")
            .build();
    Queue<String> there = limited.withStore(home);
    assertThat(there.groupLimit("any")).isEqualTo(1);
    assertThat(there.groupLimit("bulk")).isEqualTo(3);
    assertThat(there.rateLimit()).contains(rate);
    assertThat(there.groupRateLimit("any")).contains(groupRate);
    assertThat(there.groupRateLimit("bulk")).contains(rate);
    assertThat(there.heldTimeout()).contains(Duration.ofMinutes(10));
    assertThat(there.retention()).isEqualTo(Retention.none());
    assertThat(there.node()).isEqualTo("n1");

    for (int i = 0; i < 4; i++) {
      there.push("p" + i, JobOptions.defaults().group("g"));
    }
    assertThat(there.jobs())
        .as("one admitted, three parked: all waiting, the admitted one first")
        .hasSize(4);
    assertThat(home.count(limited.keys.ready())).as("admitted: in the ready index").isEqualTo(1);
  }

  @Test
  void aNullStoreIsRefused() {
    assertThatThrownBy(() -> queue.withStore(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("store");
  }
}
