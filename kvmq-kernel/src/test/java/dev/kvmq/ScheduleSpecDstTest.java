package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The DST rules of docs/scheduling.md, at the instants the page names. */
class ScheduleSpecDstTest {

  private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId LORD_HOWE = ZoneId.of("Australia/Lord_Howe");

  /**
   * A year of firing as the schedule transitions will do it: the clock steps a minute at a time;
   * when it reaches the due slot the slot fires and the next due slot is the first after it.
   */
  private static List<Instant> fireOverAYear(ScheduleSpec spec, ZoneId zone, int year) {
    Instant start = LocalDate.of(year, 1, 1).atStartOfDay(zone).toInstant();
    Instant end = LocalDate.of(year + 1, 1, 1).atStartOfDay(zone).toInstant();
    List<Instant> fired = new ArrayList<>();
    Optional<Instant> due = spec.nextAfter(start.minusNanos(1));
    for (Instant now = start; now.isBefore(end); now = now.plus(Duration.ofMinutes(1))) {
      while (due.isPresent() && !due.get().isAfter(now)) {
        fired.add(due.get());
        due = spec.nextAfter(due.get());
      }
    }
    return fired;
  }

  @Test
  void aDailyTwoOClockScheduleInParisFiresOncePerDayForAYearAtTheDocumentedInstants() {
    ScheduleSpec daily = ScheduleSpec.cron("0 2 * * *", PARIS);
    for (int year : new int[] {2026, 2028}) {
      List<Instant> fired = fireOverAYear(daily, PARIS, year);
      int days = LocalDate.of(year, 1, 1).lengthOfYear();
      assertThat(fired).hasSize(days);
      TreeMap<LocalDate, LocalTime> byDay = new TreeMap<>();
      for (Instant i : fired) {
        LocalDateTime local = LocalDateTime.ofInstant(i, PARIS);
        assertThat(byDay.put(local.toLocalDate(), local.toLocalTime()))
            .as("twice on " + local)
            .isNull();
      }
      assertThat(byDay.firstKey()).isEqualTo(LocalDate.of(year, 1, 1));
      assertThat(byDay.lastKey()).isEqualTo(LocalDate.of(year, 12, 31));
      ZoneOffsetTransition spring = PARIS.getRules().nextTransition(fired.get(0));
      ZoneOffsetTransition fall = PARIS.getRules().nextTransition(spring.getInstant());
      for (var e : byDay.entrySet()) {
        // 02:00 does not exist on the spring-forward day: the slot fires when the gap ends, 03:00.
        LocalTime expected =
            e.getKey().equals(spring.getDateTimeBefore().toLocalDate())
                ? LocalTime.of(3, 0)
                : LocalTime.of(2, 0);
        assertThat(e.getValue()).as(e.getKey().toString()).isEqualTo(expected);
      }
      // On the fall-back day 02:00 happens twice: it fires at the first, 02:00 CEST.
      LocalDate fallDay = fall.getDateTimeBefore().toLocalDate();
      assertThat(fired)
          .contains(fallDay.atTime(2, 0).atOffset(fall.getOffsetBefore()).toInstant())
          .doesNotContain(fallDay.atTime(2, 0).atOffset(fall.getOffsetAfter()).toInstant());
    }
    // The instants docs/scheduling.md names for 2026.
    assertThat(daily.nextAfter(Instant.parse("2026-03-28T12:00:00Z")))
        .contains(Instant.parse("2026-03-29T01:00:00Z")); // 03:00 CEST
    assertThat(daily.nextAfter(Instant.parse("2026-10-24T12:00:00Z")))
        .contains(Instant.parse("2026-10-25T00:00:00Z")); // 02:00 CEST
    assertThat(daily.nextAfter(Instant.parse("2026-10-25T00:00:00Z")))
        .contains(Instant.parse("2026-10-26T01:00:00Z")); // 02:00 CET the next day
  }

