package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad input is refused with a message naming the problem, and writes nothing. */
class OptionsValidationTest {

  @Test
  void jobOptions() {
    JobOptions d = JobOptions.defaults();
    assertThatThrownBy(() -> d.priority(Double.NaN))
        .hasMessageContaining("priority must be a finite number");
    assertThatThrownBy(() -> d.priority(Double.POSITIVE_INFINITY)).hasMessageContaining("finite");
    assertThatThrownBy(() -> d.delay(Duration.ofSeconds(-1)))
        .hasMessageContaining("delay must not be negative");
    assertThatThrownBy(() -> d.repeat(-2, Duration.ZERO)).hasMessageContaining("repeatCount");
    assertThatThrownBy(() -> d.retry(-1, Backoff.NONE)).hasMessageContaining("retryCount");
    assertThatThrownBy(
            () -> Backoff.exponential(Duration.ofSeconds(2), 2, Duration.ofSeconds(1), 0))
        .hasMessageContaining("max");
    assertThatThrownBy(
            () -> Backoff.exponential(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(1), 0))
        .hasMessageContaining("multiplier");
    assertThatThrownBy(
            () -> Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(1), 2))
        .hasMessageContaining("jitter");
    assertThat(d.priority(-0.0).priority()).isEqualTo(0.0);
  }

  /**
   * Backoff and JobOptions initialize in either order: Backoff first (as a record decoded from the
   * store loads it) once made JobOptions' defaults see a null Backoff.NONE.
   */
  @Test
  void backoffAndJobOptionsInitializeInEitherOrder() throws Exception {
    java.net.URL classes = Backoff.class.getProtectionDomain().getCodeSource().getLocation();
    for (String first : List.of("dev.kvmq.Backoff", "dev.kvmq.JobOptions")) {
      try (java.net.URLClassLoader loader =
          new java.net.URLClassLoader(new java.net.URL[] {classes}, null)) {
        Class.forName(first, true, loader);
        Object none = Class.forName("dev.kvmq.Backoff", true, loader).getField("NONE").get(null);
        Object defaults =
            Class.forName("dev.kvmq.JobOptions", true, loader).getMethod("defaults").invoke(null);
        assertThat(none).as("Backoff.NONE, %s first", first).isNotNull();
        assertThat(defaults).as("JobOptions.defaults(), %s first", first).isNotNull();
      }
    }
  }

  /** Waits whose due time would overflow the clock's milliseconds are refused, not pushed. */
  @Test
  void waitsAreBoundedSoThatEveryDueTimeFits() {
    JobOptions d = JobOptions.defaults();
    assertThatThrownBy(() -> d.delay(Duration.ofMillis(Long.MAX_VALUE)))
        .hasMessageContaining("delay must be at most");
    assertThatThrownBy(() -> d.delay(JobOptions.MAX_DELAY.plusMillis(1)))
        .hasMessageContaining("100 years");
    assertThat(d.delay(JobOptions.MAX_DELAY).delay()).isEqualTo(JobOptions.MAX_DELAY);
    assertThatThrownBy(() -> d.delayUntil(Instant.MAX)).hasMessageContaining("years 0 to 9999");
    assertThatThrownBy(() -> d.delayUntil(Instant.ofEpochMilli(Long.MIN_VALUE)))
        .hasMessageContaining("years 0 to 9999");
    assertThat(d.delayUntil(JobOptions.MAX_DELAY_UNTIL).delayUntil())
        .isEqualTo(JobOptions.MAX_DELAY_UNTIL);
    assertThatThrownBy(() -> d.repeat(1, Duration.ofDays(40_000)))
        .hasMessageContaining("repeatDelay must be at most");
    assertThatThrownBy(() -> JobChange.none().repeat(1, Duration.ofDays(40_000)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("repeat delay must be at most");
    assertThatThrownBy(
            () -> JobChange.none().repeat(1, java.time.temporal.ChronoUnit.FOREVER.getDuration()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("repeat delay must be at most");
    assertThatThrownBy(() -> Backoff.fixed(Duration.ofDays(40_000)))
        .hasMessageContaining("backoff max must be at most");
    assertThatThrownBy(
            () -> Backoff.exponential(Duration.ZERO, 2, Duration.ofMillis(Long.MAX_VALUE), 0))
        .hasMessageContaining("backoff max must be at most");

    // At the bounds, the due times a queue computes from them are exact.
    KvStore store = new InMemoryKvStore();
    Queue<String> q =
        Queue.builder(store, "far", Codecs.utf8())
            .clock(() -> Instant.parse("9999-01-01T00:00:00Z"))
            .build();
    Job<String> far = q.push("x", d.delay(JobOptions.MAX_DELAY).repeat(1, JobOptions.MAX_DELAY));
    assertThat(far.delayUntil())
        .isEqualTo(Instant.parse("9999-01-01T00:00:00Z").plus(JobOptions.MAX_DELAY));
    store.close();
    assertThat(d.delayUntil(Instant.EPOCH).delay()).isNull();
  }

  /**
   * A duration too long for a long of milliseconds (ChronoUnit.FOREVER's, say) is refused with an
   * IllegalArgumentException that names the setting, as a merely too long one is, not with an
   * ArithmeticException from its conversion to milliseconds.
   */
  @Test
  void durationsBeyondMillisecondsAreRefusedByName() {
    Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
    Duration justOver = JobOptions.MAX_DELAY.plusMillis(1);
    KvStore store = new InMemoryKvStore();
    for (Duration huge : List.of(forever, justOver)) {
      assertThatThrownBy(() -> new RateLimit(1, huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("rate limit's period");
      assertThatThrownBy(() -> JobOptions.defaults().timeout(huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("timeout must be");
      assertThatThrownBy(() -> Queue.builder(store, "d", Codecs.utf8()).defaultTimeout(huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("default timeout");
      assertThatThrownBy(() -> Queue.builder(store, "d", Codecs.utf8()).heldTimeout(huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("held timeout");
      assertThatThrownBy(() -> Retention.Keep.youngerThan(huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("retention's age");
      assertThatThrownBy(() -> WorkerOptions.defaults().lease(huge, Duration.ofSeconds(1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("leaseDuration");
      assertThatThrownBy(() -> WorkerOptions.defaults().pollInterval(huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("pollInterval");
      assertThatThrownBy(() -> UniqueKey.throttle("k", huge))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("throttle key");
    }
    Queue<String> q = Queue.builder(store, "d", Codecs.utf8()).build();
    assertThatThrownBy(
            () ->
                q.listen(
                    java.util.concurrent.Executors.newSingleThreadScheduledExecutor(),
                    forever,
                    listing -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pollInterval");
    assertThat(Queue.builder(store, "d", Codecs.utf8()).heldTimeout(JobOptions.MAX_DELAY))
        .as("the bound itself is allowed")
        .isNotNull();
    store.close();
  }

  @Test
  void workerOptions() {
    WorkerOptions d = WorkerOptions.defaults();
    assertThatThrownBy(() -> d.concurrency(-1)).hasMessageContaining("concurrency");
    assertThatThrownBy(() -> d.lease(Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .hasMessageContaining("shorter");
    assertThatThrownBy(() -> d.pollInterval(Duration.ZERO)).hasMessageContaining("pollInterval");
  }

  @Test
  void queueInput() {
    KvStore store = new InMemoryKvStore();
    assertThatThrownBy(() -> Queue.builder(store, "", Codecs.utf8()))
        .hasMessageContaining("1 to 200 characters");
    Queue<String> q = Queue.builder(store, "v", Codecs.utf8()).build();
    assertThatThrownBy(() -> q.push(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> q.pushAll(java.util.Arrays.asList("a", null), JobOptions.defaults()))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> q.push("x".repeat(KvStore.MAX_VALUE_BYTES + 1)))
        .hasMessageContaining("over the limit");
    assertThat(q.jobs()).as("nothing was written").isEmpty();
    assertThat(q.job("not-a-ulid")).isEmpty();
    assertThat(q.delete("not-a-ulid")).isFalse();
    assertThat(q.pushAll(List.of(), JobOptions.defaults())).isEmpty();
    JobFilter two = JobFilter.status(JobStatus.WAITING, JobStatus.DELAYED);
    assertThatThrownBy(() -> q.list(two, null, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes one status");
    assertThatThrownBy(() -> q.count(two))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes one status");
    Worker<String> w =
        q.worker(
            (job, ctx) -> {},
            WorkerOptions.defaults(),
            new dev.kvmq.testkit.ManualScheduler(new dev.kvmq.testkit.FakeClock()));
    w.stop();
    assertThatThrownBy(w::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("was stopped");
    store.close();
  }
}
