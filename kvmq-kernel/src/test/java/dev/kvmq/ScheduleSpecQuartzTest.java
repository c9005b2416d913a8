package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.testing.Seeds;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;
import org.quartz.CronExpression;

/**
 * ScheduleSpec's cron arithmetic against Quartz's {@code CronExpression} 2.5.2: seeded random
 * expressions x instants x zones with DST, next-fire times equal.
 *
 * <p>Comparing like with like:
 *
 * <ul>
 *   <li>Syntax: Quartz has a leading second field and numbers day-of-week 1-7 from Sunday; each
 *       random expression is rendered twice, in kvmq's syntax and in Quartz's.
 *   <li>Day-of-month with day-of-week: Quartz needs one of them to be {@code ?}. When both are
 *       restricted kvmq takes either (Vixie's OR), so the expected next time is the earlier of
 *       Quartz's for the day-of-month half and for the day-of-week half.
 *   <li>DST: kvmq's rule (ScheduleSpec.Cron's Javadoc, docs/scheduling.md) is stated here on its
 *       own terms, with Quartz in fixed offsets, where it has no DST to get wrong: between two
 *       transitions of the zone the fire times are Quartz's in that stretch's offset; at a gap, an
 *       expression whose hour field is not every hour also fires at the gap's end if Quartz in the
 *       offset before has a fire time inside the gap; at an overlap, such an expression skips the
 *       repeated stretch. Where no transition lies between the instant and the answer, Quartz in
 *       the real zone must agree too.
 * </ul>
 *
 * <p>Why not Quartz in the zone throughout: in Europe/Paris in 2026, Quartz 2.5.2 gives no 02:30
 * slot on 29 March (it goes from the 28th to the 30th), fires 25 October's 02:30 at the second
 * occurrence (CET), and has {@code 0 0 * * * ?} skip 02:00 CEST that night (00:00Z), firing only at
 * 02:00 CET.
 */
class ScheduleSpecQuartzTest {

  static final List<ZoneId> ZONES =
      List.of(
          ZoneId.of("Europe/Paris"),
          ZoneId.of("America/New_York"),
          ZoneId.of("Australia/Lord_Howe"),
          ZoneId.of("Asia/Kolkata"),
          ZoneId.of("UTC"),
          ZoneId.of("America/Sao_Paulo"),
          ZoneId.of("Pacific/Chatham"),
          ZoneId.of("America/Santiago"),
          ZoneId.of("Pacific/Apia"),
          ZoneId.of("Antarctica/Troll"),
          ZoneId.of("Asia/Tehran"),
          ZoneId.of("Europe/London"));

  private static final Instant FROM = Instant.parse("1975-01-01T00:00:00Z");
  private static final Instant TO = Instant.parse("2045-01-01T00:00:00Z");
  private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
  private static final String[] MONTHS = {
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"
  };

  @Test
  void nextAfterEqualsQuartzForRandomExpressionsInstantsAndZones() {
    // [compared with Quartz in the real zone, all comparisons, a transition between t and the
    // answer]
    int[] inZone = new int[3];
    Seeds.forEach(
        "cron next-fire times equal Quartz's",
        4000,
        1,
        r -> {
          Expr e = Expr.random(r);
          ZoneId zone = ZONES.get(r.nextInt(ZONES.size()));
          Instant t = randomInstant(r, zone);
          ScheduleSpec spec = ScheduleSpec.cron(e.kvmq, zone);
          Oracle oracle = new Oracle(e, zone);
          for (int i = 0; i < 8; i++) {
            Optional<Instant> expected = oracle.nextAfter(t);
            Optional<Instant> actual = spec.nextAfter(t);
            String what =
                spec
                    + " (Quartz: "
                    + e.quartz
                    + ") after "
                    + t
                    + " = "
                    + t.atZone(zone).toOffsetDateTime();
            assertThat(actual)
                .as(what + ": expected " + expected.map(x -> x.atZone(zone)))
                .isEqualTo(expected);
            inZone[1]++;
            ZoneOffsetTransition between = zone.getRules().nextTransition(t);
            if (expected.isPresent()
                && between != null
                && !between.getInstant().isAfter(expected.get())) {
              inZone[2]++;
            }
            if (expected.isPresent() && noTransitionBetween(zone, t, expected.get())) {
              assertThat(oracle.quartzInZone(t))
                  .as(what + ", Quartz in the zone itself")
                  .isEqualTo(expected);
              inZone[0]++;
            }
            if (actual.isEmpty()) {
              break;
            }
            // The next instant: the slot itself, or a little before or after it.
            t =
                switch (r.nextInt(4)) {
                  case 0 -> actual.get().minusNanos(1 + r.nextLong(999_999_999L));
                  case 1 -> actual.get().plusNanos(r.nextLong(1_000_000_000L));
                  default -> actual.get();
                };
          }
        });
    // Most comparisons are also made with Quartz in the zone itself (no transition between).
    assertThat(inZone[0]).isGreaterThan(inZone[1] / 2);
    // And more than a thousand answers lie across a transition (the oracle's DST rule decides).
    assertThat(inZone[2]).isGreaterThan(1000);
  }

