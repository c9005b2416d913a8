package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.MissedRuns;
import dev.kvmq.Queue;
import dev.kvmq.Schedule;
import dev.kvmq.ScheduleSpec;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a node does with the declared schedules at startup, on the in-memory store: create, define
 * the same again without a write or a line above DEBUG, replace naming what changed, delete the
 * disabled, keep and warn about the undeclared.
 */
class ScheduleStartupTest {

  public record Report(String kind) {}

  final Jsonb jsonb = JsonbBuilder.create();
  final FakeClock clock = new FakeClock(Instant.parse("2026-12-01T10:00:00Z"));
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<Report> queue =
      Queue.builder(store, "reports", new JsonbCodec<Report>(jsonb, Report.class))
          .clock(clock)
          .build();

  @AfterEach
  void close() throws Exception {
    jsonb.close();
    store.close();
  }

  static Schedule<Object> nightly(String cron, String kind) {
    return Schedule.<Object>builder(
            "nightly", ScheduleSpec.cron(cron, ZoneId.of("Europe/Paris")), new Report(kind))
        .build();
  }

  static Schedule<Object> tick() {
    return Schedule.<Object>builder(
            "tick", ScheduleSpec.fixedRate(Duration.ofSeconds(1), Instant.EPOCH), new Report("t"))
        .missed(MissedRuns.runEach(10))
        .build();
  }

  List<ScheduleStartup.Line> start(List<Schedule<Object>> declared, Set<String> disabled) {
    return ScheduleStartup.define(
        queue,
        new ScheduleDeclarations.Declared("reports", Object.class, declared, disabled),
        jsonb::toJson);
  }

  static List<String> above(Level level, List<ScheduleStartup.Line> lines) {
    return lines.stream()
        .filter(l -> l.level().getSeverity() > level.getSeverity())
        .map(ScheduleStartup.Line::message)
        .toList();
  }

  @Test
  void createThenTheSameAgainSaysNothingAndChangesNothing() {
    List<ScheduleStartup.Line> first =
        start(List.of(nightly("0 2 * * *", "daily"), tick()), Set.of());
    assertThat(above(Level.DEBUG, first))
        .containsExactly(
            "kvmq: schedule \"nightly\" of queue \"reports\" created: cron \"0 2 * * *\" in"
                + " Europe/Paris, missed runOnce, overlap ALLOW, lateness PT1M",
            "kvmq: schedule \"tick\" of queue \"reports\" created: "
                + ScheduleSpec.fixedRate(Duration.ofSeconds(1), Instant.EPOCH)
                + ", missed runEach(10), overlap ALLOW, lateness PT1M");
    var before = queue.schedules().list();

    clock.advance(Duration.ofMillis(300));
    List<ScheduleStartup.Line> again =
        start(List.of(nightly("0 2 * * *", "daily"), tick()), Set.of());
    assertThat(above(Level.DEBUG, again)).as("another node, or a restart").isEmpty();
    assertThat(queue.schedules().list()).isEqualTo(before);
  }

  @Test
  void aChangedDefinitionIsReplacedAndTheLineNamesWhatChanged() {
    start(List.of(nightly("0 2 * * *", "daily")), Set.of());
    List<ScheduleStartup.Line> lines = start(List.of(nightly("30 3 * * *", "weekly")), Set.of());
    assertThat(above(Level.DEBUG, lines))
        .containsExactly(
            "kvmq: schedule \"nightly\" of queue \"reports\" replaced: spec cron \"0 2 * * *\" in"
                + " Europe/Paris -> cron \"30 3 * * *\" in Europe/Paris, state"
                + " {\"kind\":\"daily\"} -> {\"kind\":\"weekly\"}");
    assertThat(queue.schedules().get("nightly").orElseThrow().schedule().state())
        .isEqualTo(new Report("weekly"));
  }

  @Test
  void aDisabledScheduleIsDeletedAndAnUndeclaredOneIsKeptWithAWarning() {
    start(List.of(nightly("0 2 * * *", "daily"), tick()), Set.of());
    List<ScheduleStartup.Line> lines = start(List.of(), Set.of("tick"));
    assertThat(lines)
        .filteredOn(l -> l.level() == Level.INFO)
        .extracting(ScheduleStartup.Line::message)
        .containsExactly(
            "kvmq: schedule \"tick\" of queue \"reports\" deleted:"
                + " kvmq.queue.reports.schedule.tick.enabled=false");
    assertThat(lines)
        .filteredOn(l -> l.level() == Level.WARNING)
        .extracting(ScheduleStartup.Line::message)
        .singleElement()
        .asString()
        .contains(
            "\"nightly\"", "does not declare", "DELETE /kvmq/queues/reports/schedules/nightly");
    assertThat(queue.schedules().list()).extracting(e -> e.name()).containsExactly("nightly");
    assertThat(above(Level.DEBUG, start(List.of(), Set.of("tick"))))
        .as("a disabled schedule that is gone says nothing")
        .hasSize(1);
  }

  @Test
  void aStoredScheduleWhoseStateNoLongerDecodesIsNamedAndDeletedWhenDisabled() {
    // an older version of the application stored these with another state type
    Queue<String> older =
        Queue.builder(store, "reports", dev.kvmq.Codecs.utf8()).clock(clock).build();
    for (String name : List.of("gone", "off")) {
      older
          .schedules()
          .define(
              Schedule.builder(
                      name,
                      ScheduleSpec.fixedRate(Duration.ofSeconds(5), Instant.EPOCH),
                      "not json")
                  .build());
    }
    assertThat(queue.schedules().list()).as("list() can't read them").isEmpty();

    List<ScheduleStartup.Line> lines = start(List.of(), Set.of("off"));

    assertThat(lines)
        .filteredOn(l -> l.level() == Level.INFO)
        .extracting(ScheduleStartup.Line::message)
        .containsExactly(
            "kvmq: schedule \"off\" of queue \"reports\" deleted:"
                + " kvmq.queue.reports.schedule.off.enabled=false");
    assertThat(lines)
        .filteredOn(l -> l.level() == Level.WARNING)
        .extracting(ScheduleStartup.Line::message)
        .singleElement()
        .asString()
        .contains("\"gone\"", "can't decode", "DELETE /kvmq/queues/reports/schedules/gone");
    assertThat(queue.schedules().names()).containsExactly("gone");
  }
}
