package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** What cron syntax ScheduleSpec takes, what it rejects and how, and the fixed rate's slots. */
class ScheduleSpecSyntaxTest {

  private static final ZoneId UTC = ZoneOffset.UTC;
  private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
  private static final Instant Y2026 = Instant.parse("2026-01-01T00:00:00Z");

  /** {expression, the field the error names, the token it names}. */
  private static final String[][] BAD = {
    {"60 * * * *", "minute", "60"},
    {"* 24 * * *", "hour", "24"},
    {"* * 0 * *", "day-of-month", "0"},
    {"* * 32 * *", "day-of-month", "32"},
    {"* * * 13 *", "month", "13"},
    {"* * * 0 *", "month", "0"},
    {"* * * * 8", "day-of-week", "8"},
    {"61 * * * * *", "second", "61"},
    {"* * * FOO *", "month", "FOO"},
    {"* * * * FUNDAY", "day-of-week", "FUNDAY"},
    {"*/0 * * * *", "minute", "*/0"},
    {"*/60 * * * *", "minute", "*/60"},
    {"* */24 * * *", "hour", "*/24"},
    {"5-2 * * * *", "minute", "5-2"},
    {"* * * * FRI-MON", "day-of-week", "FRI-MON"},
    {"1,,2 * * * *", "minute", "1,,2"},
    {"1, * * * *", "minute", "1,"},
    {"a * * * *", "minute", "a"},
    {"? * * * *", "minute", "?"},
    {"* ? * * *", "hour", "?"},
    {"* * * ? *", "month", "?"},
    {"* * L,15 * *", "day-of-month", "L,15"},
    {"* * L-31 * *", "day-of-month", "L-31"},
    {"* * L-0 * *", "day-of-month", "L-0"},
    {"* * L-x * *", "day-of-month", "L-x"},
    {"* * 32W * *", "day-of-month", "32W"},
    {"* * 1-5W * *", "day-of-month", "1-5W"},
    {"* * W * *", "day-of-month", "W"},
    {"* * * * L", "day-of-week", "L"},
    {"* * * * MON#6", "day-of-week", "MON#6"},
    {"* * * * MON#0", "day-of-week", "MON#0"},
    {"* * * * 1#2,3", "day-of-week", "1#2,3"},
    {"* * * * 8L", "day-of-week", "8L"},
    {"* * * * 1-5L", "day-of-week", "1-5L"},
    {"0 0 * * FRIL,MON", "day-of-week", "FRIL,MON"},
    {"0 0 * * 5L,1", "day-of-week", "5L,1"},
    {"* * * * * 2026", "day-of-week", "2026"},
    {"/5 * * * *", "minute", "/5"},
    {"5/ * * * *", "minute", "5/"},
    {"1-2-3 * * * *", "minute", "1-2-3"},
    {"99999999999 * * * *", "minute", "99999999999"},
    {"-1 * * * *", "minute", "-1"},
    {"* * * JAN/2x *", "month", "JAN/2x"},
    {"* * * * MON-", "day-of-week", "MON-"},
    {"0 0 * * *,", "day-of-week", "*,"},
    {"1.5 * * * *", "minute", "1.5"},
  };

  @Test
  void everyBadExpressionIsRejectedNamingItsFieldAndToken() {
    for (String[] bad : BAD) {
      assertThatThrownBy(() -> ScheduleSpec.cron(bad[0], UTC))
          .as(bad[0])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("\"" + bad[0] + "\"")
          .hasMessageContaining(bad[1] + " field, \"" + bad[2] + "\"");
    }
  }

  @Test
  void aLastDayOfTheWeekInAListIsRefusedAsSuchWhereverItStands() {
    for (String field : List.of("FRIL,MON", "5L,1", "1,5L", "MON-FRIL", "*/2L")) {
      assertThatThrownBy(() -> ScheduleSpec.cron("0 0 * * " + field, UTC))
          .as(field)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("dL makes up the whole field");
    }
  }

