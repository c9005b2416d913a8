package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.Retention;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * A queue's timeout, non-retryable exception types and retention, from {@link QueueHandler} and
 * {@code kvmq.queue.NAME.*}, and the deployment problems of bad ones (KVMQ-017 to KVMQ-019).
 */
class QueueControlTest {

  public record Mail(String to) {}

  static final KvmqConfig NO_CONFIG = new KvmqConfig(key -> Optional.empty());

  static KvmqConfig config(Map<String, String> values) {
    return new KvmqConfig(
        key -> Optional.ofNullable(values.get(key)), () -> new TreeSet<>(values.keySet()));
  }

  @QueueHandler(
      value = "controlled",
      timeout = "PT30S",
      nonRetryable = {IllegalArgumentException.class, UncheckedIOException.class},
      keepCompleted = "P7D,500",
      keepCancelled = "none",
      keepDead = "P30D")
  static class ControlledHandler implements JobHandler<Mail> {
    @Override
    public void handle(Job<Mail> job, JobContext<Mail> context) {}
  }

  @QueueHandler("plain")
  static class PlainHandler implements JobHandler<Mail> {
    @Override
    public void handle(Job<Mail> job, JobContext<Mail> context) {}
  }

  @QueueHandler(
      value = "broken",
      timeout = "30 seconds",
      keepCompleted = "P1D,P2D",
      keepDead = "-5",
      concurrency = -1)
  static class BrokenHandler implements JobHandler<Mail> {
    @Override
    public void handle(Job<Mail> job, JobContext<Mail> context) {}
  }

