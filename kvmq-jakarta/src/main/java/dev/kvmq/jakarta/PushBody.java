package dev.kvmq.jakarta;

import dev.kvmq.Backoff;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.UniqueKey;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The admin REST API's push body and the JSON of a job's options: the names and options of {@link
 * JobOptions} and {@link Backoff}.
 *
 * <pre>{@code
 * {"state": ...,
 *  "priority": 10,
 *  "delay": "PT5M" | "delayUntil": "2026-01-01T00:00:00Z",
 *  "repeatCount": 3 | "forever", "repeatDelay": "PT1H",
 *  "retryCount": 3,
 *  "retryBackoff": {"kind": "none"}
 *                | {"kind": "fixed", "delay": "PT10S"}
 *                | {"kind": "exponential", "initial": "PT1S", "multiplier": 2, "max": "PT1M", "jitter": 0.2},
 *  "unique": {"key": "sync-42", "scope": "waiting" | "waiting-or-running" | "period",
 *             "period": "PT10M" (scope period only), "debounce": false},
 *  "group": "customer-42",
 *  "timeout": "PT30S",
 *  "interruptOnCancel": true}
 * }</pre>
 *
 * <p>This class knows no JAX-RS: it refuses bad input with {@link Refused}, which the resource
 * answers with a 400 problem.
 *
 * <p>Durations are ISO-8601 ({@link Duration#parse}), from zero to {@link #MAX_DURATION}; {@code
 * delayUntil} is an ISO-8601 instant from year 0 to 9999. Also accepted, in whole milliseconds:
 * {@code delayMs} (for {@code delay}), {@code repeatDelayMs} (for {@code repeatDelay}) and {@code
 * retryDelayMs} (a fixed {@code retryBackoff}). Every refusal is a {@link Refused} naming the field
 * ({@code retryBackoff.multiplier} for one inside the backoff).
 */
final class PushBody {

  /** The longest duration the body accepts: 100 years (the store keeps milliseconds). */
  static final Duration MAX_DURATION = Duration.ofDays(36_525);

  private static final Instant FIRST = Instant.parse("0000-01-01T00:00:00Z");
  private static final Instant LAST = Instant.parse("9999-12-31T23:59:59.999Z");

  /** Every field of the body, in the order of {@link JobOptions}. */
  static final List<String> FIELDS =
      List.of(
          "state",
          "priority",
          "delay",
          "delayUntil",
          "repeatCount",
          "repeatDelay",
          "retryCount",
          "retryBackoff",
          "unique",
          "group",
          "timeout",
          "interruptOnCancel",
          "delayMs",
          "repeatDelayMs",
          "retryDelayMs");

  private static final Set<String> BACKOFF_KINDS =
      new TreeSet<>(List.of("none", "fixed", "exponential"));

  private PushBody() {}

  /** Bad input, naming the field (or null for the whole body); answered with a 400 problem. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The field, or null. */
    final String field;

    Refused(String field, String detail) {
      super(detail, null, false, false);
      this.field = field;
    }
  }

  static Refused refused(String field, String detail) {
    return new Refused(field, detail);
  }

  /**
   * Reads the options of a push body (every field but {@code state}, which the caller reads with
   * the queue's codec).
   *
   * @param body the push body
   * @return the options it gives, the defaults of {@link JobOptions} for the others
   * @throws Refused naming the field, for an unknown field, a value of the wrong type or out of
   *     range, or an option given twice (as {@code delay} and {@code delayMs}, or {@code delay} and
   *     {@code delayUntil})
   */
  static JobOptions options(JsonObject body) {
    for (String field : body.keySet()) {
      if (!FIELDS.contains(field)) {
        throw refused(field, "unknown field \"" + field + "\"; the fields are " + FIELDS);
      }
    }
    oneOf(body, "delay", "delayUntil", "delayMs");
    oneOf(body, "repeatDelay", "repeatDelayMs");
    oneOf(body, "retryBackoff", "retryDelayMs");
    JobOptions o = JobOptions.defaults();
    if (body.containsKey("priority")) {
      o = o.priority(number(body.get("priority"), "priority"));
    }
    if (body.containsKey("delay")) {
      o = o.delay(duration(body.get("delay"), "delay"));
    } else if (body.containsKey("delayMs")) {
      o = o.delay(millis(body.get("delayMs"), "delayMs"));
    } else if (body.containsKey("delayUntil")) {
      o = o.delayUntil(instant(body.get("delayUntil"), "delayUntil"));
    }
    long repeats = 0;
    if (body.containsKey("repeatCount")) {
      JsonValue v = body.get("repeatCount");
      repeats =
          v instanceof JsonString s && s.getString().equals("forever")
              ? JobOptions.REPEAT_FOREVER
              : count(v, "repeatCount", Long.MAX_VALUE, "a whole number from 0, or \"forever\"");
    }
    Duration repeatDelay = Duration.ZERO;
    if (body.containsKey("repeatDelay")) {
      repeatDelay = duration(body.get("repeatDelay"), "repeatDelay");
    } else if (body.containsKey("repeatDelayMs")) {
      repeatDelay = millis(body.get("repeatDelayMs"), "repeatDelayMs");
    }
    o = o.repeat(repeats, repeatDelay);
    int retries =
        body.containsKey("retryCount")
            ? (int) count(body.get("retryCount"), "retryCount", Integer.MAX_VALUE, null)
            : 0;
    Backoff backoff = Backoff.NONE;
    if (body.containsKey("retryBackoff")) {
      backoff = backoff(body.get("retryBackoff"));
    } else if (body.containsKey("retryDelayMs")) {
      backoff = Backoff.fixed(millis(body.get("retryDelayMs"), "retryDelayMs"));
    }
    o = o.retry(retries, backoff);
    if (body.containsKey("unique")) {
      o = unique(o, body.get("unique"));
    }
    if (body.containsKey("group")) {
      o = group(o, body.get("group"));
    }
    if (body.containsKey("timeout")) {
      o = o.timeout(timeout(body.get("timeout")));
    }
    if (body.containsKey("interruptOnCancel")) {
      o = o.interruptOnCancel(bool(body.get("interruptOnCancel"), "interruptOnCancel"));
    }
    return o;
  }

  /** The scopes of a unique key, by their names in the body. */
  private static final List<String> SCOPES = List.of("waiting", "waiting-or-running", "period");

  /**
   * The job's unique key: {@code {"key", "scope", "period"?, "debounce"?}}.
   *
   * @throws Refused naming {@code unique} or the field inside it
   */
  private static JobOptions unique(JobOptions o, JsonValue v) {
    if (!(v instanceof JsonObject u)) {
      throw refused(
          "unique",
          "unique must be an object such as {\"key\": \"sync-42\", \"scope\": \"waiting\"}");
    }
    List<String> fields = List.of("key", "scope", "period", "debounce");
    for (String f : u.keySet()) {
      if (!fields.contains(f)) {
        throw refused(
            "unique." + f, "unknown field \"unique." + f + "\"; its fields are " + fields);
      }
    }
    if (!(u.get("key") instanceof JsonString key)) {
      throw refused(
          "unique.key",
          "unique.key is required: a string of 1 to " + UniqueKey.MAX_KEY_LENGTH + " characters");
    }
    if (!(u.get("scope") instanceof JsonString scope) || !SCOPES.contains(scope.getString())) {
      throw refused("unique.scope", "unique.scope is required: one of " + SCOPES);
    }
    UniqueKey.Scope s =
        UniqueKey.Scope.valueOf(scope.getString().toUpperCase(Locale.ROOT).replace('-', '_'));
    Duration period = Duration.ZERO;
    if (s == UniqueKey.Scope.PERIOD) {
      if (!u.containsKey("period")) {
        throw refused("unique.period", "unique.period is required with the scope period");
      }
      period = duration(u.get("period"), "unique.period");
    } else if (u.containsKey("period")) {
      throw refused(
          "unique.period", "unique.period is for the scope period, not " + scope.getString());
    }
    boolean debounce = false;
    if (u.containsKey("debounce")) {
      JsonValue d = u.get("debounce");
      if (d.getValueType() != JsonValue.ValueType.TRUE
          && d.getValueType() != JsonValue.ValueType.FALSE) {
        throw refused("unique.debounce", "unique.debounce must be true or false");
      }
      debounce = d.getValueType() == JsonValue.ValueType.TRUE;
    }
    UniqueKey k;
    try {
      k = new UniqueKey(key.getString(), s, period, debounce);
    } catch (IllegalArgumentException e) {
      String field = e.getMessage().startsWith("the period") ? "unique.period" : "unique.key";
      throw refused(field, field + ": " + e.getMessage());
    }
    try {
      return o.unique(k);
    } catch (IllegalArgumentException e) { // with repeats
      throw refused("unique", "unique: " + e.getMessage());
    }
  }

  /** The job's group: a string the kernel takes as a group name. */
  private static JobOptions group(JobOptions o, JsonValue v) {
    if (!(v instanceof JsonString s)) {
      throw refused(
          "group", "group must be a string of 1 to " + JobOptions.MAX_GROUP_LENGTH + " characters");
    }
    try {
      return o.group(s.getString());
    } catch (IllegalArgumentException e) {
      throw refused("group", "group: " + e.getMessage());
    }
  }

  /** The job's own timeout: an ISO-8601 duration of 1 ms to {@link JobOptions#MAX_TIMEOUT}. */
  private static Duration timeout(JsonValue v) {
    String expected =
        "timeout must be an ISO-8601 duration from PT0.001S to "
            + JobOptions.MAX_TIMEOUT
            + ", such as \"PT30S\"";
    if (!(v instanceof JsonString s)) {
      throw refused("timeout", expected);
    }
    Duration d;
    try {
      d = Duration.parse(s.getString());
    } catch (DateTimeParseException e) {
      throw refused("timeout", expected);
    }
    if (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(JobOptions.MAX_TIMEOUT) > 0) {
      throw refused("timeout", expected);
    }
    return d;
  }

  /** A JSON {@code true} or {@code false}. */
  private static boolean bool(JsonValue v, String field) {
    if (v.getValueType() == JsonValue.ValueType.TRUE) {
      return true;
    }
    if (v.getValueType() == JsonValue.ValueType.FALSE) {
      return false;
    }
    throw refused(field, field + " must be true or false");
  }

  /**
   * A backoff as JSON, in the form the push body takes.
   *
   * @param b the backoff
   * @return {@code {"kind": "none"}}, {@code {"kind": "fixed", "delay"}} or {@code {"kind":
   *     "exponential", "initial", "multiplier", "max", "jitter"}}
   */
  static JsonObject backoffJson(Backoff b) {
    JsonObjectBuilder o = Json.createObjectBuilder();
    if (b.equals(Backoff.NONE)) {
      return o.add("kind", "none").build();
    }
    if (b.multiplier() == 1 && b.jitter() == 0 && b.initial().equals(b.max())) {
      return o.add("kind", "fixed").add("delay", b.initial().toString()).build();
    }
    return o.add("kind", "exponential")
        .add("initial", b.initial().toString())
        .add("multiplier", b.multiplier())
        .add("max", b.max().toString())
        .add("jitter", b.jitter())
        .build();
  }

  /**
   * A job's options and progress as JSON fields: {@code priority, delayUntil, lockUntil,
   * repeatCount, repeatDelay, retryCount, retriesLeft, retryBackoff, attempt, createdAt, unique?,
   * holdsUniqueKey?, group?}: {@code unique} ({@code {key, scope, period?, debounce}}, as the push
   * body gives it) and {@code holdsUniqueKey} only for a job with a unique key, {@code group} only
   * for a job of a group.
   *
   * @param j the job
   * @param b where to add them
   */
  static void addOptions(Job<?> j, JsonObjectBuilder b) {
    b.add("priority", j.priority());
    b.add("delayUntil", j.delayUntil().toString());
    if (j.leaseUntil().isPresent()) {
      b.add("lockUntil", j.leaseUntil().get().toString());
    } else {
      b.addNull("lockUntil");
    }
    if (j.repeatCount() == JobOptions.REPEAT_FOREVER) {
      b.add("repeatCount", "forever");
    } else {
      b.add("repeatCount", j.repeatCount());
    }
    b.add("repeatDelay", j.repeatDelay().toString())
        .add("retryCount", j.retryLimit())
        .add("retriesLeft", j.retriesLeft())
        .add("retryBackoff", backoffJson(j.retryBackoff()))
        .add("attempt", j.attempt())
        .add("createdAt", j.createdAt().toString());
    j.unique()
        .ifPresent(
            u -> {
              b.add("unique", uniqueJson(u));
              b.add("holdsUniqueKey", j.holdsUniqueKey());
            });
    j.group().ifPresent(g -> b.add("group", g));
  }

  /**
   * A unique key as JSON, in the form the push body takes.
   *
   * @param u the key
   * @return {@code {key, scope, period?, debounce}}, {@code period} for the scope {@code period}
   */
  static JsonObject uniqueJson(UniqueKey u) {
    JsonObjectBuilder o =
        Json.createObjectBuilder()
            .add("key", u.key())
            .add("scope", u.scope().name().toLowerCase(Locale.ROOT).replace('_', '-'));
    if (u.scope() == UniqueKey.Scope.PERIOD) {
      o.add("period", u.period().toString());
    }
    return o.add("debounce", u.debounced()).build();
  }

  // ---- fields

  private static void oneOf(JsonObject body, String... fields) {
    String first = null;
    for (String f : fields) {
      if (body.containsKey(f)) {
        if (first != null) {
          throw refused(f, "give " + first + " or " + f + ", not both");
        }
        first = f;
      }
    }
  }

  private static Backoff backoff(JsonValue v) {
    if (!(v instanceof JsonObject o)) {
      throw refused(
          "retryBackoff",
          "retryBackoff must be an object such as {\"kind\": \"fixed\", "
              + "\"delay\": \"PT10S\"}");
    }
    if (!(o.get("kind") instanceof JsonString k) || !BACKOFF_KINDS.contains(k.getString())) {
      throw refused("retryBackoff.kind", "retryBackoff.kind must be one of " + BACKOFF_KINDS);
    }
    String kind = k.getString();
    List<String> fields =
        switch (kind) {
          case "none" -> List.of("kind");
          case "fixed" -> List.of("kind", "delay");
          default -> List.of("kind", "initial", "multiplier", "max", "jitter");
        };
    for (String f : o.keySet()) {
      if (!fields.contains(f)) {
        throw refused(
            "retryBackoff." + f,
            "unknown field \"retryBackoff."
                + f
                + "\" in a "
                + kind
                + " retryBackoff; its fields are "
                + fields);
      }
    }
    switch (kind) {
      case "none":
        return Backoff.NONE;
      case "fixed":
        return Backoff.fixed(duration(required(o, "delay"), "retryBackoff.delay"));
      default:
        Duration initial = duration(required(o, "initial"), "retryBackoff.initial");
        double multiplier = number(required(o, "multiplier"), "retryBackoff.multiplier");
        if (multiplier < 1) {
          throw refused("retryBackoff.multiplier", "retryBackoff.multiplier must be at least 1");
        }
        Duration max = duration(required(o, "max"), "retryBackoff.max");
        if (max.compareTo(initial) < 0) {
          throw refused(
              "retryBackoff.max", "retryBackoff.max must not be less than retryBackoff.initial");
        }
        double jitter =
            o.containsKey("jitter") ? number(o.get("jitter"), "retryBackoff.jitter") : 0;
        if (!(jitter >= 0 && jitter <= 1)) {
          throw refused("retryBackoff.jitter", "retryBackoff.jitter must be from 0 to 1");
        }
        return Backoff.exponential(initial, multiplier, max, jitter);
    }
  }

  private static JsonValue required(JsonObject o, String field) {
    JsonValue v = o.get(field);
    if (v == null) {
      throw refused("retryBackoff." + field, "retryBackoff." + field + " is required");
    }
    return v;
  }

  /** A finite number. */
  static double number(JsonValue v, String field) {
    if (!(v instanceof JsonNumber n)) {
      throw refused(field, field + " must be a number");
    }
    double d;
    try {
      d = n.doubleValue();
    } catch (RuntimeException e) { // Parsson refuses numbers with a very large scale
      d = Double.NaN;
    }
    if (!Double.isFinite(d)) {
      throw refused(field, field + " must be a finite number");
    }
    return d;
  }

  /** A whole number from 0 to max. */
  static long count(JsonValue v, String field, long max, String what) {
    String expected = what != null ? what : "a whole number from 0 to " + max;
    if (!(v instanceof JsonNumber n)) {
      throw refused(field, field + " must be " + expected);
    }
    long l;
    try {
      l = n.longValueExact(); // refuses fractions and overflow, also in exponent notation
    } catch (RuntimeException e) {
      throw refused(field, field + " must be " + expected);
    }
    if (l < 0 || l > max) {
      throw refused(field, field + " must be " + expected);
    }
    return l;
  }

  private static Duration millis(JsonValue v, String field) {
    long ms =
        count(
            v,
            field,
            MAX_DURATION.toMillis(),
            "a whole number of milliseconds from 0 to " + MAX_DURATION.toMillis());
    return Duration.ofMillis(ms);
  }

  private static Duration duration(JsonValue v, String field) {
    String expected =
        field
            + " must be an ISO-8601 duration from PT0S to "
            + MAX_DURATION
            + ", such as \"PT10S\"";
    if (!(v instanceof JsonString s)) {
      throw refused(field, expected);
    }
    Duration d;
    try {
      d = Duration.parse(s.getString());
    } catch (DateTimeParseException e) {
      throw refused(field, expected);
    }
    if (d.isNegative() || d.compareTo(MAX_DURATION) > 0) {
      throw refused(field, expected);
    }
    return d;
  }

  private static Instant instant(JsonValue v, String field) {
    String expected =
        field
            + " must be an ISO-8601 instant from year 0 to 9999, such as \"2026-01-01T00:00:00Z\"";
    if (!(v instanceof JsonString s)) {
      throw refused(field, expected);
    }
    Instant i;
    try {
      i = Instant.parse(s.getString());
    } catch (DateTimeParseException e) {
      throw refused(field, expected);
    }
    if (i.isBefore(FIRST) || i.isAfter(LAST)) {
      throw refused(field, expected);
    }
    return i;
  }
}