  @Test
  void bothDayFieldsRestrictedFireOnEitherAsInVixieCron() {
    Seeds.forEach(
        "day-of-month OR day-of-week",
        1000,
        100_001,
        r -> {
          Expr e;
          do {
            e = Expr.random(r);
          } while (e.quartzDowHalf == null);
          ZoneId zone = ZONES.get(r.nextInt(ZONES.size()));
          ScheduleSpec spec = ScheduleSpec.cron(e.kvmq, zone);
          Oracle oracle = new Oracle(e, zone);
          Instant t = randomInstant(r, zone);
          for (int i = 0; i < 5; i++) {
            Optional<Instant> expected = oracle.nextAfter(t);
            assertThat(spec.nextAfter(t)).as(spec + " after " + t).isEqualTo(expected);
            if (expected.isEmpty()) {
              break;
            }
            t = expected.get();
          }
        });
  }

  private static boolean noTransitionBetween(ZoneId zone, Instant t, Instant until) {
    ZoneOffsetTransition next = zone.getRules().nextTransition(t.minus(Duration.ofDays(1)));
    return next == null || next.getInstant().isAfter(until.plus(Duration.ofDays(1)));
  }

  /** Half the instants uniform in 1975-2045, half within hours of one of the zone's transitions. */
  static Instant randomInstant(SplittableRandom r, ZoneId zone) {
    Instant t = FROM.plusSeconds(r.nextLong(Duration.between(FROM, TO).getSeconds()));
    if (r.nextBoolean()) {
      ZoneOffsetTransition next = zone.getRules().nextTransition(t.minus(Duration.ofDays(1)));
      if (next != null && next.getInstant().isBefore(TO)) {
        t = next.getInstant().plusSeconds(r.nextLong(-4 * 3600, 4 * 3600));
      }
    }
    return r.nextInt(4) == 0 ? t.plusNanos(r.nextLong(1_000_000_000L)) : t;
  }

  /** One random expression, rendered in kvmq's syntax and in Quartz's. */
  static final class Expr {
    final String kvmq;

    /** Quartz's form; with day-of-month restricted if both day fields are. */
    final String quartz;

    /** Quartz's form with the day-of-week half when both day fields are restricted, else null. */
    final String quartzDowHalf;

    final String hourField;

    /** Day-of-month is L or L-n: see {@link Oracle#fire}. */
    final boolean lastOrWeekday;

    private Expr(
        String kvmq, String quartz, String quartzDowHalf, String hourField, boolean lastOrWeekday) {
      this.lastOrWeekday = lastOrWeekday;
      this.kvmq = kvmq;
      this.quartz = quartz;
      this.quartzDowHalf = quartzDowHalf;
      this.hourField = hourField;
    }