  @Test
  void theAnnotationGivesTheQueuesTimeoutNonRetryableTypesAndRetention() {
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(ControlledHandler.class), null, NO_CONFIG)).isEmpty();

    QueueControl c = ext.settings("controlled", NO_CONFIG).control();
    assertThat(c.timeout()).contains(Duration.ofSeconds(30));
    assertThat(c.nonRetryable())
        .containsExactlyInAnyOrder(IllegalArgumentException.class, UncheckedIOException.class);
    assertThat(c.retention().completed()).isEqualTo(Retention.Keep.atMost(Duration.ofDays(7), 500));
    assertThat(c.retention().cancelled()).isEqualTo(Retention.Keep.none());
    assertThat(c.retention().dead()).isEqualTo(Retention.Keep.youngerThan(Duration.ofDays(30)));
  }

  @Test
  void withoutSettingsAQueueHasNoTimeoutNoNonRetryableTypesAndKvmqsRetention() {
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(PlainHandler.class), null, NO_CONFIG)).isEmpty();

    QueueControl c = ext.settings("plain", NO_CONFIG).control();
    assertThat(c.timeout()).isEmpty();
    assertThat(c.nonRetryable()).isEmpty();
    assertThat(c.retention()).isEqualTo(Retention.defaults());
    assertThat(ext.settings("pushed-only", NO_CONFIG).control()).isEqualTo(QueueControl.DEFAULTS);
  }

  @Test
  void configurationOverridesTheAnnotation() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.controlled.timeout", "PT2S",
                "kvmq.queue.controlled.non-retryable",
                    " java.lang.IllegalStateException , java.lang.ArithmeticException",
                "kvmq.queue.controlled.keep-completed", "1000",
                "kvmq.queue.controlled.keep-cancelled", "unlimited",
                "kvmq.queue.controlled.keep-dead", "none"));
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(ControlledHandler.class), null, config)).isEmpty();
    assertThat(ext.checkQueueKeys(config)).isEmpty();

    QueueControl c = ext.settings("controlled", config).control();
    assertThat(c.timeout()).contains(Duration.ofSeconds(2));
    assertThat(c.nonRetryable())
        .as("the configured list replaces the annotation's")
        .containsExactlyInAnyOrder(IllegalStateException.class, ArithmeticException.class);
    assertThat(c.retention())
        .isEqualTo(
            new Retention(
                new Retention.Keep(Optional.empty(), OptionalLong.of(1000)),
                Retention.Keep.none(),
                Retention.Keep.unlimited()));

    KvmqConfig cleared =
        config(
            Map.of(
                "kvmq.queue.controlled.timeout", "",
                "kvmq.queue.controlled.non-retryable", ""));
    KvmqExtension ext2 = new KvmqExtension();
    assertThat(ext2.check(List.of(ControlledHandler.class), null, cleared)).isEmpty();
    assertThat(ext2.settings("controlled", cleared).control().nonRetryable())
        .as("set to nothing: none")
        .isEmpty();
  }

  @Test
  void aQueueWithoutAHandlerTakesItsSettingsFromConfiguration() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.pushed.keep-completed", "PT1H",
                "kvmq.queue.pushed.timeout", "PT5M"));
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.checkQueueKeys(config)).isEmpty();
    QueueControl c = ext.settings("pushed", config).control();
    assertThat(c.retention().completed())
        .isEqualTo(Retention.Keep.youngerThan(Duration.ofHours(1)));
    assertThat(c.timeout()).contains(Duration.ofMinutes(5));
  }

  @Test
  void badValuesAreReportedEachWithItsCodeAndSource() {
    List<String> problems =
        new KvmqExtension().check(List.of(BrokenHandler.class), null, NO_CONFIG);

    assertThat(problems).hasSize(4);
    assertThat(problems.get(0))
        .startsWith("KVMQ-004: handler " + BrokenHandler.class.getName())
        .contains("concurrency");
    assertThat(problems.get(1))
        .startsWith("KVMQ-017: handler " + BrokenHandler.class.getName() + " of queue \"broken\": ")
        .contains("@QueueHandler(timeout) is \"30 seconds\", not an ISO-8601 duration");
    assertThat(problems.get(2))
        .startsWith("KVMQ-019: handler ")
        .contains("@QueueHandler(keepCompleted) is \"P1D,P2D\": two ages");
    assertThat(problems.get(3))
        .startsWith("KVMQ-019: handler ")
        .contains("@QueueHandler(keepDead) is \"-5\"", "neither an ISO-8601 duration");
  }

  @Test
  void badConfigurationIsReportedWithTheKey() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.plain.timeout", "PT0S",
                "kvmq.queue.plain.non-retryable",
                    "java.lang.String,no.such.Exception,,java.lang.IllegalStateException",
                "kvmq.queue.plain.keep-cancelled", "P1D,10,20",
                "kvmq.queue.elsewhere.keep-dead", "forever"));
    KvmqExtension ext = new KvmqExtension();
    List<String> problems = ext.check(List.of(PlainHandler.class), null, config);
    problems.addAll(ext.checkQueueKeys(config));

    assertThat(problems)
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-017: handler ")
                    .contains("kvmq.queue.plain.timeout is PT0S; a timeout is at least 1 ms"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-018: ")
                    .contains(
                        "kvmq.queue.plain.non-retryable names java.lang.String, which is not an"
                            + " exception"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-018: ")
                    .contains("names no.such.Exception, a class that the application can't load"))
        .anySatisfy(p -> assertThat(p).startsWith("KVMQ-018: ").contains("an empty entry"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-019: ")
                    .contains("kvmq.queue.plain.keep-cancelled", "two counts"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-019: queue \"elsewhere\": kvmq.queue.elsewhere.keep-dead"));
    assertThat(problems).hasSize(6).noneMatch(p -> p.startsWith("KVMQ-004"));
  }

  @Test
  void theNewKeysAreKnownSettings() {
    assertThat(QueueSettings.KEYS)
        .contains("timeout", "non-retryable", "keep-completed", "keep-cancelled", "keep-dead");
    KvmqConfig misspelt = config(Map.of("kvmq.queue.plain.keep-complete", "P1D"));
    assertThat(new KvmqExtension().checkQueueKeys(misspelt))
        .singleElement()
        .asString()
        .startsWith("KVMQ-004: configuration key kvmq.queue.plain.keep-complete names no setting")
        .contains(".keep-completed");
    assertThat(Set.copyOf(QueueSettings.KEYS)).hasSameSizeAs(QueueSettings.KEYS);
  }

  /** A misspelt key outside kvmq.queue.* is found (and warned of at deployment), not ignored. */
  @Test
  void keysOutsideTheQueuesThatNameNoSettingAreFound() {
    java.util.Map<String, String> keys =
        java.util.Map.of(
            "kvmq.store", "postgres",
            "kvmq.postgres.jta-datasorce", "java:app/jdbc/x",
            "kvmq.rest.enabled", "true",
            "kvmq.queue.mail.concurrency", "2",
            "kvmq.restenabled", "true",
            "kvmq.rest.enable", "true",
            "kvmq.demo.journal", "/tmp/journal");
    KvmqConfig config =
        new KvmqConfig(key -> java.util.Optional.ofNullable(keys.get(key)), keys::keySet);
    assertThat(new KvmqExtension().unknownKeys(config))
        .containsExactly("kvmq.postgres.jta-datasorce", "kvmq.rest.enable", "kvmq.restenabled");
  }
}