  @Test
  void aTwoThirtySlotFiresOnceOnBothDstDays() {
    ScheduleSpec paris = ScheduleSpec.cron("30 2 * * *", PARIS);
    // Spring forward, 2026-03-29 02:00 CET -> 03:00 CEST: at the gap's end, 03:00 CEST.
    assertThat(
            paris.slotsBetween(
                Instant.parse("2026-03-28T12:00:00Z"), Instant.parse("2026-03-29T12:00:00Z"), 10))
        .containsExactly(Instant.parse("2026-03-29T01:00:00Z"));
    // Fall back, 2026-10-25 03:00 CEST -> 02:00 CET: at the first 02:30, CEST.
    assertThat(
            paris.slotsBetween(
                Instant.parse("2026-10-24T12:00:00Z"), Instant.parse("2026-10-25T12:00:00Z"), 10))
        .containsExactly(Instant.parse("2026-10-25T00:30:00Z"));

    ScheduleSpec newYork = ScheduleSpec.cron("30 2 * * *", NEW_YORK);
    // 2026-03-08 02:00 EST -> 03:00 EDT: 03:00 EDT.
    assertThat(
            newYork.slotsBetween(
                Instant.parse("2026-03-07T12:00:00Z"), Instant.parse("2026-03-08T12:00:00Z"), 10))
        .containsExactly(Instant.parse("2026-03-08T07:00:00Z"));
    ScheduleSpec newYorkOneThirty = ScheduleSpec.cron("30 1 * * *", NEW_YORK);
    // 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens twice, fires at 01:30 EDT.
    assertThat(
            newYorkOneThirty.slotsBetween(
                Instant.parse("2026-10-31T12:00:00Z"), Instant.parse("2026-11-01T12:00:00Z"), 10))
        .containsExactly(Instant.parse("2026-11-01T05:30:00Z"));

    // Lord Howe moves by half an hour: 2026-10-04 02:00 -> 02:30 (+10:30 -> +11).
    ScheduleSpec lordHowe = ScheduleSpec.cron("15 2 * * *", LORD_HOWE);
    assertThat(
            lordHowe.slotsBetween(
                Instant.parse("2026-10-03T00:00:00Z"), Instant.parse("2026-10-04T00:00:00Z"), 10))
        .containsExactly(ZonedDateTime.of(2026, 10, 4, 2, 30, 0, 0, LORD_HOWE).toInstant());
    // 2026-04-05 02:00 -> 01:30 (+11 -> +10:30): 01:45 fires once, at +11.
    ScheduleSpec lordHoweFall = ScheduleSpec.cron("45 1 * * *", LORD_HOWE);
    assertThat(
            lordHoweFall.slotsBetween(
                Instant.parse("2026-04-04T00:00:00Z"), Instant.parse("2026-04-05T00:00:00Z"), 10))
        .containsExactly(Instant.parse("2026-04-04T14:45:00Z"));
  }

  @Test
  void severalSlotsInOneGapFireOnceWhenItEnds() {
    ScheduleSpec spec = ScheduleSpec.cron("*/10 2 * * *", PARIS);
    List<Instant> slots =
        spec.slotsBetween(
            Instant.parse("2026-03-28T23:00:00Z"), Instant.parse("2026-03-30T23:00:00Z"), 100);
    // 29 March: 02:00..02:50 do not exist, one slot at 03:00 CEST; 30 March: six slots.
    assertThat(slots).hasSize(7);
    assertThat(slots.get(0)).isEqualTo(Instant.parse("2026-03-29T01:00:00Z"));
    assertThat(slots.get(1)).isEqualTo(Instant.parse("2026-03-30T00:00:00Z"));

    // Samoa skipped 30 December 2011: that day's 02:00 fires when the skipped day ends.
    ZoneId apia = ZoneId.of("Pacific/Apia");
    assertThat(
            ScheduleSpec.cron("0 2 * * *", apia)
                .slotsBetween(
                    Instant.parse("2011-12-29T14:00:00Z"),
                    Instant.parse("2011-12-31T11:00:00Z"),
                    10))
        .containsExactly(
            ZonedDateTime.of(2011, 12, 31, 0, 0, 0, 0, apia).toInstant(), // the 30th's slot
            ZonedDateTime.of(2011, 12, 31, 2, 0, 0, 0, apia).toInstant());
  }

