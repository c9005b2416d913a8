package dev.kvmq;

import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Year;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed cron expression: which local date-times it matches, and the first match at or
 * after a local date-time. Clock-free and zone-free; {@link ScheduleSpec.Cron} maps the
 * local matches to instants in its zone. docs/scheduling.md is the reference for the syntax.
 *
 * <p>Each time field is a bit set (bit {@code v} set when value {@code v} matches). The day
 * is matched by a day-of-month rule and a day-of-week rule, combined as in Vixie cron: when
 * both fields are restricted (neither is {@code *} nor {@code ?}) a day matches if either
 * rule matches it.
 */
final class CronFields {

  /** The Gregorian calendar repeats every 400 years, so a search that long is complete. */
  static final int SEARCH_YEARS = 400;

  private static final String[] MONTH_NAMES = {
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"
  };
  private static final String[] DAY_NAMES = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

  private static final Map<String, String> MACROS = Map.of(
      "@yearly", "0 0 1 1 *",
      "@annually", "0 0 1 1 *",
      "@monthly", "0 0 1 * *",
      "@weekly", "0 0 * * 0",
      "@daily", "0 0 * * *",
      "@midnight", "0 0 * * *",
      "@hourly", "0 * * * *");

  private static final String MACRO_LIST =
      "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly";

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

  private enum DomRule { ANY, SET, LAST, LAST_WEEKDAY, NEAREST_WEEKDAY }

  private enum DowRule { ANY, SET, LAST_OF_MONTH, NTH }

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

  private CronFields(Parser p) {
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
    Parser p = new Parser(expression);
    p.parse();
    return new CronFields(p);
  }

  /** True when the hour field matches every hour: the expression then follows the real clock across DST. */
  boolean everyHour() {
    return hours == (1L << 24) - 1;
  }

  /** True when {@code t} (its seconds; nanoseconds ignored) matches the expression. */
  boolean matches(LocalDateTime t) {
    return bit(months, t.getMonthValue()) && dayMatches(t.toLocalDate()) && bit(hours, t.getHour())
        && bit(minutes, t.getMinute()) && bit(seconds, t.getSecond());
  }