  @Test
  void badShapesAndMacrosAreRejectedSayingWhatIsExpected() {
    assertThatThrownBy(() -> ScheduleSpec.cron("", UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty")
        .hasMessageContaining("5 fields");
    assertThatThrownBy(() -> ScheduleSpec.cron("   ", UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> ScheduleSpec.cron("* * * *", UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has 4 fields")
        .hasMessageContaining("expected 5");
    assertThatThrownBy(() -> ScheduleSpec.cron("0 0 0 * * ? 2026", UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has 7 fields");
    for (String macro : List.of("@reboot", "@every 5m", "@", "@day")) {
      assertThatThrownBy(() -> ScheduleSpec.cron(macro, UTC))
          .as(macro)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("unknown macro \"" + macro + "\"")
          .hasMessageContaining("@hourly");
    }
    assertThatThrownBy(() -> ScheduleSpec.cron(null, UTC)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> ScheduleSpec.cron("* * * * *", null))
        .isInstanceOf(NullPointerException.class);
  }

  private static List<Instant> year(String expression, ZoneId zone) {
    return ScheduleSpec.cron(expression, zone)
        .slotsBetween(Y2026, Y2026.plus(Duration.ofDays(730)), 100_000);
  }

  @Test
  void macrosAreTheirFiveFieldExpressions() {
    String[][] macros = {
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"}, {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
    };
    for (String[] m : macros) {
      List<Instant> slots = year(m[0], PARIS);
      assertThat(slots).as(m[0]).isNotEmpty().isEqualTo(year(m[1], PARIS));
      assertThat(year(m[0].toUpperCase(java.util.Locale.ROOT), PARIS)).isEqualTo(slots);
    }
    assertThat(year("@yearly", PARIS)).hasSize(2);
    assertThat(year("@monthly", PARIS)).hasSize(24);
    assertThat(year("@daily", PARIS)).hasSize(730);
    assertThat(year("@weekly", UTC))
        .allSatisfy(
            i ->
                assertThat(LocalDateTime.ofInstant(i, UTC).getDayOfWeek())
                    .isEqualTo(DayOfWeek.SUNDAY));
    assertThat(ScheduleSpec.cron(" @daily ", UTC).expression()).isEqualTo("@daily");
  }

  @Test
  void namesAnyCaseQuestionMarksSundaySevenAndSecondsMeanWhatTheySay() {
    assertThat(year("0 12 * jan-Mar mon-FRI", PARIS))
        .isNotEmpty()
        .isEqualTo(year("0 12 * 1-3 1-5", PARIS))
        .isEqualTo(year("0 12 ? JAN-MAR Mon-Fri", PARIS));
    assertThat(year("0 0 ? * *", UTC))
        .isEqualTo(year("0 0 * * *", UTC))
        .isEqualTo(year("0 0 * * ?", UTC))
        .isEqualTo(year("0 0 ? * ?", UTC));
    assertThat(year("0 0 * * 7", UTC))
        .isNotEmpty()
        .isEqualTo(year("0 0 * * 0", UTC))
        .isEqualTo(year("0 0 * * sun", UTC));
    assertThat(year("0 0 * * 5-7", UTC)).isEqualTo(year("0 0 * * 0,5,6", UTC));
    assertThat(ScheduleSpec.cron("30 0 12 * * *", UTC).nextAfter(Y2026))
        .contains(Instant.parse("2026-01-01T12:00:30Z"));
    assertThat(
            ScheduleSpec.cron("*/20 * * * * *", UTC).slotsBetween(Y2026, Y2026.plusSeconds(60), 10))
        .containsExactly(Y2026.plusSeconds(20), Y2026.plusSeconds(40), Y2026.plusSeconds(60));
    assertThat(
            ScheduleSpec.cron("10/25 * * * *", UTC)
                .slotsBetween(Y2026, Y2026.plusSeconds(3600), 10))
        .containsExactly(Y2026.plusSeconds(600), Y2026.plusSeconds(2100)); // 00:10, 00:35
  }

  @Test
  void bothDayFieldsRestrictedMeansEitherAsInUnixCron() {
    // The 13th of each month, and every Friday.
    Set<LocalDate> days = new TreeSet<>();
    for (Instant i : year("0 0 13 * FRI", UTC)) {
      days.add(LocalDate.ofInstant(i, UTC));
    }
    Set<LocalDate> expected = new TreeSet<>();
    for (LocalDate d = LocalDate.of(2026, 1, 1);
        d.isBefore(LocalDate.of(2028, 1, 1));
        d = d.plusDays(1)) {
      if (d.getDayOfMonth() == 13 || d.getDayOfWeek() == DayOfWeek.FRIDAY) {
        expected.add(d);
      }
    }
    expected.remove(LocalDate.of(2026, 1, 1)); // the window starts after 2026-01-01T00:00
    assertThat(days).isEqualTo(expected);
  }

  /** The W rule stated on its own: the weekday of the month nearest to day n, if n is in it. */
  private static LocalDate nearestWeekday(YearMonth month, int n) {
    if (n > month.lengthOfMonth()) {
      return null;
    }
    LocalDate best = null;
    for (int d = 1; d <= month.lengthOfMonth(); d++) {
      LocalDate day = month.atDay(d);
      boolean weekday = day.getDayOfWeek().getValue() <= 5;
      if (weekday && (best == null || Math.abs(d - n) < Math.abs(best.getDayOfMonth() - n))) {
        best = day;
      }
    }
    return best;
  }

  @Test
  void nearestAndLastWeekdayAreTheWeekdaysOfTheMonthNearestTheDay() {
    Instant from = Instant.parse("1999-12-31T23:59:59Z");
    Instant to = Instant.parse("2040-12-31T23:00:00Z");
    for (int n : new int[] {1, 2, 3, 15, 28, 29, 30, 31}) {
      List<LocalDate> fired = new ArrayList<>();
      for (Instant i :
          ScheduleSpec.cron("0 0 " + n + "W * *", UTC).slotsBetween(from, to, 10_000)) {
        fired.add(LocalDate.ofInstant(i, UTC));
      }
      List<LocalDate> expected = new ArrayList<>();
      for (YearMonth m = YearMonth.of(2000, 1); m.getYear() <= 2040; m = m.plusMonths(1)) {
        LocalDate d = nearestWeekday(m, n);
        if (d != null) {
          expected.add(d);
        }
      }
      assertThat(fired).as(n + "W").isEqualTo(expected);
    }
    List<LocalDate> fired = new ArrayList<>();
    for (Instant i : ScheduleSpec.cron("0 0 LW * *", UTC).slotsBetween(from, to, 10_000)) {
      fired.add(LocalDate.ofInstant(i, UTC));
    }
    List<LocalDate> expected = new ArrayList<>();
    for (YearMonth m = YearMonth.of(2000, 1); m.getYear() <= 2040; m = m.plusMonths(1)) {
      LocalDate d = m.atEndOfMonth();
      while (d.getDayOfWeek().getValue() > 5) {
        d = d.minusDays(1);
      }
      expected.add(d);
    }
    assertThat(fired).isEqualTo(expected);
  }

  @Test
  void sparseAndImpossibleDaysAnswerFastWithoutScanningMinutes() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(20),
        () -> {
          for (int i = 0; i < 50; i++) {
            Instant t = Y2026.plus(Duration.ofDays(97L * i));
            assertThat(ScheduleSpec.cron("0 0 30 2 *", PARIS).nextAfter(t)).isEmpty();
            assertThat(ScheduleSpec.cron("* * 31 2,4,6,9,11 *", PARIS).nextAfter(t)).isEmpty();
            assertThat(ScheduleSpec.cron("* * * * * *", PARIS).nextAfter(t))
                .contains(t.plusSeconds(1));
          }
          // 2100 is no leap year: from March 2096 the next 29 February is in 2104.
          assertThat(
                  ScheduleSpec.cron("0 0 29 2 *", UTC)
                      .nextAfter(Instant.parse("2096-03-01T00:00:00Z")))
              .contains(Instant.parse("2104-02-29T00:00:00Z"));
          // A fifth Monday in February: only in a leap year that starts the month on a Monday.
          Instant fifth = ScheduleSpec.cron("0 0 * 2 MON#5", UTC).nextAfter(Y2026).orElseThrow();
          assertThat(fifth).isEqualTo(Instant.parse("2044-02-29T00:00:00Z"));
        });
  }

  @Test
  void theEndsOfTimeGiveEmptyNotAnError() {
    ScheduleSpec cron = ScheduleSpec.cron("0 0 1 1 *", UTC);
    assertThat(cron.nextAfter(Instant.MAX)).isEmpty();
    assertThat(cron.nextAfter(Instant.MIN)).isPresent();
    assertThat(
            cron.nextAfter(LocalDateTime.MAX.toInstant(ZoneOffset.UTC).minus(Duration.ofDays(400))))
        .isPresent();
    ScheduleSpec rate = ScheduleSpec.fixedRate(Duration.ofDays(1), Instant.EPOCH);
    assertThat(rate.nextAfter(Instant.MAX.minusSeconds(10))).isEmpty();
    assertThat(rate.nextAfter(Instant.MIN)).contains(Instant.EPOCH);
  }

  @Test
  void fixedRateSlotsAreTheAnchorAndEveryMultipleAfterIt() {
    Instant anchor = Instant.parse("2026-05-01T10:00:00Z");
    ScheduleSpec rate = ScheduleSpec.fixedRate(Duration.ofMinutes(5), anchor);
    assertThat(rate.nextAfter(anchor.minusSeconds(3600))).contains(anchor);
    assertThat(rate.nextAfter(anchor.minusNanos(1))).contains(anchor);
    assertThat(rate.nextAfter(anchor)).contains(anchor.plusSeconds(300));
    assertThat(rate.nextAfter(anchor.plusSeconds(299))).contains(anchor.plusSeconds(300));
    assertThat(rate.nextAfter(anchor.plusSeconds(300))).contains(anchor.plusSeconds(600));
    assertThat(rate.nextAfter(anchor.plusSeconds(300).plusNanos(1)))
        .contains(anchor.plusSeconds(600));
    assertThat(
            ScheduleSpec.fixedRate(Duration.ofMillis(1500), anchor)
                .slotsBetween(anchor, anchor.plusSeconds(3), 10))
        .containsExactly(anchor.plusMillis(1500), anchor.plusMillis(3000));
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(Duration.ZERO, anchor))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("every must be positive");
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(Duration.ofSeconds(-1), anchor))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(Duration.ofSeconds(60), anchor.plusNanos(500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("anchor must be at a whole millisecond");
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(Duration.ofNanos(1_500_000), anchor))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("every must be whole milliseconds");
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(null, anchor))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> ScheduleSpec.fixedRate(Duration.ofSeconds(1), null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> rate.nextAfter(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void slotsBetweenTakesTheFirstSlotsUpToTheLimit() {
    ScheduleSpec hourly = ScheduleSpec.cron("@hourly", UTC);
    Instant end = Y2026.plus(Duration.ofHours(10));
    assertThat(hourly.slotsBetween(Y2026, end, 100)).hasSize(10).endsWith(end); // (after, upTo]
    assertThat(hourly.slotsBetween(Y2026, end, 3))
        .containsExactly(
            Y2026.plusSeconds(3600), Y2026.plusSeconds(7200), Y2026.plusSeconds(10800));
    assertThat(hourly.slotsBetween(Y2026, end, 0)).isEmpty();
    assertThat(hourly.slotsBetween(end, Y2026, 10)).isEmpty();
    assertThat(ScheduleSpec.cron("0 0 30 2 *", UTC).slotsBetween(Y2026, Instant.MAX, 10)).isEmpty();
    assertThatThrownBy(() -> hourly.slotsBetween(Y2026, end, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThatThrownBy(() -> hourly.slotsBetween(null, end, 1))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> hourly.slotsBetween(Y2026, null, 1))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> hourly.slotsBetween(Y2026, end, 3).add(end))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void specsAreEqualWhenDefinedTheSameWay() {
    assertThat(ScheduleSpec.cron("0 2 * * *", PARIS))
        .isEqualTo(ScheduleSpec.cron(" 0 2 * * * ", PARIS))
        .hasSameHashCodeAs(ScheduleSpec.cron("0 2 * * *", PARIS))
        .isNotEqualTo(ScheduleSpec.cron("0 2 * * *", UTC))
        .isNotEqualTo(ScheduleSpec.cron("0 2 * * ?", PARIS))
        .hasToString("cron \"0 2 * * *\" in Europe/Paris");
    ScheduleSpec.Cron c = ScheduleSpec.cron("0 2 * * *", PARIS);
    assertThat(c.expression()).isEqualTo("0 2 * * *");
    assertThat(c.zone()).isEqualTo(PARIS);
    assertThat(ScheduleSpec.fixedRate(Duration.ofMinutes(1), Y2026))
        .isEqualTo(ScheduleSpec.fixedRate(Duration.ofSeconds(60), Y2026))
        .isNotEqualTo(ScheduleSpec.fixedRate(Duration.ofMinutes(1), Y2026.plusSeconds(1)));
  }
}
