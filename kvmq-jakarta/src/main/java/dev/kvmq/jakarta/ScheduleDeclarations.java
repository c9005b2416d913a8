package dev.kvmq.jakarta;

import dev.kvmq.JobOptions;
import dev.kvmq.MissedRuns;
import dev.kvmq.Overlap;
import dev.kvmq.Schedule;
import dev.kvmq.ScheduleSpec;
import jakarta.json.bind.Jsonb;
import java.lang.reflect.Type;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The recurring schedules one queue declares in this application: its handler's {@link
 * QueueSchedule} annotations, overridden per property by {@code kvmq.queue.QUEUE.schedule.NAME.*},
 * and the schedules declared in configuration only. Reading them checks them; every problem is a
 * coded message (KVMQ-010 to KVMQ-012) naming the handler, the schedule and the problem.
 */
final class ScheduleDeclarations {

  /** The properties a schedule's configuration key may end with. */
  static final List<String> KEYS =
      List.of(
          "cron",
          "every",
          "anchor",
          "zone",
          "state",
          "missed",
          "missed-limit",
          "overlap",
          "lateness",
          "enabled");

  /** What follows a queue's name in a schedule's configuration key. */
  static final String INFIX = ".schedule.";

  /** The anchor of an {@code every} schedule that gives none. */
  static final Instant DEFAULT_ANCHOR = Instant.EPOCH;

  private ScheduleDeclarations() {}

  /**
   * A queue's declared schedules, checked.
   *
   * @param queue the queue
   * @param handler the handler's class, for messages
   * @param schedules the schedules to define at startup, by name
   * @param disabled the names turned off by {@code .enabled=false}
   */
  record Declared(
      String queue, Class<?> handler, List<Schedule<Object>> schedules, Set<String> disabled) {}

  /**
   * Splits what follows {@code kvmq.queue.QUEUE.schedule.} into the schedule's name and the
   * property.
   *
   * @return {@code [name, property]}, or empty if it ends with no property of {@link #KEYS}
   */
  static Optional<String[]> split(String rest) {
    for (String k : KEYS) {
      if (rest.endsWith("." + k) && rest.length() > k.length() + 1) {
        return Optional.of(new String[] {rest.substring(0, rest.length() - k.length() - 1), k});
      }
    }
    return Optional.empty();
  }

  /**
   * Reads and checks a queue's schedules.
   *
   * @param queue the queue's name
   * @param handler the handler's class, which carries the annotations
   * @param stateType the queue's state type
   * @param jsonb the queue's JSON-B, to decode the states with
   * @param jobDefaults the queue's default job options, the options of each slot's job
   * @param config the configuration
   * @param problems where the problems go
   * @return the schedules; incomplete when there were problems
   */
  static Declared read(
      String queue,
      Class<?> handler,
      Type stateType,
      Jsonb jsonb,
      JobOptions jobDefaults,
      KvmqConfig config,
      List<String> problems) {
    String base = "kvmq.queue." + queue + INFIX;
    Map<String, QueueSchedule> annotated = new LinkedHashMap<>();
    for (QueueSchedule a : handler.getAnnotationsByType(QueueSchedule.class)) {
      if (annotated.putIfAbsent(a.name(), a) != null) {
        problems.add(
            "KVMQ-012: handler "
                + handler.getName()
                + " of queue \""
                + queue
                + "\" declares schedule \""
                + a.name()
                + "\" more than once; a schedule's name is unique in its queue");
      }
    }
    Set<String> names = new LinkedHashSet<>(annotated.keySet());
    Set<String> configured = new TreeSet<>();
    for (String key : config.keysStartingWith(base)) {
      Optional<String[]> parts = split(key.substring(base.length()));
      if (parts.isEmpty()) {
        problems.add(
            "KVMQ-010: configuration key "
                + key
                + " names no property of a schedule of queue \""
                + queue
                + "\"; they are "
                + base
                + "NAME."
                + String.join(", .", KEYS));
      } else {
        configured.add(parts.get()[0]);
      }
    }
    names.addAll(configured);
    List<Schedule<Object>> schedules = new ArrayList<>();
    Set<String> disabled = new TreeSet<>();
    for (String name : names) {
      Reader r = new Reader(queue, handler, name, annotated.get(name), config);
      if (!r.enabled()) {
        disabled.add(name);
        problems.addAll(r.problems);
        continue;
      }
      Schedule<Object> s = r.schedule(stateType, jsonb, jobDefaults);
      problems.addAll(r.problems);
      if (s != null && r.problems.isEmpty()) {
        schedules.add(s);
      }
    }
    return new Declared(
        queue,
        handler,
        Collections.unmodifiableList(schedules),
        Collections.unmodifiableSet(disabled));
  }

