package dev.kvmq;

import java.util.Locale;
import java.util.Map;

/**
 * Parses one cron expression into the fields of a {@link CronFields}; every error names the field
 * and the token. Not thread-safe: one parser per expression, used once.
 */
final class CronParser {

  private static final Map<String, String> MACROS =
      Map.of(
          "@yearly", "0 0 1 1 *",
          "@annually", "0 0 1 1 *",
          "@monthly", "0 0 1 * *",
          "@weekly", "0 0 * * 0",
          "@daily", "0 0 * * *",
          "@midnight", "0 0 * * *",
          "@hourly", "0 * * * *");

  private static final String MACRO_LIST =
      "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly";

  private final String expression;
  long seconds;
  long minutes;
  long hours;
  long months;
  CronFields.DomRule domRule = CronFields.DomRule.SET;
  long domSet;
  int domArg;
  CronFields.DowRule dowRule = CronFields.DowRule.SET;
  long dowSet;
  int dowDay;
  int dowNth;

  CronParser(String expression) {
    this.expression = expression;
  }

  void parse() {
    String text = expression.strip();
    if (text.isEmpty()) {
      throw new IllegalArgumentException(
          "cron expression is empty: expected 5 fields "
              + "(minute hour day-of-month month day-of-week), 6 with a leading second field, "
              + "or one of "
              + MACRO_LIST);
    }
    if (text.startsWith("@")) {
      String expanded = MACROS.get(text.toLowerCase(Locale.ROOT));
      if (expanded == null) {
        throw new IllegalArgumentException(
            "cron expression \""
                + expression
                + "\": unknown macro \""
                + text
                + "\" (supported: "
                + MACRO_LIST
                + ")");
      }
      text = expanded;
    }
    String[] f = text.split("\\s+");
    if (f.length != 5 && f.length != 6) {
      throw new IllegalArgumentException(
          "cron expression \""
              + expression
              + "\" has "
              + f.length
              + " field"
              + (f.length == 1 ? "" : "s")
              + ": expected 5 (minute hour "
              + "day-of-month month day-of-week) or 6 (second minute hour day-of-month month "
              + "day-of-week)");
    }
    int i = 0;
    seconds = f.length == 6 ? set(CronFields.Field.SECOND, f[i++]) : 1L;
    minutes = set(CronFields.Field.MINUTE, f[i++]);
    hours = set(CronFields.Field.HOUR, f[i++]);
    dayOfMonth(f[i++]);
    months = set(CronFields.Field.MONTH, f[i++]);
    dayOfWeek(f[i]);
  }

  private void dayOfMonth(String text) {
    String u = text.toUpperCase(Locale.ROOT);
    if (u.equals("*") || u.equals("?")) {
      domRule = CronFields.DomRule.ANY;
    } else if (u.equals("L")) {
      domRule = CronFields.DomRule.LAST;
      domArg = 0;
    } else if (u.startsWith("L-")) {
      domRule = CronFields.DomRule.LAST;
      domArg =
          number(CronFields.Field.DAY_OF_MONTH, text, text.substring(2), "days before the last");
      if (domArg < 1 || domArg > 30) {
        throw bad(CronFields.Field.DAY_OF_MONTH, text, "L-n needs n between 1 and 30");
      }
    } else if (u.equals("LW")) {
      domRule = CronFields.DomRule.LAST_WEEKDAY;
    } else if (u.endsWith("W")
        && u.length() > 1
        && u.indexOf(',') < 0
        && u.indexOf('-') < 0
        && u.indexOf('/') < 0) {
      domRule = CronFields.DomRule.NEAREST_WEEKDAY;
      domArg = value(CronFields.Field.DAY_OF_MONTH, text, text.substring(0, text.length() - 1));
    } else if (u.indexOf('L') >= 0 || u.indexOf('W') >= 0) {
      throw bad(
          CronFields.Field.DAY_OF_MONTH,
          text,
          "L and W make up the whole field: L, L-n, LW or nW"
              + " (no lists, ranges or steps with them)");
    } else {
      domSet = set(CronFields.Field.DAY_OF_MONTH, text);
    }
  }

