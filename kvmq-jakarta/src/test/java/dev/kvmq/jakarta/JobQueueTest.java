package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.store.InMemoryKvStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A queue's default job options, and the hook a push calls (outside a transaction). */
class JobQueueTest {

  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "bills", Codecs.utf8()).build();
  final JobOptions defaults =
      JobOptions.defaults()
          .priority(3)
          .retry(5, Backoff.exponential(Duration.ofSeconds(2), 2, Duration.ofMinutes(5), 0));
  final AtomicInteger pushes = new AtomicInteger();
  final JobQueue<String> bills = new JobQueue<>(queue, null, defaults, pushes::incrementAndGet);

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void aPushWithoutOptionsTakesTheQueuesDefaults() {
    Job<String> job = bills.push("a").orElseThrow();
    assertThat(job.retryLimit()).isEqualTo(5);
    assertThat(job.retryBackoff()).isEqualTo(defaults.retryBackoff());
    assertThat(job.priority()).isEqualTo(3);
    assertThat(bills.pushAll(List.of("b", "c")))
        .allSatisfy(j -> assertThat(j.retryLimit()).isEqualTo(5));
    assertThat(bills.defaultOptions()).isEqualTo(defaults);
    assertThat(pushes).hasValue(2);
  }

  @Test
  void aPushsOwnOptionsReplaceTheDefaults() {
    Job<String> none = bills.push("a", JobOptions.defaults()).orElseThrow();
    assertThat(none.retryLimit()).isZero();
    assertThat(none.priority()).isZero();
    Job<String> kept =
        bills.push("b", bills.defaultOptions().delay(Duration.ofMinutes(1))).orElseThrow();
    assertThat(kept.retryLimit()).isEqualTo(5);
    assertThat(kept.delayUntil()).isAfter(kept.createdAt());
  }
}