  /** Reads one schedule's properties, naming the source of each value in its problems. */
  private static final class Reader {
    final String queue;
    final Class<?> handler;
    final String name;
    final QueueSchedule a;
    final KvmqConfig config;
    final String prefix;
    final List<String> problems = new ArrayList<>();

    Reader(String queue, Class<?> handler, String name, QueueSchedule a, KvmqConfig config) {
      this.queue = queue;
      this.handler = handler;
      this.name = name;
      this.a = a;
      this.config = config;
      this.prefix = "kvmq.queue." + queue + INFIX + name + ".";
    }

    void problem(String code, String detail) {
      problems.add(
          code
              + ": schedule \""
              + name
              + "\" of queue \""
              + queue
              + "\" (handler "
              + handler.getName()
              + "): "
              + detail);
    }

    Optional<String> configured(String key) {
      return config.get(prefix + key).map(String::strip);
    }

    /** The configuration key if set, else the annotation's attribute. */
    String source(String key, String attribute) {
      return configured(key).isPresent() ? prefix + key : "@QueueSchedule(" + attribute + ")";
    }

    boolean enabled() {
      Optional<String> v = configured("enabled");
      if (v.isEmpty()) {
        return true;
      }
      String s = v.get().toLowerCase(Locale.ROOT);
      if (!s.equals("true") && !s.equals("false")) {
        problem("KVMQ-010", prefix + "enabled is \"" + v.get() + "\"; use true or false");
        return true;
      }
      return s.equals("true");
    }

    Schedule<Object> schedule(Type stateType, Jsonb jsonb, JobOptions jobDefaults) {
      ScheduleSpec spec = spec();
      Object state = state(stateType, jsonb);
      MissedRuns missed = missed();
      Overlap overlap = overlap();
      Duration lateness = lateness();
      if (spec == null || state == null || missed == null || overlap == null || lateness == null) {
        return null;
      }
      try {
        return Schedule.builder(name, spec, state)
            .options(jobDefaults)
            .missed(missed)
            .overlap(overlap)
            .lateness(lateness)
            .build();
      } catch (IllegalArgumentException e) {
        problem("KVMQ-010", e.getMessage());
        return null;
      }
    }

    /**
     * The spec. If configuration gives {@code cron} or {@code every}, it replaces the annotation's
     * spec whole (cron, every, zone and anchor); else configuration may change the annotation's
     * zone or anchor alone.
     */
    ScheduleSpec spec() {
      Optional<String> cCron = configured("cron");
      Optional<String> cEvery = configured("every");
      boolean fromConfig = cCron.isPresent() || cEvery.isPresent() || a == null;
      String cron = fromConfig ? cCron.orElse("") : a.cron().strip();
      String every = fromConfig ? cEvery.orElse("") : a.every().strip();
      String zone = configured("zone").orElse(fromConfig ? "" : a.zone().strip());
      String anchor = configured("anchor").orElse(fromConfig ? "" : a.anchor().strip());
      String cronSource = fromConfig ? prefix + "cron" : "@QueueSchedule(cron)";
      String everySource = fromConfig ? prefix + "every" : "@QueueSchedule(every)";
      if (cron.isEmpty() && every.isEmpty()) {
        problem(
            "KVMQ-010",
            a == null
                ? "it is declared in configuration only and needs "
                    + prefix
                    + "cron or "
                    + prefix
                    + "every"
                : "it has neither cron nor every; give one");
        return null;
      }
      if (!cron.isEmpty() && !every.isEmpty()) {
        problem(
            "KVMQ-010", "it has both " + cronSource + " and " + everySource + "; give one of them");
        return null;
      }
      if (!cron.isEmpty()) {
        if (!anchor.isEmpty()) {
          problem("KVMQ-010", source("anchor", "anchor") + " is for every, not for cron");
          return null;
        }
        ZoneId z;
        try {
          z = ZoneId.of(zone.isEmpty() ? "UTC" : zone);
        } catch (DateTimeException e) {
          problem(
              "KVMQ-010",
              source("zone", "zone")
                  + " is \""
                  + zone
                  + "\", not a known time zone ID such as Europe/Paris or UTC");
          return null;
        }
        try {
          return ScheduleSpec.cron(cron, z);
        } catch (IllegalArgumentException e) {
          problem(
              "KVMQ-010",
              cronSource + " \"" + cron + "\" is not a cron expression: " + e.getMessage());
          return null;
        }
      }
      if (!zone.isEmpty()) {
        problem(
            "KVMQ-010",
            source("zone", "zone")
                + " is for cron; an every schedule's slots are the same instants in every zone");
        return null;
      }
      Duration d;
      try {
        d = Duration.parse(every);
      } catch (DateTimeParseException e) {
        problem(
            "KVMQ-010",
            everySource + " is \"" + every + "\", not an ISO-8601 duration such as PT5M");
        return null;
      }
      if (d.isNegative() || d.getSeconds() < 1 || d.getNano() != 0) {
        problem("KVMQ-010", everySource + " is " + d + "; it must be whole seconds, at least PT1S");
        return null;
      }
      Instant at = DEFAULT_ANCHOR;
      if (!anchor.isEmpty()) {
        try {
          at = Instant.parse(anchor);
        } catch (DateTimeParseException e) {
          problem(
              "KVMQ-010",
              source("anchor", "anchor")
                  + " is \""
                  + anchor
                  + "\", not an ISO-8601 instant such as 2026-01-01T02:30:00Z");
          return null;
        }
        if (at.getNano() != 0) {
          problem("KVMQ-010", source("anchor", "anchor") + " " + at + " is not a whole second");
          return null;
        }
      }
      try {
        return ScheduleSpec.fixedRate(d, at);
      } catch (IllegalArgumentException e) {
        problem("KVMQ-010", everySource + ": " + e.getMessage());
        return null;
      }
    }

