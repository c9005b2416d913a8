package dev.kvmq;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * When a recurring schedule's slots are: a cron expression in a time zone, or a fixed rate. An
 * immutable value with pure arithmetic: it reads no clock, and the same arguments always give the
 * same slots. docs/scheduling.md is the reference.
 *
 * <pre>{@code
 * ScheduleSpec nightly = ScheduleSpec.cron("0 2 * * *", ZoneId.of("Europe/Paris"));
 * ScheduleSpec often = ScheduleSpec.fixedRate(Duration.ofMinutes(5), Instant.parse("2026-01-01T00:00:00Z"));
 * Optional<Instant> next = nightly.nextAfter(now);
 * }</pre>
 *
 * <p>A slot is an instant, at whole seconds. Two specs are equal when they are defined the same way
 * (the same expression text and zone, or the same rate and anchor).
 */
public sealed interface ScheduleSpec permits ScheduleSpec.Cron, ScheduleSpec.FixedRate {

  /**
   * A cron schedule: the five Unix fields (minute hour day-of-month month day-of-week), with an
   * optional leading second field, or a macro such as {@code @daily}; its local times are read in
   * {@code zone}. See {@link Cron} for the syntax and the DST rules.
   *
   * @param expression the cron expression
   * @param zone the time zone its fields are read in
   * @return the spec
   * @throws IllegalArgumentException if the expression is malformed; the message names the field
   *     and the token that is wrong
   * @throws NullPointerException if an argument is null
   */
  static Cron cron(String expression, ZoneId zone) {
    return new Cron(expression, zone);
  }

  /**
   * A fixed rate: a slot every {@code every}, at {@code anchor} and every multiple of {@code every}
   * after it. Time zones and DST play no part.
   *
   * @param every the time between two slots
   * @param anchor the first slot
   * @return the spec
   * @throws IllegalArgumentException if {@code every} is zero or negative, or {@code every} or
   *     {@code anchor} is not whole milliseconds
   * @throws NullPointerException if an argument is null
   */
  static FixedRate fixedRate(Duration every, Instant anchor) {
    return new FixedRate(every, anchor);
  }

  /**
   * The first slot strictly after {@code t}.
   *
   * @param t the instant after which to look
   * @return the slot, or empty if there is none after {@code t} ever (such as {@code 0 0 30 2 *},
   *     February 30) or none that {@link Instant} and {@link LocalDateTime} can represent
   * @throws NullPointerException if {@code t} is null
   */
  Optional<Instant> nextAfter(Instant t);

