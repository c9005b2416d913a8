package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Backoff;
import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.JobOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The extension's checks, without a container: every problem is found, in one pass. */
class KvmqExtensionTest {

  public record Email(String to) {}

  record Hidden(String to) {}

  @QueueHandler("hidden")
  static class HiddenHandler implements JobHandler<Hidden> {
    @Override
    public void handle(Job<Hidden> job, JobContext<Hidden> context) {}
  }

  public static class Plain {
    public String value;
  }

  public interface Shape {}

  public static class NoDefaultConstructor {
    public NoDefaultConstructor(String required) {}
  }

  @QueueHandler(value = "mail", concurrency = 3, lease = "PT30S", renewEvery = "PT10S")
  static class MailHandler implements JobHandler<Email> {
    @Override
    public void handle(Job<Email> job, JobContext<Email> context) {}
  }

  @QueueHandler("generic")
  static class ListHandler implements JobHandler<List<Map<String, Plain>>> {
    @Override
    public void handle(
        Job<List<Map<String, Plain>>> job, JobContext<List<Map<String, Plain>>> context) {}
  }

  abstract static class Base<T> implements JobHandler<T> {}

  @QueueHandler("inherited")
  static class Inherited extends Base<Plain> {
    @Override
    public void handle(Job<Plain> job, JobContext<Plain> context) {}
  }

  @QueueHandler("mail")
  static class SecondMailHandler implements JobHandler<Email> {
    @Override
    public void handle(Job<Email> job, JobContext<Email> context) {}
  }

  @SuppressWarnings("rawtypes")
  @QueueHandler("raw")
  static class RawHandler implements JobHandler {
    @Override
    public void handle(Job job, JobContext context) {}
  }

  @QueueHandler("shapes")
  static class ShapeHandler implements JobHandler<Shape> {
    @Override
    public void handle(Job<Shape> job, JobContext<Shape> context) {}
  }

  @QueueHandler("ctor")
  static class CtorHandler implements JobHandler<NoDefaultConstructor> {
    @Override
    public void handle(Job<NoDefaultConstructor> job, JobContext<NoDefaultConstructor> context) {}
  }

  @QueueHandler(value = "bad", concurrency = -1)
  static class BadConcurrency implements JobHandler<String> {
    @Override
    public void handle(Job<String> job, JobContext<String> context) {}
  }

  @QueueHandler(value = "bad-lease", lease = "5 seconds")
  static class BadLease implements JobHandler<String> {
    @Override
    public void handle(Job<String> job, JobContext<String> context) {}
  }

  @QueueHandler(value = "bad-renew", lease = "PT2S", renewEvery = "PT2S")
  static class BadRenew implements JobHandler<String> {
    @Override
    public void handle(Job<String> job, JobContext<String> context) {}
  }

  static final KvmqConfig NO_CONFIG = new KvmqConfig(key -> Optional.empty());

