package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.MissedRuns;
import dev.kvmq.Overlap;
import dev.kvmq.Schedule;
import dev.kvmq.ScheduleSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The extension's checks of {@link QueueSchedule} and {@code kvmq.queue.NAME.schedule.*}, without a
 * container: good schedules become definitions, every problem is reported at once with its code,
 * naming the handler, the schedule and the problem, and configuration wins per property.
 */
class ScheduleDeclarationsTest {

  public record Report(String kind) {}

  @QueueHandler(value = "reports", retries = 3)
  @QueueSchedule(
      name = "nightly",
      cron = "0 2 * * *",
      zone = "Europe/Paris",
      state = "{\"kind\":\"daily\"}",
      overlap = Overlap.SKIP)
  @QueueSchedule(
      name = "tick",
      every = "PT1S",
      state = "{\"kind\":\"tick\"}",
      missed = MissedRuns.Kind.RUN_EACH,
      missedLimit = 10,
      lateness = "PT5S")
  public static class ReportHandler implements JobHandler<Report> {
    @Override
    public void handle(Job<Report> job, JobContext<Report> context) {}
  }

  @QueueHandler("broken")
  @QueueSchedule(name = "bad-cron", cron = "0 25 * * *")
  @QueueSchedule(name = "bad-zone", cron = "@daily", zone = "Mars/Olympus")
  @QueueSchedule(name = "both", cron = "@daily", every = "PT1H")
  @QueueSchedule(name = "neither")
  @QueueSchedule(name = "bad-state", every = "PT1M", state = "{\"kind\":\"x\",\"extra\":1}")
  @QueueSchedule(name = "twice", every = "PT1M")
  @QueueSchedule(name = "twice", every = "PT2M")
  @QueueSchedule(name = "no-limit", every = "PT1M", missed = MissedRuns.Kind.RUN_EACH)
  @QueueSchedule(name = "zone-with-every", every = "PT1M", zone = "UTC")
  @QueueSchedule(name = "sub-second", every = "PT0.5S")
  public static class BrokenHandler implements JobHandler<Report> {
    @Override
    public void handle(Job<Report> job, JobContext<Report> context) {}
  }

  public static class Probe {
    public int failTimes;
  }

  @QueueHandler("probes")
  public static class ProbeHandler implements JobHandler<Probe> {
    @Override
    public void handle(Job<Probe> job, JobContext<Probe> context) {}
  }