    static Expr random(SplittableRandom r) {
      boolean sixFields = r.nextInt(5) < 2;
      String second = sixFields ? timeField(r, 0, 59) : "0";
      String minute = r.nextInt(5) == 0 ? "*" : timeField(r, 0, 59);
      String hour = r.nextInt(4) == 0 ? "*" : timeField(r, 0, 23);
      String month = r.nextBoolean() ? "*" : monthField(r);
      String[] dow = dayOfWeekField(r); // {kvmq, quartz} or null when unrestricted
      String dom = dayOfMonthField(r); // or null when unrestricted
      String kvmqDom = dom != null ? dom : r.nextBoolean() ? "*" : "?";
      String kvmqDow = dow != null ? dow[0] : r.nextBoolean() ? "*" : "?";
      String kvmq =
          (sixFields ? second + " " : "")
              + minute
              + " "
              + hour
              + " "
              + kvmqDom
              + " "
              + month
              + " "
              + kvmqDow;
      String head = second + " " + minute + " " + hour + " ";
      String quartz;
      String dowHalf = null;
      if (dom == null && dow == null) {
        quartz = head + "* " + month + " ?";
      } else if (dow == null) {
        quartz = head + dom + " " + month + " ?";
      } else if (dom == null) {
        quartz = head + "? " + month + " " + dow[1];
      } else {
        quartz = head + dom + " " + month + " ?";
        dowHalf = head + "? " + month + " " + dow[1];
      }
      return new Expr(
          kvmq, quartz, dowHalf, hour, dom != null && (dom.contains("L") || dom.contains("W")));
    }

    /** Hours biased to 0-3 (where DST transitions are), minutes and seconds to a few values. */
    private static String timeField(SplittableRandom r, int min, int max) {
      int items = 1 + (r.nextInt(4) == 0 ? r.nextInt(3) : 0);
      List<String> out = new ArrayList<>();
      for (int i = 0; i < items; i++) {
        int a = value(r, min, max);
        switch (r.nextInt(10)) {
          case 0, 1 -> {
            int b = a + r.nextInt(max - a + 1);
            out.add(a + "-" + b);
          }
          case 2, 3 -> out.add("*/" + (1 + r.nextInt(max - min)));
          case 4 -> {
            int b = a + r.nextInt(max - a + 1);
            out.add(a + "-" + b + "/" + (1 + r.nextInt(max - min)));
          }
          case 5 -> out.add(a + "/" + (1 + r.nextInt(max - min)));
          default -> out.add(Integer.toString(a));
        }
      }
      return String.join(",", out);
    }

    private static int value(SplittableRandom r, int min, int max) {
      if (max == 23 && r.nextBoolean()) {
        return r.nextInt(4);
      }
      if (max == 59 && r.nextBoolean()) {
        return 15 * r.nextInt(4);
      }
      return min + r.nextInt(max - min + 1);
    }

    private static String monthField(SplittableRandom r) {
      List<String> out = new ArrayList<>();
      int items = 1 + r.nextInt(3);
      for (int i = 0; i < items; i++) {
        int a = 1 + r.nextInt(12);
        switch (r.nextInt(6)) {
          case 0 -> {
            int b = a + r.nextInt(13 - a); // Quartz takes names or numbers, not both, in a range
            out.add(
                r.nextBoolean()
                    ? a + "-" + b
                    : anyCase(r, MONTHS[a - 1]) + "-" + anyCase(r, MONTHS[b - 1]));
          }
          case 1 -> out.add("*/" + (1 + r.nextInt(11)));
          case 2 -> out.add(a + "-" + (a + r.nextInt(13 - a)) + "/" + (1 + r.nextInt(11)));
          default -> out.add(monthName(r, a));
        }
      }
      return String.join(",", out);
    }

    private static String monthName(SplittableRandom r, int m) {
      return r.nextBoolean() ? Integer.toString(m) : anyCase(r, MONTHS[m - 1]);
    }