  @Test
  void goodHandlersPass() {
    KvmqExtension ext = new KvmqExtension();
    List<String> problems =
        ext.check(List.of(MailHandler.class, ListHandler.class, Inherited.class), null, NO_CONFIG);
    assertThat(problems).isEmpty();
    assertThat(ext.handlers())
        .extracting(HandlerSpec::queue)
        .containsExactly("mail", "generic", "inherited");
    HandlerSpec mail = ext.handlers().get(0);
    assertThat(mail.payloadType()).isEqualTo(Email.class);
    assertThat(mail.options().concurrency()).isEqualTo(3);
    assertThat(mail.options().prefetch()).isZero();
    assertThat(mail.options().handoff()).isFalse();
    assertThat(mail.options().leaseDuration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(ext.handlers().get(1).payloadType().getTypeName())
        .isEqualTo(
            "java.util.List<java.util.Map<java.lang.String, " + Plain.class.getName() + ">>");
    assertThat(ext.handlers().get(2).payloadType()).isEqualTo(Plain.class);
  }

  @Test
  void everyProblemIsReportedAtOnceWithItsCode() {
    KvmqExtension ext = new KvmqExtension();
    List<String> problems =
        ext.check(
            List.of(
                MailHandler.class,
                SecondMailHandler.class,
                RawHandler.class,
                ShapeHandler.class,
                CtorHandler.class,
                BadConcurrency.class,
                BadLease.class,
                BadRenew.class,
                HiddenHandler.class),
            null,
            NO_CONFIG);
    assertThat(problems).hasSize(8);
    assertThat(problems.get(0))
        .startsWith("KVMQ-001")
        .contains("\"mail\"", "MailHandler", "SecondMailHandler");
    assertThat(problems.get(1)).startsWith("KVMQ-002").contains("RawHandler");
    assertThat(problems.get(2)).startsWith("KVMQ-003").contains("Shape", "an interface");
    assertThat(problems.get(3))
        .startsWith("KVMQ-003")
        .contains("NoDefaultConstructor", "no public or protected");
    assertThat(problems.get(4)).startsWith("KVMQ-004").contains("concurrency");
    assertThat(problems.get(5)).startsWith("KVMQ-004").contains("\"5 seconds\"", "ISO-8601");
    assertThat(problems.get(6)).startsWith("KVMQ-004").contains("shorter than");
    assertThat(problems.get(7)).startsWith("KVMQ-003").contains("Hidden", "not public");
    assertThat(ext.handlers()).extracting(HandlerSpec::queue).containsExactly("mail");
  }

  @Test
  void configurationOverridesTheAnnotation() {
    KvmqExtension ext = new KvmqExtension();
    KvmqConfig config =
        new KvmqConfig(
            key ->
                Optional.ofNullable(
                    Map.of(
                            "kvmq.queue.mail.concurrency", "8",
                            "kvmq.queue.mail.prefetch", "16",
                            "kvmq.queue.mail.handoff", "true",
                            "kvmq.queue.mail.lease", "PT1M")
                        .get(key)));
    assertThat(ext.check(List.of(MailHandler.class), null, config)).isEmpty();
    assertThat(ext.handlers().get(0).options().concurrency()).isEqualTo(8);
    assertThat(ext.handlers().get(0).options().prefetch()).isEqualTo(16);
    assertThat(ext.handlers().get(0).options().handoff()).isTrue();
    assertThat(ext.handlers().get(0).options().leaseDuration()).isEqualTo(Duration.ofMinutes(1));
    KvmqConfig bad =
        new KvmqConfig(key -> key.endsWith("concurrency") ? Optional.of("many") : Optional.empty());
    assertThat(new KvmqExtension().check(List.of(MailHandler.class), null, bad))
        .singleElement()
        .asString()
        .contains("KVMQ-004", "not a whole number");
    KvmqConfig notABoolean =
        new KvmqConfig(key -> key.endsWith("handoff") ? Optional.of("yes") : Optional.empty());
    assertThat(new KvmqExtension().check(List.of(MailHandler.class), null, notABoolean))
        .singleElement()
        .asString()
        .contains("KVMQ-004", "kvmq.queue.mail.handoff");
    KvmqConfig negative =
        new KvmqConfig(key -> key.endsWith("prefetch") ? Optional.of("-1") : Optional.empty());
    assertThat(new KvmqExtension().check(List.of(MailHandler.class), null, negative))
        .singleElement()
        .asString()
        .contains("KVMQ-004", "kvmq.queue.mail.prefetch is -1; it must be 0 to 10000");
  }

  @Test
  void aBadSettingNamesWhereItCameFrom() {
    List<String> fromAnnotation =
        new KvmqExtension().check(List.of(BadLease.class, BadRenew.class), null, NO_CONFIG);
    assertThat(fromAnnotation.get(0))
        .contains("@QueueHandler(lease) is \"5 seconds\"")
        .doesNotContain("kvmq.queue");
    assertThat(fromAnnotation.get(1))
        .contains("@QueueHandler(renewEvery) PT2S must be shorter than @QueueHandler(lease) PT2S")
        .doesNotContain("kvmq.queue");
    KvmqConfig config =
        new KvmqConfig(
            key ->
                key.equals("kvmq.queue.bad-lease.lease") ? Optional.of("soon") : Optional.empty());
    assertThat(new KvmqExtension().check(List.of(BadLease.class), null, config))
        .singleElement()
        .asString()
        .contains("kvmq.queue.bad-lease.lease is \"soon\"")
        .doesNotContain("@QueueHandler");
  }

  @QueueHandler(
      value = "bills",
      priority = 2,
      retries = 5,
      retryDelay = "PT2S",
      retryMultiplier = 2,
      retryMaxDelay = "PT5M",
      retryJitter = 0.2)
  static class BillHandler implements JobHandler<Email> {
    @Override
    public void handle(Job<Email> job, JobContext<Email> context) {}
  }

  @QueueHandler(
      value = "bad-retries",
      retries = -1,
      retryDelay = "PT10S",
      retryMaxDelay = "PT1S",
      retryMultiplier = 0.5,
      retryJitter = 2)
  static class BadRetries implements JobHandler<Email> {
    @Override
    public void handle(Job<Email> job, JobContext<Email> context) {}
  }

  @Test
  void aHandlerDeclaresItsQueuesDefaultJobOptions() {
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(BillHandler.class, MailHandler.class), null, NO_CONFIG)).isEmpty();
    JobOptions bills = ext.settings("bills", NO_CONFIG).jobDefaults();
    assertThat(bills.priority()).isEqualTo(2);
    assertThat(bills.retryCount()).isEqualTo(5);
    assertThat(bills.retryBackoff())
        .isEqualTo(Backoff.exponential(Duration.ofSeconds(2), 2, Duration.ofMinutes(5), 0.2));
    assertThat(ext.settings("mail", NO_CONFIG).jobDefaults()).isEqualTo(JobOptions.defaults());

