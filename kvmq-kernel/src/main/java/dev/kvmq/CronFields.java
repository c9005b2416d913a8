package dev.kvmq;

import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Year;
import java.util.Objects;

/**
 * A parsed cron expression: which local date-times it matches, and the first match at or after a
 * local date-time. Clock-free and zone-free; {@link ScheduleSpec.Cron} maps the local matches to
 * instants in its zone. docs/scheduling.md is the reference for the syntax.
 *
 * <p>Each time field is a bit set (bit {@code v} set when value {@code v} matches). The day is
 * matched by a day-of-month rule and a day-of-week rule, combined as in Vixie cron: when both
 * fields are restricted (neither is {@code *} nor {@code ?}) a day matches if either rule matches
 * it.
 */
final class CronFields {

  /** The Gregorian calendar repeats every 400 years, so a search that long is complete. */
  static final int SEARCH_YEARS = 400;

  private static final String[] MONTH_NAMES = {
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"
  };
  private static final String[] DAY_NAMES = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

  /** The fields of an expression, in order, with their ranges. */
  enum Field {
    SECOND("second", 0, 59, 59, null),
    MINUTE("minute", 0, 59, 59, null),
    HOUR("hour", 0, 23, 23, null),
    DAY_OF_MONTH("day-of-month", 1, 31, 31, null),
    MONTH("month", 1, 12, 12, MONTH_NAMES),
    // 0 and 7 are Sunday; '*' and an open 'n/step' end at 6 (Saturday).
    DAY_OF_WEEK("day-of-week", 0, 7, 6, DAY_NAMES);

    final String label;
    final int min;
    final int max;
    final int openMax;
    final String[] names;

    Field(String label, int min, int max, int openMax, String[] names) {
      this.label = label;
      this.min = min;
      this.max = max;
      this.openMax = openMax;
      this.names = names;
    }
  }

  enum DomRule {
    ANY,
    SET,
    LAST,
    LAST_WEEKDAY,
    NEAREST_WEEKDAY
  }

  enum DowRule {
    ANY,
    SET,
    LAST_OF_MONTH,
    NTH
  }

  private final long seconds;
  private final long minutes;
  private final long hours;
  private final long months;
  private final DomRule domRule;
  private final long domSet;
  private final int domArg;
  private final DowRule dowRule;
  private final long dowSet;
  private final int dowDay;
  private final int dowNth;

  private CronFields(CronParser p) {
    this.seconds = p.seconds;
    this.minutes = p.minutes;
    this.hours = p.hours;
    this.months = p.months;
    this.domRule = p.domRule;
    this.domSet = p.domSet;
    this.domArg = p.domArg;
    this.dowRule = p.dowRule;
    this.dowSet = p.dowSet;
    this.dowDay = p.dowDay;
    this.dowNth = p.dowNth;
  }

  /**
   * Parses an expression.
   *
   * @throws IllegalArgumentException naming the field and the token that is wrong
   * @throws NullPointerException if {@code expression} is null
   */
  static CronFields parse(String expression) {
    Objects.requireNonNull(expression, "expression");
    CronParser p = new CronParser(expression);
    p.parse();
    return new CronFields(p);
  }

  /**
   * True when the hour field matches every hour: the expression then follows the real clock across
   * DST.
   */
  boolean everyHour() {
    return hours == (1L << 24) - 1;
  }

  /** True when {@code t} (its seconds; nanoseconds ignored) matches the expression. */
  boolean matches(LocalDateTime t) {
    return bit(months, t.getMonthValue())
        && dayMatches(t.toLocalDate())
        && bit(hours, t.getHour())
        && bit(minutes, t.getMinute())
        && bit(seconds, t.getSecond());
  }