    /**
     * Null (unrestricted) half of the time; else a list, L or L-n. Not LW and nW: Quartz 2.5.2's
     * nearest-weekday arithmetic gives different answers for the same arguments from one run to the
     * next (it builds a Calendar from the current time and leaves some of its fields as they are);
     * ScheduleSpecSyntaxTest states the W rule and checks it instead.
     */
    private static String dayOfMonthField(SplittableRandom r) {
      int kind = r.nextInt(20);
      if (kind < 9) {
        return null;
      }
      switch (kind) {
        case 9:
          return "L";
        case 10:
          return "L-" + (1 + r.nextInt(30));
        default:
          List<String> out = new ArrayList<>();
          int items = 1 + r.nextInt(3);
          for (int i = 0; i < items; i++) {
            int a = r.nextInt(3) == 0 ? 28 + r.nextInt(4) : 1 + r.nextInt(31);
            switch (r.nextInt(6)) {
              case 0 -> out.add(a + "-" + (a + r.nextInt(32 - a)));
              case 1 -> out.add("*/" + (1 + r.nextInt(30)));
              case 2 -> out.add(a + "/" + (1 + r.nextInt(30)));
              default -> out.add(Integer.toString(a));
            }
          }
          return String.join(",", out);
      }
    }

    /** Null (unrestricted) half of the time; else {kvmq's form, Quartz's form}. */
    private static String[] dayOfWeekField(SplittableRandom r) {
      int kind = r.nextInt(20);
      if (kind < 10) {
        return null;
      }
      if (kind == 10) {
        int d = r.nextInt(7);
        return new String[] {dayName(r, d) + "L", (d + 1) + "L"};
      }
      if (kind == 11) {
        int d = r.nextInt(7);
        int n = 1 + r.nextInt(5);
        return new String[] {dayName(r, d) + "#" + n, (d + 1) + "#" + n};
      }
      List<String> k = new ArrayList<>();
      List<String> q = new ArrayList<>();
      int items = 1 + r.nextInt(3);
      for (int i = 0; i < items; i++) {
        int a = r.nextInt(7);
        switch (r.nextInt(7)) {
          case 0 -> {
            int b = a + r.nextInt(7 - a);
            boolean names = r.nextBoolean();
            k.add(names ? anyCase(r, DAYS[a]) + "-" + anyCase(r, DAYS[b]) : a + "-" + b);
            q.add(names ? DAYS[a] + "-" + DAYS[b] : (a + 1) + "-" + (b + 1));
          }
          case 1 -> {
            String step = "*/" + (1 + r.nextInt(6));
            k.add(step);
            q.add(step);
          }
          case 2 -> {
            int b = a + r.nextInt(7 - a);
            int step = 1 + r.nextInt(6);
            k.add(a + "-" + b + "/" + step);
            q.add((a + 1) + "-" + (b + 1) + "/" + step);
          }
          case 3 -> {
            int step = 1 + r.nextInt(6);
            k.add(a + "/" + step);
            q.add((a + 1) + "/" + step);
          }
          default -> {
            k.add(a == 0 && r.nextBoolean() ? "7" : dayName(r, a));
            q.add(Integer.toString(a + 1));
          }
        }
      }
      return new String[] {String.join(",", k), String.join(",", q)};
    }

    private static String dayName(SplittableRandom r, int d) {
      return r.nextBoolean() ? Integer.toString(d) : anyCase(r, DAYS[d]);
    }

    private static String anyCase(SplittableRandom r, String name) {
      switch (r.nextInt(3)) {
        case 0:
          return name.toLowerCase(Locale.ROOT);
        case 1:
          return name.charAt(0) + name.substring(1).toLowerCase(Locale.ROOT);
        default:
          return name;
      }
    }
  }

  /** The documented rule, computed with Quartz in fixed offsets between the zone's transitions. */
  static final class Oracle {
    private final Expr expr;
    private final ZoneId zone;
    private final ZoneRules rules;
    private final boolean everyHour;
    private final Map<String, CronExpression> cache = new HashMap<>();

    Oracle(Expr expr, ZoneId zone) {
      this.expr = expr;
      this.zone = zone;
      this.rules = zone.getRules();
      CronExpression hours = quartz("0 0 " + expr.hourField + " * * ?", ZoneOffset.UTC);
      boolean all = true;
      for (int h = 0; h < 24; h++) {
        all &=
            hours.isSatisfiedBy(
                Date.from(Instant.parse("2000-01-01T00:00:00Z").plusSeconds(h * 3600L)));
      }
      this.everyHour = all;
    }