  /**
   * The first matching local date-time at or after {@code from} (whole seconds), or null when
   * none comes within {@value #SEARCH_YEARS} years (then none ever comes) or before the end of
   * {@link LocalDate#MAX}.
   */
  LocalDateTime firstAtOrAfter(LocalDateTime from) {
    LocalDate date = from.toLocalDate();
    LocalDate last = date.getYear() <= Year.MAX_VALUE - SEARCH_YEARS - 1
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
        LocalTime time = firstDay
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

  /** Parses one expression into the fields of a CronFields; every error names field and token. */
  private static final class Parser {
    private final String expression;
    long seconds;
    long minutes;
    long hours;
    long months;
    DomRule domRule = DomRule.SET;
    long domSet;
    int domArg;
    DowRule dowRule = DowRule.SET;
    long dowSet;
    int dowDay;
    int dowNth;

    Parser(String expression) {
      this.expression = expression;
    }

    void parse() {
      String text = expression.strip();
      if (text.isEmpty()) {
        throw new IllegalArgumentException("cron expression is empty: expected 5 fields "
            + "(minute hour day-of-month month day-of-week), 6 with a leading second field, "
            + "or one of " + MACRO_LIST);
      }
      if (text.startsWith("@")) {
        String expanded = MACROS.get(text.toLowerCase(Locale.ROOT));
        if (expanded == null) {
          throw new IllegalArgumentException("cron expression \"" + expression
              + "\": unknown macro \"" + text + "\" (supported: " + MACRO_LIST + ")");
        }
        text = expanded;
      }
      String[] f = text.split("\\s+");
      if (f.length != 5 && f.length != 6) {
        throw new IllegalArgumentException("cron expression \"" + expression + "\" has "
            + f.length + " field" + (f.length == 1 ? "" : "s") + ": expected 5 (minute hour "
            + "day-of-month month day-of-week) or 6 (second minute hour day-of-month month "
            + "day-of-week)");
      }
      int i = 0;
      seconds = f.length == 6 ? set(Field.SECOND, f[i++]) : 1L;
      minutes = set(Field.MINUTE, f[i++]);
      hours = set(Field.HOUR, f[i++]);
      dayOfMonth(f[i++]);
      months = set(Field.MONTH, f[i++]);
      dayOfWeek(f[i]);
    }

    private void dayOfMonth(String text) {
      String u = text.toUpperCase(Locale.ROOT);
      if (u.equals("*") || u.equals("?")) {
        domRule = DomRule.ANY;
      } else if (u.equals("L")) {
        domRule = DomRule.LAST;
        domArg = 0;
      } else if (u.startsWith("L-")) {
        domRule = DomRule.LAST;
        domArg = number(Field.DAY_OF_MONTH, text, text.substring(2), "days before the last");
        if (domArg < 1 || domArg > 30) {
          throw bad(Field.DAY_OF_MONTH, text, "L-n needs n between 1 and 30");
        }
      } else if (u.equals("LW")) {
        domRule = DomRule.LAST_WEEKDAY;
      } else if (u.endsWith("W") && u.length() > 1 && u.indexOf(',') < 0
          && u.indexOf('-') < 0 && u.indexOf('/') < 0) {
        domRule = DomRule.NEAREST_WEEKDAY;
        domArg = value(Field.DAY_OF_MONTH, text, text.substring(0, text.length() - 1));
      } else if (u.indexOf('L') >= 0 || u.indexOf('W') >= 0) {
        throw bad(Field.DAY_OF_MONTH, text, "L and W make up the whole field: L, L-n, LW or nW"
            + " (no lists, ranges or steps with them)");
      } else {
        domSet = set(Field.DAY_OF_MONTH, text);
      }
    }

    private void dayOfWeek(String text) {
      String u = text.toUpperCase(Locale.ROOT);
      if (u.equals("*") || u.equals("?")) {
        dowRule = DowRule.ANY;
      } else if (u.equals("L")) {
        throw bad(Field.DAY_OF_WEEK, text, "L alone is not supported: write SAT for Saturday,"
            + " or dL (such as FRIL or 5L) for the month's last given day of the week");
      } else if (u.indexOf('#') >= 0) {
        int hash = u.indexOf('#');
        if (u.indexOf(',') >= 0 || u.indexOf('-') >= 0 || u.indexOf('/') >= 0) {
          throw bad(Field.DAY_OF_WEEK, text, "d#n makes up the whole field (no lists, ranges"
              + " or steps with it)");
        }
        dowRule = DowRule.NTH;
        dowDay = value(Field.DAY_OF_WEEK, text, text.substring(0, hash)) % 7;
        dowNth = number(Field.DAY_OF_WEEK, text, text.substring(hash + 1), "week of the month");
        if (dowNth < 1 || dowNth > 5) {
          throw bad(Field.DAY_OF_WEEK, text, "d#n needs n between 1 and 5");
        }
      } else if (u.endsWith("L")) {
        if (u.indexOf(',') >= 0 || u.indexOf('-') >= 0 || u.indexOf('/') >= 0) {
          throw bad(Field.DAY_OF_WEEK, text, "dL makes up the whole field (no lists, ranges"
              + " or steps with it)");
        }
        dowRule = DowRule.LAST_OF_MONTH;
        dowDay = value(Field.DAY_OF_WEEK, text, text.substring(0, text.length() - 1)) % 7;
      } else {
        long s = set(Field.DAY_OF_WEEK, text);
        dowSet = (s & 0x7FL) | (s >>> 7 & 1L); // 7 is Sunday, like 0
      }
    }

    /** A list of single values, ranges and steps, as a bit set. */
    private long set(Field field, String text) {
      if (text.equals("?")) {
        throw bad(field, text, "? (no specific value) is allowed in day-of-month and "
            + "day-of-week only");
      }
      long mask = 0;
      for (String item : text.split(",", -1)) {
        if (item.isEmpty()) {
          throw bad(field, text, "empty element in the list");
        }
        String base = item;
        int step = 1;
        boolean stepped = false;
        int slash = item.indexOf('/');
        if (slash >= 0) {
          base = item.substring(0, slash);
          step = number(field, item, item.substring(slash + 1), "step");
          if (step < 1 || step > field.max - field.min) {
            throw bad(field, item, "the step must be between 1 and " + (field.max - field.min));
          }
          if (base.isEmpty()) {
            throw bad(field, item, "a step needs a start: */n, a/n or a-b/n");
          }
          stepped = true;
        }
        int lo;
        int hi;
        if (base.equals("*")) {
          lo = field.min;
          hi = field.openMax;
        } else {
          int dash = base.indexOf('-');
          if (dash >= 0) {
            lo = value(field, item, base.substring(0, dash));
            hi = value(field, item, base.substring(dash + 1));
            if (lo > hi) {
              throw bad(field, item, "the range runs backwards (write it as a list instead)");
            }
          } else {
            lo = value(field, item, base);
            hi = stepped ? Math.max(lo, field.openMax) : lo;
          }
        }
        for (int v = lo; v <= hi; v += step) {
          mask |= 1L << v;
        }
      }
      return mask;
    }

    /** One value of a field: a number in its range, or a name where the field has names. */
    private int value(Field field, String item, String token) {
      if (token.isEmpty()) {
        throw bad(field, item, "a value is missing");
      }
      if (field.names != null && Character.isLetter(token.charAt(0))) {
        String u = token.toUpperCase(Locale.ROOT);
        for (int i = 0; i < field.names.length; i++) {
          if (field.names[i].equals(u)) {
            return field == Field.MONTH ? i + 1 : i;
          }
        }
        throw bad(field, item, "unknown name \"" + token + "\" (names: "
            + String.join(" ", field.names) + ", in any case)");
      }
      int v = number(field, item, token, "value");
      if (v < field.min || v > field.max) {
        throw bad(field, item, v + " is out of range " + field.min + "-" + field.max);
      }
      return v;
    }

    private int number(Field field, String item, String token, String what) {
      if (token.isEmpty()) {
        throw bad(field, item, "the " + what + " is missing");
      }
      for (int i = 0; i < token.length(); i++) {
        char c = token.charAt(i);
        if (c < '0' || c > '9') {
          throw bad(field, item, "\"" + token + "\" is not a number"
              + (field.names == null ? "" : " nor a name"));
        }
      }
      if (token.length() > 4) {
        throw bad(field, item, "the " + what + " " + token + " is too large");
      }
      return Integer.parseInt(token);
    }

    private IllegalArgumentException bad(Field field, String token, String why) {
      return new IllegalArgumentException("cron expression \"" + expression + "\": "
          + field.label + " field, \"" + token + "\": " + why);
    }
  }
}