  /**
   * The first matching local date-time at or after {@code from} (whole seconds), or null when none
   * comes within {@value #SEARCH_YEARS} years (then none ever comes) or before the end of {@link
   * LocalDate#MAX}.
   */
  LocalDateTime firstAtOrAfter(LocalDateTime from) {
    LocalDate date = from.toLocalDate();
    LocalDate last =
        date.getYear() <= Year.MAX_VALUE - SEARCH_YEARS - 1
            ? date.plusYears(SEARCH_YEARS)
            : LocalDate.MAX;
    boolean firstDay = true;
    while (!date.isAfter(last)) {
      if (!bit(months, date.getMonthValue())) {
        if (date.getYear() == Year.MAX_VALUE && date.getMonthValue() == 12) {
          return null;
        }
        date = date.withDayOfMonth(1).plusMonths(1);
        firstDay = false;
        continue;
      }
      if (dayMatches(date)) {
        LocalTime time =
            firstDay
                ? firstTimeAtOrAfter(from.getHour(), from.getMinute(), from.getSecond())
                : firstTimeAtOrAfter(0, 0, 0);
        if (time != null) {
          return date.atTime(time);
        }
      }
      if (date.equals(LocalDate.MAX)) {
        return null;
      }
      date = date.plusDays(1);
      firstDay = false;
    }
    return null;
  }

  private LocalTime firstTimeAtOrAfter(int h, int m, int s) {
    for (int hh = nextBit(hours, h); hh >= 0; hh = nextBit(hours, hh + 1)) {
      int m0 = hh == h ? m : 0;
      for (int mm = nextBit(minutes, m0); mm >= 0; mm = nextBit(minutes, mm + 1)) {
        int ss = nextBit(seconds, hh == h && mm == m ? s : 0);
        if (ss >= 0) {
          return LocalTime.of(hh, mm, ss);
        }
      }
    }
    return null;
  }

  /** Whether the date matches the day-of-month and day-of-week fields (months not checked). */
  boolean dayMatches(LocalDate d) {
    boolean domRestricted = domRule != DomRule.ANY;
    boolean dowRestricted = dowRule != DowRule.ANY;
    if (!domRestricted) {
      return !dowRestricted || dowMatches(d);
    }
    if (!dowRestricted) {
      return domMatches(d);
    }
    return domMatches(d) || dowMatches(d);
  }

  private boolean domMatches(LocalDate d) {
    int day = d.getDayOfMonth();
    int length = d.lengthOfMonth();
    switch (domRule) {
      case SET:
        return bit(domSet, day);
      case LAST:
        return day == length - domArg;
      case LAST_WEEKDAY:
        return day == weekdayNear(d, length);
      case NEAREST_WEEKDAY:
        return domArg <= length && day == weekdayNear(d, domArg);
      default:
        return true;
    }
  }

  /** The weekday nearest to day {@code n} of d's month, never leaving the month (Quartz's W). */
  private static int weekdayNear(LocalDate d, int n) {
    int length = d.lengthOfMonth();
    DayOfWeek w = d.withDayOfMonth(n).getDayOfWeek();
    if (w == DayOfWeek.SATURDAY) {
      return n == 1 ? 3 : n - 1;
    }
    if (w == DayOfWeek.SUNDAY) {
      return n == length ? n - 2 : n + 1;
    }
    return n;
  }

  private boolean dowMatches(LocalDate d) {
    int w = d.getDayOfWeek().getValue() % 7;
    switch (dowRule) {
      case SET:
        return bit(dowSet, w);
      case LAST_OF_MONTH:
        return w == dowDay && d.getDayOfMonth() + 7 > d.lengthOfMonth();
      case NTH:
        return w == dowDay && (d.getDayOfMonth() - 1) / 7 + 1 == dowNth;
      default:
        return true;
    }
  }

  private static boolean bit(long mask, int v) {
    return (mask >>> v & 1L) != 0;
  }

  private static int nextBit(long mask, int from) {
    if (from >= 64) {
      return -1;
    }
    long rest = mask & (-1L << from);
    return rest == 0 ? -1 : Long.numberOfTrailingZeros(rest);
  }
}