  private void dayOfWeek(String text) {
    String u = text.toUpperCase(Locale.ROOT);
    if (u.equals("*") || u.equals("?")) {
      dowRule = CronFields.DowRule.ANY;
    } else if (u.equals("L")) {
      throw bad(
          CronFields.Field.DAY_OF_WEEK,
          text,
          "L alone is not supported: write SAT for Saturday,"
              + " or dL (such as FRIL or 5L) for the month's last given day of the week");
    } else if (u.indexOf('#') >= 0) {
      int hash = u.indexOf('#');
      if (u.indexOf(',') >= 0 || u.indexOf('-') >= 0 || u.indexOf('/') >= 0) {
        throw bad(
            CronFields.Field.DAY_OF_WEEK,
            text,
            "d#n makes up the whole field (no lists, ranges" + " or steps with it)");
      }
      dowRule = CronFields.DowRule.NTH;
      dowDay = value(CronFields.Field.DAY_OF_WEEK, text, text.substring(0, hash)) % 7;
      dowNth =
          number(CronFields.Field.DAY_OF_WEEK, text, text.substring(hash + 1), "week of the month");
      if (dowNth < 1 || dowNth > 5) {
        throw bad(CronFields.Field.DAY_OF_WEEK, text, "d#n needs n between 1 and 5");
      }
    } else if (u.indexOf('L') >= 0) { // no day's name has an L: this is the dL form
      if (u.indexOf(',') >= 0 || u.indexOf('-') >= 0 || u.indexOf('/') >= 0) {
        throw bad(
            CronFields.Field.DAY_OF_WEEK,
            text,
            "dL makes up the whole field (no lists, ranges" + " or steps with it)");
      }
      dowRule = CronFields.DowRule.LAST_OF_MONTH;
      dowDay = value(CronFields.Field.DAY_OF_WEEK, text, text.substring(0, text.length() - 1)) % 7;
    } else {
      long s = set(CronFields.Field.DAY_OF_WEEK, text);
      dowSet = (s & 0x7FL) | (s >>> 7 & 1L); // 7 is Sunday, like 0
    }
  }

  /** A list of single values, ranges and steps, as a bit set. */
  private long set(CronFields.Field field, String text) {
    if (text.equals("?")) {
      throw bad(
          field,
          text,
          "? (no specific value) is allowed in day-of-month and " + "day-of-week only");
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
  private int value(CronFields.Field field, String item, String token) {
    if (token.isEmpty()) {
      throw bad(field, item, "a value is missing");
    }
    if (field.names != null && Character.isLetter(token.charAt(0))) {
      String u = token.toUpperCase(Locale.ROOT);
      for (int i = 0; i < field.names.length; i++) {
        if (field.names[i].equals(u)) {
          return field == CronFields.Field.MONTH ? i + 1 : i;
        }
      }
      throw bad(
          field,
          item,
          "unknown name \""
              + token
              + "\" (names: "
              + String.join(" ", field.names)
              + ", in any case)");
    }
    int v = number(field, item, token, "value");
    if (v < field.min || v > field.max) {
      throw bad(field, item, v + " is out of range " + field.min + "-" + field.max);
    }
    return v;
  }

  private int number(CronFields.Field field, String item, String token, String what) {
    if (token.isEmpty()) {
      throw bad(field, item, "the " + what + " is missing");
    }
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      if (c < '0' || c > '9') {
        throw bad(
            field,
            item,
            "\"" + token + "\" is not a number" + (field.names == null ? "" : " nor a name"));
      }
    }
    if (token.length() > 4) {
      throw bad(field, item, "the " + what + " " + token + " is too large");
    }
    return Integer.parseInt(token);
  }

  private IllegalArgumentException bad(CronFields.Field field, String token, String why) {
    return new IllegalArgumentException(
        "cron expression \""
            + expression
            + "\": "
            + field.label
            + " field, \""
            + token
            + "\": "
            + why);
  }
}
