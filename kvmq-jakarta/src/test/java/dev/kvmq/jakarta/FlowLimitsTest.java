package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.Codecs;
import dev.kvmq.Queue;
import dev.kvmq.RateLimit;
import dev.kvmq.store.InMemoryKvStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Group limits and rate limits from {@code kvmq.queue.NAME.group-limit}, {@code
 * kvmq.queue.NAME.group.GROUP.limit} and {@code kvmq.queue.NAME.rate-limit}: read into the queue's
 * builder, and every bad key or value reported at deployment with KVMQ-020 or KVMQ-021, naming the
 * key.
 */
class FlowLimitsTest {

  static KvmqConfig config(Map<String, String> values) {
    return new KvmqConfig(
        key -> Optional.ofNullable(values.get(key)), () -> new TreeSet<>(values.keySet()));
  }

  @Test
  void theLimitsOfAQueueAndItsGroupsReachTheQueue() throws Exception {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.calls.group-limit", "2",
                "kvmq.queue.calls.group.big.customer.limit", "10", // a dot in the group's name
                "kvmq.queue.calls.group.vip.limit", " unlimited ",
                "kvmq.queue.calls.group.frozen.limit", "0",
                "kvmq.queue.calls.rate-limit", "100/PT1M",
                "kvmq.queue.other.group-limit", "5"));

    FlowLimits limits = FlowLimits.of("calls", config);

    assertThat(limits.groupLimit()).isEqualTo(2);
    assertThat(limits.groupLimits())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("big.customer", 10, "vip", Queue.UNLIMITED, "frozen", 0));
    assertThat(limits.rateLimit()).isEqualTo(new RateLimit(100, Duration.ofMinutes(1)));
    try (InMemoryKvStore store = new InMemoryKvStore()) {
      Queue<String> q = limits.applyTo(Queue.builder(store, "calls", Codecs.utf8())).build();
      assertThat(q.groupLimit("anyone")).isEqualTo(2);
      assertThat(q.groupLimit("big.customer")).isEqualTo(10);
      assertThat(q.groupLimit("vip")).isEqualTo(Queue.UNLIMITED);
      assertThat(q.groupLimit("frozen")).isZero();
      assertThat(q.rateLimit()).contains(new RateLimit(100, Duration.ofMinutes(1)));
    }
    assertThat(FlowLimits.check(config)).isEmpty();
  }

  @Test
  void aQueueWithoutKeysHasNoLimit() {
    FlowLimits limits = FlowLimits.of("plain", config(Map.of()));

    assertThat(limits).isEqualTo(FlowLimits.NONE);
    assertThat(limits.groupLimit()).isEqualTo(Queue.UNLIMITED);
    assertThat(limits.rateLimit()).isNull();
  }

  @Test
  void everyBadKeyOrValueIsReportedWithItsCodeAndKey() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.a.group-limit",
                "-1",
                "kvmq.queue.a.group.g.limit",
                "many",
                "kvmq.queue.a.group.g.concurrency",
                "2", // names no property of a group
                "kvmq.queue.a.group." + "x".repeat(201) + ".limit",
                "1",
                "kvmq.queue.a.rate-limit",
                "100",
                "kvmq.queue.b.rate-limit",
                "0/PT1M",
                "kvmq.queue.c.rate-limit",
                "10/PT0S",
                "kvmq.queue.d.rate-limit",
                "10/minute",
                "kvmq.queue.e.group-limit",
                "2147483648"));

    List<String> problems = FlowLimits.check(config);

    assertThat(problems).hasSize(9);
    assertThat(problems)
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-020: kvmq.queue.a.group-limit is \"-1\"")
                    .contains("a whole number from 0"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-020: kvmq.queue.a.group.g.limit is \"many\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith(
                        "KVMQ-020: configuration key kvmq.queue.a.group.g.concurrency names no"
                            + " property of a group of queue \"a\"")
                    .endsWith("kvmq.queue.a.group.GROUP.limit, .rate-limit"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-020: configuration key kvmq.queue.a.group.xxx"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.rate-limit is \"100\"")
                    .contains("such as 100/PT1M"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-021: kvmq.queue.b.rate-limit is \"0/PT1M\""))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-021: kvmq.queue.c.rate-limit is \"10/PT0S\""))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-021: kvmq.queue.d.rate-limit is \"10/minute\""))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-020: kvmq.queue.e.group-limit is \"2147483648\""));
    IllegalArgumentException e =
        catchThrowableOfType(IllegalArgumentException.class, () -> FlowLimits.of("b", config));
    assertThat(e).hasMessageStartingWith("KVMQ-021: kvmq.queue.b.rate-limit");
  }

  @Test
  void theQueueKeyCheckKnowsTheFlowKeysAndLeavesGroupKeysToFlowLimits() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.a.group-limit", "1",
                "kvmq.queue.a.rate-limit", "5/PT1S",
                "kvmq.queue.a.group.g.limit", "3",
                "kvmq.queue.a.group.g.concurrency", "3"));
    KvmqExtension ext = new KvmqExtension();

    assertThat(ext.checkQueueKeys(config)).isEmpty();
    assertThat(FlowLimits.check(config))
        .singleElement()
        .asString()
        .startsWith("KVMQ-020: configuration key kvmq.queue.a.group.g.concurrency");
  }

  @Test
  void theRateLimitsOfEveryGroupAndOfSingleGroupsReachTheQueue() throws Exception {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.calls.group-rate-limit", "10/PT1S",
                "kvmq.queue.calls.group.big.customer.rate-limit", " 100 / PT1M ",
                "kvmq.queue.calls.group.big.customer.limit", "3",
                "kvmq.queue.calls.group.slow.rate-limit", "1/PT1H"));

    FlowLimits limits = FlowLimits.of("calls", config);

    assertThat(limits.groupRateLimit()).isEqualTo(new RateLimit(10, Duration.ofSeconds(1)));
    assertThat(limits.groupRateLimits())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "big.customer", new RateLimit(100, Duration.ofMinutes(1)),
                "slow", new RateLimit(1, Duration.ofHours(1))));
    assertThat(limits.groupLimits()).containsExactlyEntriesOf(Map.of("big.customer", 3));
    assertThat(limits.rateLimit()).as("the queue's own rate: none").isNull();
    try (InMemoryKvStore store = new InMemoryKvStore()) {
      Queue<String> q = limits.applyTo(Queue.builder(store, "calls", Codecs.utf8())).build();
      assertThat(q.groupRateLimit("anyone")).contains(new RateLimit(10, Duration.ofSeconds(1)));
      assertThat(q.groupRateLimit("big.customer"))
          .contains(new RateLimit(100, Duration.ofMinutes(1)));
      assertThat(q.groupRateLimit("slow")).contains(new RateLimit(1, Duration.ofHours(1)));
      assertThat(q.groupLimit("big.customer")).isEqualTo(3);
      assertThat(q.rateLimit()).isEmpty();
    }
    assertThat(FlowLimits.check(config)).isEmpty();
    assertThat(new KvmqExtension().checkQueueKeys(config)).isEmpty();
    assertThat(FlowLimits.of("plain", config(Map.of())).groupRateLimit()).isNull();
  }

  @Test
  void everyBadGroupRateLimitIsReportedWithItsCodeAndKey() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.a.group-rate-limit",
                "0/PT1S", // no starts
                "kvmq.queue.a.group.g.rate-limit",
                "100001/PT1M", // too many starts
                "kvmq.queue.a.group.h.rate-limit",
                "5/PT0.0001S", // a period under 1 ms
                "kvmq.queue.a.group.i.rate-limit",
                "-3/PT1S",
                "kvmq.queue.a.group.j.rate-limit",
                "ten a second",
                "kvmq.queue.a.group." + "x".repeat(201) + ".rate-limit",
                "1/PT1S",
                "kvmq.queue.b.group-rate-limit",
                "5"));

    List<String> problems = FlowLimits.check(config);

    assertThat(problems).hasSize(7);
    assertThat(problems)
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.group-rate-limit is \"0/PT1S\"")
                    .contains("a rate limit is STARTS/PERIOD, 1 to 100000 starts"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.group.g.rate-limit is \"100001/PT1M\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.group.h.rate-limit is \"5/PT0.0001S\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.group.i.rate-limit is \"-3/PT1S\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-021: kvmq.queue.a.group.j.rate-limit is \"ten a second\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-020: configuration key kvmq.queue.a.group.xxx")
                    .contains("names a bad group"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-021: kvmq.queue.b.group-rate-limit is \"5\""));
    IllegalArgumentException e =
        catchThrowableOfType(IllegalArgumentException.class, () -> FlowLimits.of("b", config));
    assertThat(e).hasMessageStartingWith("KVMQ-021: kvmq.queue.b.group-rate-limit");
  }
}
