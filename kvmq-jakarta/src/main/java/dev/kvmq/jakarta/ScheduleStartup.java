package dev.kvmq.jakarta;

import dev.kvmq.Queue;
import dev.kvmq.Schedule;
import dev.kvmq.ScheduleEntry;
import dev.kvmq.Schedules;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * What every node does with a queue's declared schedules at startup: define each (idempotent: the
 * same definition writes nothing), delete the ones turned off by {@code .enabled=false}, and warn
 * about stored schedules that nothing here declares (kept: another version of the application may
 * still declare them; docs/scheduling.md). Returns its log lines instead of logging, so that a test
 * reads them.
 */
final class ScheduleStartup {

  private ScheduleStartup() {}

  /**
   * A line to log.
   *
   * @param level its level
   * @param message the message
   * @param error the cause, or null
   */
  record Line(Level level, String message, Throwable error) {}

  /**
   * Defines a queue's declared schedules.
   *
   * @param queue the queue
   * @param declared its declarations, or null if it declares none
   * @param json writes a state as JSON, for the line of a replaced schedule
   * @return the lines to log: INFO for each schedule created, replaced (naming what changed) or
   *     deleted, WARNING for each stored schedule not declared, ERROR for one that could not be
   *     defined; nothing for an unchanged one above DEBUG
   * @throws RuntimeException if the store can't list the queue's schedules
   */
  static <S> List<Line> define(
      Queue<S> queue, ScheduleDeclarations.Declared declared, Function<Object, String> json) {
    List<Line> lines = new ArrayList<>();
    Schedules<S> schedules = queue.schedules();
    Map<String, ScheduleEntry<S>> stored = new TreeMap<>();
    for (ScheduleEntry<S> e : schedules.list()) {
      stored.put(e.name(), e);
    }
    // stored schedules whose state this version of the application can't decode (list() leaves
    // them out): they fire jobs that fail to decode, so they are named, and deleted if disabled
    Set<String> unreadable = new TreeSet<>(schedules.names());
    unreadable.removeAll(stored.keySet());
    List<Schedule<Object>> wanted = declared == null ? List.of() : declared.schedules();
    Set<String> disabled = declared == null ? Set.of() : declared.disabled();
    for (Schedule<Object> s : wanted) {
      @SuppressWarnings("unchecked")
      Schedule<S> schedule = (Schedule<S>) s;
      ScheduleEntry<S> before = stored.remove(schedule.name());
      String what = what(queue, schedule.name());
      Schedules.Defined result;
      try {
        result = schedules.define(schedule);
      } catch (RuntimeException e) {
        lines.add(new Line(Level.ERROR, what + " could not be defined: " + e, e));
        continue;
      }
      switch (result) {
        case CREATED ->
            lines.add(new Line(Level.INFO, what + " created: " + describe(schedule), null));
        case REPLACED ->
            lines.add(
                new Line(
                    Level.INFO,
                    what
                        + " replaced: "
                        + (before == null
                            ? describe(schedule)
                            : changes(before.schedule(), schedule, json)),
                    null));
        case UNCHANGED -> lines.add(new Line(Level.DEBUG, what + " unchanged", null));
      }
    }
    for (Schedule<Object> s : wanted) {
      unreadable.remove(s.name()); // defined again above: replaced by a readable one
    }
    for (String name : disabled) {
      if ((stored.remove(name) != null | unreadable.remove(name)) && schedules.delete(name)) {
        lines.add(
            new Line(
                Level.INFO,
                what(queue, name)
                    + " deleted: kvmq.queue."
                    + queue.name()
                    + ScheduleDeclarations.INFIX
                    + name
                    + ".enabled=false",
                null));
      }
    }
    for (String name : stored.keySet()) {
      lines.add(
          stored(
              queue,
              name,
              "which this application does not declare; it keeps firing. If it is no longer"
                  + " wanted, delete it: ",
              ", the dashboard, or Schedules.delete"));
    }
    for (String name : unreadable) {
      lines.add(
          stored(
              queue,
              name,
              "whose state this application can't decode (its type changed); it keeps firing"
                  + " jobs that fail to decode. Declare it again to replace it, or delete it: ",
              ", kvmq.queue."
                  + queue.name()
                  + ScheduleDeclarations.INFIX
                  + name
                  + ".enabled=false, or Schedules.delete"));
    }
    return lines;
  }

  /** A WARNING about a stored schedule: what is wrong with it, then how to delete it. */
  private static Line stored(Queue<?> queue, String name, String why, String otherWays) {
    return new Line(
        Level.WARNING,
        "kvmq: queue \""
            + queue.name()
            + "\" has schedule \""
            + name
            + "\" in its store, "
            + why
            + "DELETE /kvmq/queues/"
            + queue.name()
            + "/schedules/"
            + name
            + otherWays,
        null);
  }

  private static String what(Queue<?> queue, String name) {
    return "kvmq: schedule \"" + name + "\" of queue \"" + queue.name() + "\"";
  }

  private static String describe(Schedule<?> s) {
    return s.spec()
        + ", missed "
        + s.missed()
        + ", overlap "
        + s.overlap()
        + ", lateness "
        + s.lateness();
  }

  /** What differs between two definitions of one schedule. */
  static String changes(Schedule<?> before, Schedule<?> after, Function<Object, String> json) {
    List<String> c = new ArrayList<>();
    if (!before.spec().equals(after.spec())) {
      c.add("spec " + before.spec() + " -> " + after.spec());
    }
    String was = json.apply(before.state());
    String is = json.apply(after.state());
    if (!was.equals(is)) {
      c.add("state " + was + " -> " + is);
    }
    if (!before.options().equals(after.options())) {
      c.add("job options " + before.options() + " -> " + after.options());
    }
    if (!before.missed().equals(after.missed())) {
      c.add("missed " + before.missed() + " -> " + after.missed());
    }
    if (before.overlap() != after.overlap()) {
      c.add("overlap " + before.overlap() + " -> " + after.overlap());
    }
    if (!before.lateness().equals(after.lateness())) {
      c.add("lateness " + before.lateness() + " -> " + after.lateness());
    }
    return c.isEmpty() ? describe(after) : String.join(", ", c);
  }
}