    Object state(Type stateType, Jsonb jsonb) {
      String json = configured("state").orElse(a != null ? a.state() : "{}");
      String source =
          configured("state").isPresent() || a == null ? prefix + "state" : "@QueueSchedule(state)";
      Object state;
      try {
        // read as input: what JSON-B would change silently (2147483648 for an int) is refused
        state = new JsonbCodec<Object>(jsonb, stateType).read(json);
      } catch (RuntimeException e) { // JsonbException, or what JSON-B lets through
        String why = String.valueOf(e.getMessage());
        String fit = JsonbCodec.DOES_NOT_FIT + stateType.getTypeName() + ": ";
        problem(
            "KVMQ-011",
            source
                + " does not decode to the queue's state type "
                + stateType.getTypeName()
                + ": "
                + (why.startsWith(fit) ? why.substring(fit.length()) : why));
        return null;
      }
      if (state == null) {
        problem("KVMQ-011", source + " is null; a schedule's job needs a state");
      }
      return state;
    }

    MissedRuns missed() {
      Optional<String> kindText = configured("missed");
      MissedRuns.Kind kind;
      if (kindText.isPresent()) {
        String k = kindText.get().toUpperCase(Locale.ROOT).replace('-', '_');
        try {
          kind = MissedRuns.Kind.valueOf(k);
        } catch (IllegalArgumentException e) {
          problem(
              "KVMQ-010",
              prefix + "missed is \"" + kindText.get() + "\"; use run-once, skip or run-each");
          return null;
        }
      } else {
        kind = a != null ? a.missed() : MissedRuns.Kind.RUN_ONCE;
      }
      Optional<String> limitText = configured("missed-limit");
      int limit;
      if (limitText.isPresent()) {
        try {
          limit = Integer.parseInt(limitText.get());
        } catch (NumberFormatException e) {
          problem(
              "KVMQ-010",
              prefix + "missed-limit is \"" + limitText.get() + "\", not a whole number");
          return null;
        }
      } else {
        limit = a != null ? a.missedLimit() : 0;
      }
      String limitSource = source("missed-limit", "missedLimit");
      switch (kind) {
        case RUN_EACH -> {
          if (limit < 1 || limit > MissedRuns.MAX_LIMIT) {
            problem(
                "KVMQ-010",
                "missed run-each needs "
                    + limitSource
                    + " of 1 to "
                    + MissedRuns.MAX_LIMIT
                    + "; it is "
                    + limit);
            return null;
          }
          return MissedRuns.runEach(limit);
        }
        case SKIP, RUN_ONCE -> {
          if (limit != 0) {
            problem(
                "KVMQ-010", limitSource + " is " + limit + "; a limit is for missed run-each only");
            return null;
          }
          return kind == MissedRuns.Kind.SKIP ? MissedRuns.skip() : MissedRuns.runOnce();
        }
        default -> throw new IllegalStateException("unknown kind " + kind);
      }
    }

    Overlap overlap() {
      Optional<String> v = configured("overlap");
      if (v.isEmpty()) {
        return a != null ? a.overlap() : Overlap.ALLOW;
      }
      try {
        return Overlap.valueOf(v.get().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problem("KVMQ-010", prefix + "overlap is \"" + v.get() + "\"; use allow or skip");
        return null;
      }
    }

    Duration lateness() {
      String v = configured("lateness").orElse(a != null ? a.lateness().strip() : "PT1M");
      String source = source("lateness", "lateness");
      try {
        Duration d = Duration.parse(v);
        if (d.isZero() || d.isNegative()) {
          problem("KVMQ-010", source + " is " + v + "; it must be positive");
          return null;
        }
        return d;
      } catch (DateTimeParseException e) {
        problem("KVMQ-010", source + " is \"" + v + "\", not an ISO-8601 duration such as PT1M");
        return null;
      }
    }
  }
}