  /**
   * The slots in {@code (after, upTo]}, in order, at most {@code limit} of them: the first ones,
   * when there are more.
   *
   * @param after the instant after which to look (not included)
   * @param upTo the last instant to include
   * @param limit the most slots to return
   * @return the slots, an unmodifiable list; empty if {@code upTo} is not after {@code after}
   * @throws IllegalArgumentException if {@code limit} is negative
   * @throws NullPointerException if {@code after} or {@code upTo} is null
   */
  default List<Instant> slotsBetween(Instant after, Instant upTo, int limit) {
    Objects.requireNonNull(after, "after");
    Objects.requireNonNull(upTo, "upTo");
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative: " + limit);
    }
    List<Instant> slots = new ArrayList<>(Math.min(limit, 16));
    Instant t = after;
    while (slots.size() < limit) {
      Optional<Instant> next = nextAfter(t);
      if (next.isEmpty() || next.get().isAfter(upTo)) {
        break;
      }
      slots.add(next.get());
      t = next.get();
    }
    return List.copyOf(slots);
  }

  /**
   * A cron expression read in a time zone. Made by {@link ScheduleSpec#cron(String, ZoneId)}.
   *
   * <h2>Syntax</h2>
   *
   * Five fields, or six with a leading second field, separated by spaces:
   *
   * <pre>
   * [second] minute hour day-of-month month day-of-week
   *   0-59    0-59   0-23  1-31        1-12  0-7 (0 and 7 are Sunday)
   *                                    JAN-DEC  SUN-SAT (names in any case)
   * </pre>
   *
   * In every field: {@code *}, a value, a range {@code a-b}, a step <code>&#42;/n</code>, {@code
   * a-b/n} or {@code a/n} (from a to the field's end), and lists of these ({@code 1,15,20-25}).
   * {@code ?} means "no specific value" in day-of-month and day-of-week, like {@code *}. Macros:
   * {@code @yearly} and {@code @annually} ({@code 0 0 1 1 *}), {@code @monthly} ({@code 0 0 1 *
   * *}), {@code @weekly} ({@code 0 0 * * 0}), {@code @daily} and {@code @midnight} ({@code 0 0 * *
   * *}), {@code @hourly} ({@code 0 * * * *}).
   *
   * <p>Quartz's extensions, each making up its whole field: in day-of-month {@code L} (the last
   * day), {@code L-n} (n days before the last, 1 to 30), {@code LW} (the last weekday), {@code nW}
   * (the weekday nearest to day n, within the month); in day-of-week {@code dL} (the month's last
   * day d, such as {@code FRIL} or {@code 5L}) and {@code d#n} (the n-th day d of the month, 1 to
   * 5). Rejected: a year field, {@code L} alone in day-of-week, these extensions inside lists,
   * ranges that run backwards, {@code @reboot}.
   *
   * <p>Day-of-month and day-of-week combine as in Unix (Vixie) cron: when both are restricted
   * (neither is {@code *} nor {@code ?}) a day matches if either matches; when one is {@code *} or
   * {@code ?}, only the other counts. Day-of-week numbers are Unix's (1 is Monday), not Quartz's
   * (where 1 is Sunday).
   *
   * <h2>Time zones and DST</h2>
   *
   * The fields are matched against local date-times in the zone. A local time that the zone skips
   * (a spring-forward gap) or repeats (a fall-back overlap) is handled by this rule (Vixie cron's,
   * except that only the hour field decides which case applies):
   *
   * <ul>
   *   <li>An expression whose hour field matches every hour ({@code *}, {@code 0-23}, <code>&#42;/1
   *       </code>) follows the real clock: it fires at every instant whose local time matches.
   *       Local times in a gap have no instant and do not fire; local times in an overlap happen
   *       twice and fire twice ({@code 0 * * * *} fires at 02:00 CEST and again at 02:00 CET on the
   *       night Europe/Paris falls back, one real hour apart).
   *   <li>Any other expression fires once per matching local time: a local time in a gap fires at
   *       the instant the gap ends (a 02:30 slot fires at 03:00 CEST on the night Europe/Paris
   *       springs forward; several slots in one gap fire once, together), and a local time in an
   *       overlap fires at its first occurrence only (02:30 CEST, not 02:30 CET).
   * </ul>
   */
  final class Cron implements ScheduleSpec {
    private static final Instant FIRST_SEARCHABLE =
        LocalDateTime.MIN.plusDays(2).toInstant(ZoneOffset.UTC);
    private static final Instant LAST_SEARCHABLE =
        LocalDateTime.MAX.minusDays(2).toInstant(ZoneOffset.UTC);
    private static final int MAX_STEPS = 100_000;

    private final String expression;
    private final ZoneId zone;
    private final CronFields fields;

    private Cron(String expression, ZoneId zone) {
      this.expression = Objects.requireNonNull(expression, "expression").strip();
      this.zone = Objects.requireNonNull(zone, "zone");
      this.fields = CronFields.parse(expression);
    }

    /**
     * The expression, as given without leading and trailing spaces.
     *
     * @return the expression
     */
    public String expression() {
      return expression;
    }

    /**
     * The time zone the fields are read in.
     *
     * @return the zone
     */
    public ZoneId zone() {
      return zone;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The search is bounded: the calendar repeats every 400 years, so a day pattern with no
     * match in 400 years (February 30) has none ever, and the answer is empty. It also keeps two
     * days from each end of {@link LocalDateTime}'s range (years -999999999 and 999999999), where a
     * zone's offset could leave it: no slot is found in those days, and a {@code t} before them is
     * searched from their end.
     *
     * @throws NullPointerException if {@code t} is null
     */
    @Override
    public Optional<Instant> nextAfter(Instant t) {
      Objects.requireNonNull(t, "t");
      if (t.isAfter(LAST_SEARCHABLE)) {
        return Optional.empty();
      }
      long second = t.getEpochSecond() + 1; // slots are whole seconds: the first after t
      Instant from =
          t.isBefore(FIRST_SEARCHABLE) ? FIRST_SEARCHABLE : Instant.ofEpochSecond(second);
      ZoneRules rules = zone.getRules();
      boolean realClock = fields.everyHour();
      for (int step = 0; step < MAX_STEPS; step++) {
        ZoneOffset offset = rules.getOffset(from);
        if (!realClock) {
          ZoneOffset justBefore = rules.getOffset(from.minusNanos(1));
          if (justBefore.getTotalSeconds() < offset.getTotalSeconds()) {
            offset = justBefore; // from is where a gap ends: the gap's local times fire here
          }
        }
        LocalDateTime wall = LocalDateTime.ofEpochSecond(from.getEpochSecond(), 0, offset);
        LocalDateTime slot = fields.firstAtOrAfter(wall);
        if (slot == null) {
          return Optional.empty();
        }
        Instant candidate;
        List<ZoneOffset> offsets = rules.getValidOffsets(slot);
        if (offsets.size() == 1) {
          candidate = toInstant(slot, offsets.get(0));
        } else {
          ZoneOffsetTransition transition = rules.getTransition(slot);
          if (offsets.isEmpty()) { // in a gap
            if (!realClock) {
              candidate = transition.getInstant();
            } else {
              from = transition.getInstant();
              continue;
            }
          } else { // in an overlap
            Instant early = toInstant(slot, transition.getOffsetBefore());
            if (!early.isBefore(from)) {
              candidate = early;
            } else if (realClock) {
              candidate = toInstant(slot, transition.getOffsetAfter());
            } else { // the repeated local times ran at their first occurrence
              from = toInstant(transition.getDateTimeBefore(), transition.getOffsetAfter());
              continue;
            }
          }
        }
        if (realClock) {
          // Local times repeated by an overlap between from and the candidate come first.
          ZoneOffsetTransition next = rules.nextTransition(from);
          if (next != null && next.isOverlap() && !candidate.isBefore(next.getInstant())) {
            from = next.getInstant();
            continue;
          }
        }
        return Optional.of(candidate);
      }
      throw new IllegalStateException(
          "no slot found in "
              + MAX_STEPS
              + " steps for "
              + this
              + " after "
              + t
              + "; indicates a bug");
    }

    private static Instant toInstant(LocalDateTime local, ZoneOffset offset) {
      return local.toInstant(offset); // Instant's range holds every LocalDateTime's
    }

    /**
     * Equal when the expression text and the zone are equal.
     *
     * @param o the other object
     * @return whether {@code o} is a cron spec with the same expression and zone
     */
    @Override
    public boolean equals(Object o) {
      return o instanceof Cron c && c.expression.equals(expression) && c.zone.equals(zone);
    }

    /**
     * A hash of the expression and the zone.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
      return expression.hashCode() * 31 + zone.hashCode();
    }

    /**
     * The expression and the zone, such as {@code cron "0 2 * * *" in Europe/Paris}.
     *
     * @return the text
     */
    @Override
    public String toString() {
      return "cron \"" + expression + "\" in " + zone;
    }
  }

  /**
   * A fixed rate: slots at {@code anchor + k * every} for every k &ge; 0. Made by {@link
   * ScheduleSpec#fixedRate(Duration, Instant)}. Zone-free: DST plays no part.
   *
   * @param every the time between two slots, positive, whole milliseconds
   * @param anchor the first slot, at a whole millisecond
   */
  record FixedRate(Duration every, Instant anchor) implements ScheduleSpec {

    /**
     * Checks the components.
     *
     * @param every the time between two slots, positive
     * @param anchor the first slot
     * @throws IllegalArgumentException if {@code every} is zero or negative, or {@code every} or
     *     {@code anchor} is not whole milliseconds
     * @throws NullPointerException if a component is null
     */
    public FixedRate {
      Objects.requireNonNull(every, "every");
      Objects.requireNonNull(anchor, "anchor");
      if (every.isNegative() || every.isZero()) {
        throw new IllegalArgumentException("every must be positive: " + every);
      }
      if (every.getNano() % 1_000_000 != 0) {
        throw new IllegalArgumentException(
            "every must be whole milliseconds (a schedule keeps its due time in milliseconds): "
                + every);
      }
      if (anchor.getNano() % 1_000_000 != 0) {
        throw new IllegalArgumentException(
            "the anchor must be at a whole millisecond (a schedule keeps its due time in"
                + " milliseconds; the system clock's instants have finer digits: truncate one,"
                + " for example with truncatedTo(ChronoUnit.SECONDS)): "
                + anchor);
      }
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException if {@code t} is null
     */
    @Override
    public Optional<Instant> nextAfter(Instant t) {
      Objects.requireNonNull(t, "t");
      if (t.isBefore(anchor)) {
        return Optional.of(anchor);
      }
      try {
        long k = Duration.between(anchor, t).dividedBy(every) + 1;
        return Optional.of(anchor.plus(every.multipliedBy(k)));
      } catch (ArithmeticException | DateTimeException e) {
        return Optional.empty(); // beyond Instant.MAX
      }
    }
  }
}