    Optional<Instant> nextAfter(Instant t) {
      Optional<Instant> a = nextAfter(expr.quartz, t);
      if (expr.quartzDowHalf == null) {
        return a;
      }
      Optional<Instant> b = nextAfter(expr.quartzDowHalf, t);
      if (a.isEmpty()) {
        return b;
      }
      return b.isPresent() && b.get().isBefore(a.get()) ? b : a;
    }

    Optional<Instant> quartzInZone(Instant t) {
      Optional<Instant> a = fire(quartz(expr.quartz, zone), t, zone);
      if (expr.quartzDowHalf == null) {
        return a;
      }
      Optional<Instant> b = fire(quartz(expr.quartzDowHalf, zone), t, zone);
      if (a.isEmpty()) {
        return b;
      }
      return b.isPresent() && b.get().isBefore(a.get()) ? b : a;
    }

    private Optional<Instant> nextAfter(String q, Instant t) {
      Instant after = t; // the first fire strictly after this
      Instant from = t; // the stretch of constant offset that holds it
      ZoneOffsetTransition last = rules.previousTransition(t.plusNanos(1));
      if (!everyHour
          && last != null
          && last.isOverlap()
          && t.isBefore(last.getInstant().plus(last.getDuration().negated()))) {
        from = last.getInstant().plus(last.getDuration().negated()); // t is in the repeat
        after = from.minusSeconds(1).isAfter(t) ? from.minusSeconds(1) : t;
      }
      while (true) {
        ZoneOffset offset = rules.getOffset(from);
        ZoneOffsetTransition next = rules.nextTransition(from);
        Optional<Instant> fire = fire(quartz(q, offset), after, offset);
        if (next == null || fire.isEmpty() || fire.get().isBefore(next.getInstant())) {
          return fire;
        }
        Instant at = next.getInstant();
        if (next.isGap() && !everyHour) {
          // Local times in the gap, read in the offset before, are the instants [at, at + gap).
          Optional<Instant> inGap =
              fire(quartz(q, next.getOffsetBefore()), at.minusSeconds(1), next.getOffsetBefore());
          if (inGap.isPresent() && inGap.get().isBefore(at.plus(next.getDuration()))) {
            return Optional.of(at);
          }
        }
        if (next.isOverlap() && !everyHour) {
          from = at.plus(next.getDuration().negated()); // the repeated stretch fired before
        } else {
          from = at;
        }
        after = from.minusSeconds(1);
      }
    }

    /**
     * Quartz's next fire time after {@code after}. With L or L-n in day-of-month, Quartz 2.5.2
     * finds the right day but, moving to a later day, keeps the time of day it started from ({@code
     * 0 * * LW * ?} after 2016-08-13T10:37:01 gives 2016-08-31T10:38, not 00:00); asking again from
     * the start of that day gives its first fire time.
     */
    private Optional<Instant> fire(CronExpression c, Instant after, ZoneId z) {
      Optional<Instant> f = fire(c, after);
      if (expr.lastOrWeekday && f.isPresent()) {
        Instant startOfDay =
            LocalDateTime.ofInstant(f.get(), z).toLocalDate().atStartOfDay(z).toInstant();
        if (startOfDay.isAfter(after)) {
          f = fire(c, startOfDay.minusSeconds(1));
        }
      }
      return f;
    }

    private static Optional<Instant> fire(CronExpression c, Instant after) {
      return Optional.ofNullable(c.getNextValidTimeAfter(Date.from(after))).map(Date::toInstant);
    }

    private CronExpression quartz(String q, ZoneId z) {
      return cache.computeIfAbsent(
          q + "@" + z,
          k -> {
            try {
              CronExpression c = new CronExpression(q);
              c.setTimeZone(TimeZone.getTimeZone(z instanceof ZoneOffset o ? gmt(o) : z.getId()));
              return c;
            } catch (ParseException e) {
              throw new AssertionError("Quartz rejects " + q + ": " + e.getMessage(), e);
            }
          });
    }

    private static String gmt(ZoneOffset o) {
      int s = o.getTotalSeconds();
      if (s % 60 != 0) {
        throw new AssertionError("offset with seconds: " + o);
      }
      return s == 0 ? "GMT" : "GMT" + o.getId();
    }
  }
}