  /**
   * A state in configuration that JSON-B would change (it wrapped 2147483648 to -2147483648, and
   * the schedule's jobs carried that) is a KVMQ-011 naming the property; the limit is kept.
   */
  @Test
  void aConfiguredStateJsonbWouldChangeIsAProblemNamingTheProperty() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.probes.schedule.wrapped.every", "PT1M",
                "kvmq.queue.probes.schedule.wrapped.state", "{\"failTimes\": 2147483648}",
                "kvmq.queue.probes.schedule.limit.every", "PT1M",
                "kvmq.queue.probes.schedule.limit.state", "{\"failTimes\": 2147483647}"));
    KvmqExtension ext = new KvmqExtension();
    ext.check(List.of(ProbeHandler.class), null, config);
    assertThat(ext.checkSchedules(config))
        .singleElement()
        .asString()
        .isEqualTo(
            "KVMQ-011: schedule \"wrapped\" of queue \"probes\" (handler "
                + ProbeHandler.class.getName()
                + "): kvmq.queue.probes.schedule.wrapped.state does not decode to the queue's state"
                + " type "
                + Probe.class.getTypeName()
                + ": failTimes: 2147483648 is out of range of int");
    List<Schedule<Object>> s = ext.schedules().get("probes").schedules();
    assertThat(s).extracting(Schedule::name).containsExactly("limit");
    assertThat(((Probe) s.get(0).state()).failTimes).isEqualTo(Integer.MAX_VALUE);
  }

  @QueueSchedule(name = "orphan", every = "PT1M")
  public static class NotAHandler {}

  static KvmqConfig config(Map<String, String> values) {
    return new KvmqConfig(
        key -> Optional.ofNullable(values.get(key)), () -> new TreeSet<>(values.keySet()));
  }

  static final KvmqConfig NO_CONFIG = config(Map.of());

  @Test
  void annotatedSchedulesBecomeDefinitionsWithTheQueuesJobOptions() {
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(ReportHandler.class), null, NO_CONFIG)).isEmpty();
    assertThat(ext.checkSchedules(NO_CONFIG)).isEmpty();
    List<Schedule<Object>> s = ext.schedules().get("reports").schedules();
    assertThat(s).extracting(Schedule::name).containsExactly("nightly", "tick");
    Schedule<Object> nightly = s.get(0);
    assertThat(nightly.spec()).isEqualTo(ScheduleSpec.cron("0 2 * * *", ZoneId.of("Europe/Paris")));
    assertThat(nightly.state()).isEqualTo(new Report("daily"));
    assertThat(nightly.overlap()).isEqualTo(Overlap.SKIP);
    assertThat(nightly.missed()).isEqualTo(MissedRuns.runOnce());
    assertThat(nightly.lateness()).isEqualTo(Schedule.DEFAULT_LATENESS);
    assertThat(nightly.options().retryCount()).as("the handler's retries").isEqualTo(3);
    Schedule<Object> tick = s.get(1);
    assertThat(tick.spec())
        .as("anchored at the epoch: every node computes the same slots")
        .isEqualTo(ScheduleSpec.fixedRate(Duration.ofSeconds(1), Instant.EPOCH));
    assertThat(tick.missed()).isEqualTo(MissedRuns.runEach(10));
    assertThat(tick.lateness()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void aCronWithoutZoneIsReadInUtc() {
    KvmqConfig config = config(Map.of("kvmq.queue.reports.schedule.hourly.cron", "@hourly"));
    KvmqExtension ext = new KvmqExtension();
    ext.check(List.of(ReportHandler.class), null, config);
    assertThat(ext.checkSchedules(config)).isEmpty();
    Schedule<Object> hourly = ext.schedules().get("reports").schedules().get(2);
    assertThat(hourly.name()).isEqualTo("hourly");
    assertThat(hourly.spec()).isEqualTo(ScheduleSpec.cron("@hourly", ZoneId.of("UTC")));
    assertThat(hourly.state()).as("the default state {}").isEqualTo(new Report(null));
  }

  @Test
  void everyProblemIsReportedAtOnceWithItsCodeNamingHandlerAndSchedule() {
    KvmqExtension ext = new KvmqExtension();
    assertThat(ext.check(List.of(BrokenHandler.class), null, NO_CONFIG)).isEmpty();
    List<String> problems = ext.checkSchedules(NO_CONFIG);
    assertThat(problems)
        .allSatisfy(p -> assertThat(p).contains("\"broken\"", BrokenHandler.class.getName()));
    assertThat(problems)
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-012").contains("\"twice\"", "more than once"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"bad-cron\"")
                    .contains("@QueueSchedule(cron) \"0 25 * * *\" is not a cron expression"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"bad-zone\"")
                    .contains("\"Mars/Olympus\", not a known time zone"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-010: schedule \"both\"").contains("give one of"))
        .anySatisfy(
            p -> assertThat(p).startsWith("KVMQ-010: schedule \"neither\"").contains("neither"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-011: schedule \"bad-state\"")
                    .contains(Report.class.getName(), "extra"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"no-limit\"")
                    .contains("missedLimit", "1 to 1000"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"zone-with-every\"")
                    .contains("is for cron"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"sub-second\"")
                    .contains("whole seconds"));
    assertThat(problems).hasSize(9);
    assertThat(ext.schedules().get("broken").schedules())
        .as("the good one of the twins only")
        .extracting(Schedule::name)
        .containsExactly("twice");
  }

  @Test
  void configurationWinsPerPropertyAndCanDeclareAndDisable() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.reports.schedule.nightly.cron", "30 3 * * *",
                "kvmq.queue.reports.schedule.nightly.zone", "America/New_York",
                "kvmq.queue.reports.schedule.tick.missed-limit", "20",
                "kvmq.queue.reports.schedule.tick.enabled", "false",
                "kvmq.queue.reports.schedule.weekly.every", "P7D",
                "kvmq.queue.reports.schedule.weekly.anchor", "2026-01-05T06:00:00Z",
                "kvmq.queue.reports.schedule.weekly.state", "{\"kind\":\"weekly\"}",
                "kvmq.queue.reports.schedule.weekly.overlap", "skip"));
    KvmqExtension ext = new KvmqExtension();
    ext.check(List.of(ReportHandler.class), null, config);
    assertThat(ext.checkSchedules(config)).isEmpty();
    assertThat(ext.checkQueueKeys(config)).as("schedule keys are no queue settings").isEmpty();
    ScheduleDeclarations.Declared d = ext.schedules().get("reports");
    assertThat(d.disabled()).containsExactly("tick");
    assertThat(d.schedules()).extracting(Schedule::name).containsExactly("nightly", "weekly");
    Schedule<Object> nightly = d.schedules().get(0);
    assertThat(nightly.spec())
        .isEqualTo(ScheduleSpec.cron("30 3 * * *", ZoneId.of("America/New_York")));
    assertThat(nightly.overlap()).as("not configured: the annotation's").isEqualTo(Overlap.SKIP);
    assertThat(nightly.state()).isEqualTo(new Report("daily"));
    Schedule<Object> weekly = d.schedules().get(1);
    assertThat(weekly.spec())
        .isEqualTo(
            ScheduleSpec.fixedRate(Duration.ofDays(7), Instant.parse("2026-01-05T06:00:00Z")));
    assertThat(weekly.state()).isEqualTo(new Report("weekly"));
    assertThat(weekly.overlap()).isEqualTo(Overlap.SKIP);
  }

  @Test
  void aConfigurationSpecReplacesTheAnnotationsWholeSpec() {
    // every from configuration: the annotation's cron and zone no longer apply
    KvmqConfig config = config(Map.of("kvmq.queue.reports.schedule.nightly.every", "PT1H"));
    KvmqExtension ext = new KvmqExtension();
    ext.check(List.of(ReportHandler.class), null, config);
    assertThat(ext.checkSchedules(config)).isEmpty();
    assertThat(ext.schedules().get("reports").schedules().get(0).spec())
        .isEqualTo(ScheduleSpec.fixedRate(Duration.ofHours(1), Instant.EPOCH));
  }

  @Test
  void badConfigurationIsReportedWithItsKey() {
    KvmqConfig config =
        config(
            Map.of(
                "kvmq.queue.reports.schedule.nightly.zone", "Nowhere/City",
                "kvmq.queue.reports.schedule.tick.missed", "sometimes",
                "kvmq.queue.reports.schedule.tick.crn", "@daily",
                "kvmq.queue.reports.schedule.only-state.state", "{}",
                "kvmq.queue.nobody.schedule.x.every", "PT1M"));
    KvmqExtension ext = new KvmqExtension();
    ext.check(List.of(ReportHandler.class), null, config);
    List<String> problems = ext.checkSchedules(config);
    assertThat(problems)
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"nightly\"")
                    .contains("kvmq.queue.reports.schedule.nightly.zone is \"Nowhere/City\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"tick\"")
                    .contains("kvmq.queue.reports.schedule.tick.missed is \"sometimes\""))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith(
                        "KVMQ-010: configuration key kvmq.queue.reports.schedule.tick.crn names no property"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-010: schedule \"only-state\"")
                    .contains("configuration only", ".cron or"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith("KVMQ-013: configuration key kvmq.queue.nobody.schedule.x.every")
                    .contains("\"nobody\"", "no @QueueHandler"));
    assertThat(problems).hasSize(5);
    assertThat(ext.checkQueueKeys(config)).isEmpty();
  }

  @Test
  void aScheduleOnAClassThatIsNoHandlerIsReported() {
    KvmqExtension ext = new KvmqExtension();
    ext.scheduledElsewhere.add(NotAHandler.class); // as find() records it
    assertThat(ext.checkSchedules(NO_CONFIG))
        .singleElement()
        .asString()
        .startsWith("KVMQ-013: " + NotAHandler.class.getName() + " declares schedule \"orphan\"")
        .contains("not a @QueueHandler");
  }
}