    KvmqConfig config =
        new KvmqConfig(
            key ->
                Optional.ofNullable(
                    Map.of(
                            "kvmq.queue.bills.retries", "1",
                            "kvmq.queue.bills.retry-multiplier", "1",
                            "kvmq.queue.bills.retry-max-delay", "PT2S",
                            "kvmq.queue.bills.retry-jitter", "0",
                            "kvmq.queue.pushed-only.retries", "3",
                            "kvmq.queue.pushed-only.retry-delay", "PT1M")
                        .get(key)));
    KvmqExtension configured = new KvmqExtension();
    assertThat(configured.check(List.of(BillHandler.class), null, config)).isEmpty();
    assertThat(configured.settings("bills", config).jobDefaults().retryCount()).isEqualTo(1);
    assertThat(configured.settings("bills", config).jobDefaults().retryBackoff())
        .isEqualTo(Backoff.fixed(Duration.ofSeconds(2)));
    // A queue this application only pushes to: configuration alone.
    JobOptions pushedOnly = configured.settings("pushed-only", config).jobDefaults();
    assertThat(pushedOnly.retryCount()).isEqualTo(3);
    assertThat(pushedOnly.retryBackoff()).isEqualTo(Backoff.fixed(Duration.ofMinutes(1)));
    assertThat(configured.handles("bills")).isTrue();
    assertThat(configured.handles("pushed-only")).isFalse();
  }

  @Test
  void badDefaultJobOptionsAreReportedTogether() {
    assertThat(new KvmqExtension().check(List.of(BadRetries.class), null, NO_CONFIG))
        .singleElement()
        .asString()
        .startsWith("KVMQ-004")
        .contains(
            "BadRetries",
            "@QueueHandler(retries) is -1",
            "@QueueHandler(retryMultiplier) is 0.5; it must be a finite number of at least 1.0",
            "@QueueHandler(retryJitter) is 2.0; it must be 0 to 1",
            "@QueueHandler(retryMaxDelay) PT1S is shorter than @QueueHandler(retryDelay) PT10S");
    KvmqConfig config =
        new KvmqConfig(
            key ->
                key.equals("kvmq.queue.mail.ignore-unknown-properties")
                    ? Optional.of("sometimes")
                    : Optional.empty());
    assertThat(new KvmqExtension().check(List.of(MailHandler.class), null, config))
        .singleElement()
        .asString()
        .contains("kvmq.queue.mail.ignore-unknown-properties is \"sometimes\"; use true or false");
  }

  @Test
  void queueKeysThatNameNoSettingAndBadSettingsOfQueuesWithoutHandlerAreReported() {
    Map<String, String> values =
        Map.of(
            "kvmq.queue.bills.retires", "3", // misspelt: would be ignored
            "kvmq.queue.mail.retries", "2", // the handler's queue: checked with the handler
            "kvmq.queue.pushed.only.retry-delay",
                "soon", // a queue without handler here, with a dot in its name
            "kvmq.queue.fine.retries", "4");
    KvmqConfig config =
        new KvmqConfig(
            key -> Optional.ofNullable(values.get(key)),
            () -> new java.util.TreeSet<>(values.keySet()));
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(MailHandler.class), null, config)).isEmpty();
    List<String> problems = ext.checkQueueKeys(config);
    assertThat(problems).hasSize(2);
    assertThat(problems.get(0))
        .startsWith("KVMQ-004: configuration key kvmq.queue.bills.retires names no setting")
        .contains(".retries");
    assertThat(problems.get(1))
        .startsWith("KVMQ-004: queue \"pushed.only\" has bad settings: ")
        .contains("kvmq.queue.pushed.only.retry-delay is \"soon\"");
  }

  @Test
  void queueHandlerIsABeanDefiningStereotypeWithTheApplicationScope() {
    // So that a handler class without a scope of its own is a bean in an archive with
    // bean-discovery-mode="annotated" (the default): it was ignored, its jobs waited forever.
    assertThat(QueueHandler.class.isAnnotationPresent(jakarta.enterprise.inject.Stereotype.class))
        .isTrue();
    assertThat(
            QueueHandler.class.isAnnotationPresent(
                jakarta.enterprise.context.ApplicationScoped.class))
        .isTrue();
  }
}