  @Test
  void everyHourAndEveryMinuteSpecsFollowTheRealClockAcrossBothTransitions() {
    for (String day : new String[] {"2026-03-28T20:00:00Z", "2026-10-24T20:00:00Z"}) {
      Instant from = Instant.parse(day);
      List<Instant> hourly =
          ScheduleSpec.cron("0 * * * *", PARIS)
              .slotsBetween(from, from.plus(Duration.ofHours(12)), 100);
      assertThat(hourly).hasSize(12);
      List<Instant> minutely =
          ScheduleSpec.cron("* * * * *", PARIS)
              .slotsBetween(from, from.plus(Duration.ofHours(12)), 10_000);
      assertThat(minutely).hasSize(12 * 60);
      List<Instant> everySecond =
          ScheduleSpec.cron("* * * * * *", LORD_HOWE)
              .slotsBetween(from, from.plus(Duration.ofHours(1)), 10_000);
      assertThat(everySecond).hasSize(3600);
      for (List<Instant> slots : List.of(hourly, minutely)) {
        for (int i = 1; i < slots.size(); i++) {
          assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
              .isEqualTo(slots == hourly ? Duration.ofHours(1) : Duration.ofMinutes(1));
        }
      }
    }
    // On the fall-back night 0 * * * * fires at both 02:00 (CEST, then CET).
    assertThat(
            ScheduleSpec.cron("0 * * * *", PARIS)
                .slotsBetween(
                    Instant.parse("2026-10-24T23:30:00Z"),
                    Instant.parse("2026-10-25T01:30:00Z"),
                    10))
        .containsExactly(
            Instant.parse("2026-10-25T00:00:00Z"), Instant.parse("2026-10-25T01:00:00Z"));
    // On the spring-forward night 30 * * * * skips the 02:30 that does not exist.
    assertThat(
            ScheduleSpec.cron("30 * * * *", PARIS)
                .slotsBetween(
                    Instant.parse("2026-03-29T00:00:00Z"),
                    Instant.parse("2026-03-29T02:00:00Z"),
                    10))
        .containsExactly(
            Instant.parse("2026-03-29T00:30:00Z"), Instant.parse("2026-03-29T01:30:00Z"));
    // Lord Howe's half-hour gap: */15 keeps a real quarter of an hour across it.
    List<Instant> quarters =
        ScheduleSpec.cron("*/15 * * * *", LORD_HOWE)
            .slotsBetween(
                Instant.parse("2026-10-03T15:00:00Z"), Instant.parse("2026-10-03T16:00:00Z"), 10);
    assertThat(quarters)
        .containsExactly(
            Instant.parse("2026-10-03T15:15:00Z"),
            Instant.parse("2026-10-03T15:30:00Z"),
            Instant.parse("2026-10-03T15:45:00Z"),
            Instant.parse("2026-10-03T16:00:00Z"));
  }

  @Test
  void fixedRatesAreZoneFree() {
    Instant anchor = Instant.parse("2026-01-01T01:00:00Z"); // 02:00 in Paris, winter time
    ScheduleSpec daily = ScheduleSpec.fixedRate(Duration.ofDays(1), anchor);
    List<Instant> year =
        daily.slotsBetween(anchor.minusNanos(1), anchor.plus(Duration.ofDays(364)), 1000);
    assertThat(year).hasSize(365);
    for (int i = 1; i < year.size(); i++) {
      assertThat(Duration.between(year.get(i - 1), year.get(i))).isEqualTo(Duration.ofDays(1));
    }
    // In summer the same slot is 03:00 in Paris: the rate counts real time.
    assertThat(
            LocalDateTime.ofInstant(
                    daily.nextAfter(Instant.parse("2026-07-01T00:00:00Z")).orElseThrow(), PARIS)
                .toLocalTime())
        .isEqualTo(LocalTime.of(3, 0));
  }
}
