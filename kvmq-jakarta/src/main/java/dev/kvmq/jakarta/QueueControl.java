package dev.kvmq.jakarta;

import dev.kvmq.JobOptions;
import dev.kvmq.Retention;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A queue's job control and history settings in this application (docs/jakarta.md,
 * "Configuration"): the default timeout of a run, the exception types that fail a job for good, and
 * how long the jobs that ended are kept. Each comes from configuration ({@code
 * kvmq.queue.NAME.timeout}, {@code .non-retryable}, {@code .keep-completed}, {@code
 * .keep-cancelled}, {@code .keep-dead}) if set there, else from the queue's {@link QueueHandler},
 * else kvmq's default (no timeout, none, {@link Retention#defaults()}).
 *
 * @param timeout the default timeout of a run (a job's own comes first), or empty for none
 * @param nonRetryable the exception types that make a job a dead letter at once
 * @param retention how long completed, cancelled and dead jobs are kept
 */
record QueueControl(
    Optional<Duration> timeout, Set<Class<? extends Throwable>> nonRetryable, Retention retention) {

  /** The settings of a queue without configuration or handler. */
  static final QueueControl DEFAULTS =
      new QueueControl(Optional.empty(), Set.of(), Retention.defaults());

  /** Timeout problems. */
  static final String BAD_TIMEOUT = "KVMQ-017";

  /** Non-retryable exception type problems. */
  static final String BAD_NON_RETRYABLE = "KVMQ-018";

  /** Retention problems. */
  static final String BAD_RETENTION = "KVMQ-019";

  static final String TIMEOUT_KEY = "timeout";
  static final String NON_RETRYABLE_KEY = "non-retryable";
  static final String KEEP_COMPLETED_KEY = "keep-completed";
  static final String KEEP_CANCELLED_KEY = "keep-cancelled";
  static final String KEEP_DEAD_KEY = "keep-dead";

  /** The settings that {@code kvmq.queue.NAME.*} may give here, as the ends of their keys. */
  static final List<String> KEYS =
      List.of(
          TIMEOUT_KEY, NON_RETRYABLE_KEY, KEEP_COMPLETED_KEY, KEEP_CANCELLED_KEY, KEEP_DEAD_KEY);

  QueueControl {
    nonRetryable = Set.copyOf(nonRetryable);
  }

  /** A problem with its code: {@link #BAD_TIMEOUT}, {@link #BAD_NON_RETRYABLE}, ... */
  record Coded(String code, String text) {}

  /**
   * Reads a queue's control settings.
   *
   * @param queue the queue's name
   * @param handler its handler's annotation, or null if this application has none
   * @param config the configuration
   * @param problems where each bad value is added, with its code and source
   * @return the settings (with defaults in place of the bad values)
   */
  static QueueControl of(
      String queue, QueueHandler handler, KvmqConfig config, List<Coded> problems) {
    String prefix = "kvmq.queue." + queue + ".";
    Source s = new Source(prefix, handler, config);
    Optional<Duration> timeout = timeout(s, handler != null ? handler.timeout() : "", problems);
    Set<Class<? extends Throwable>> nonRetryable =
        nonRetryable(s, handler != null ? List.of(handler.nonRetryable()) : List.of(), problems);
    Retention d = Retention.defaults();
    Retention retention =
        new Retention(
            keep(
                s,
                KEEP_COMPLETED_KEY,
                "keepCompleted",
                handler != null ? handler.keepCompleted() : "",
                d.completed(),
                problems),
            keep(
                s,
                KEEP_DEAD_KEY,
                "keepDead",
                handler != null ? handler.keepDead() : "",
                d.dead(),
                problems),
            keep(
                s,
                KEEP_CANCELLED_KEY,
                "keepCancelled",
                handler != null ? handler.keepCancelled() : "",
                d.cancelled(),
                problems));
    return new QueueControl(timeout, nonRetryable, retention);
  }

  /** Where a value comes from: the configuration key if set, else the annotation's attribute. */
  private record Source(String prefix, QueueHandler handler, KvmqConfig config) {
    Optional<String> configured(String key) {
      return config.get(prefix + key);
    }

    String name(String key, String attribute) {
      if (configured(key).isPresent()) {
        return prefix + key;
      }
      return handler != null ? "@QueueHandler(" + attribute + ")" : "the default " + attribute;
    }
  }

  private static Optional<Duration> timeout(Source s, String annotated, List<Coded> problems) {
    String v = s.configured(TIMEOUT_KEY).map(String::strip).orElse(annotated.strip());
    if (v.isEmpty()) {
      return Optional.empty();
    }
    String source = s.name(TIMEOUT_KEY, "timeout");
    Duration d;
    try {
      d = Duration.parse(v);
    } catch (DateTimeParseException e) {
      problems.add(
          new Coded(
              BAD_TIMEOUT,
              source + " is \"" + v + "\", not an ISO-8601 duration such as PT30S (empty: none)"));
      return Optional.empty();
    }
    if (d.toMillis() < 1 || d.compareTo(JobOptions.MAX_TIMEOUT) > 0) {
      problems.add(
          new Coded(
              BAD_TIMEOUT,
              source
                  + " is "
                  + v
                  + "; a timeout is at least 1 ms and at most "
                  + JobOptions.MAX_TIMEOUT
                  + " (empty: none)"));
      return Optional.empty();
    }
    return Optional.of(d);
  }

  private static Set<Class<? extends Throwable>> nonRetryable(
      Source s, List<Class<? extends Throwable>> annotated, List<Coded> problems) {
    Optional<String> configured = s.configured(NON_RETRYABLE_KEY);
    if (configured.isEmpty()) {
      return new LinkedHashSet<>(annotated);
    }
    String source = s.prefix() + NON_RETRYABLE_KEY;
    Set<Class<? extends Throwable>> types = new LinkedHashSet<>();
    String v = configured.get().strip();
    if (v.isEmpty()) {
      return types; // set to nothing: none, whatever the annotation says
    }
    for (String part : v.split(",", -1)) {
      String name = part.strip();
      if (name.isEmpty()) {
        problems.add(
            new Coded(
                BAD_NON_RETRYABLE,
                source
                    + " is \""
                    + v
                    + "\", with an empty entry; give fully qualified exception class names"
                    + " separated by commas"));
        continue;
      }
      Class<?> c;
      try {
        c = Class.forName(name, false, loader());
      } catch (ClassNotFoundException | LinkageError e) {
        problems.add(
            new Coded(
                BAD_NON_RETRYABLE,
                source
                    + " names "
                    + name
                    + ", a class that the application can't load; give fully qualified names"));
        continue;
      }
      if (!Throwable.class.isAssignableFrom(c)) {
        problems.add(
            new Coded(
                BAD_NON_RETRYABLE,
                source + " names " + name + ", which is not an exception (a Throwable)"));
        continue;
      }
      types.add(c.asSubclass(Throwable.class));
    }
    return types;
  }

  private static ClassLoader loader() {
    ClassLoader l = Thread.currentThread().getContextClassLoader();
    return l != null ? l : QueueControl.class.getClassLoader();
  }

  /**
   * Reads one status's retention: empty for kvmq's default, {@code none}, {@code unlimited}, an
   * ISO-8601 age ({@code P7D}), a count ({@code 10000}), or an age and a count separated by a comma
   * ({@code P7D,10000}: what is past either limit is pruned).
   */
  private static Retention.Keep keep(
      Source s,
      String key,
      String attribute,
      String annotated,
      Retention.Keep otherwise,
      List<Coded> problems) {
    String v = s.configured(key).map(String::strip).orElse(annotated.strip());
    if (v.isEmpty()) {
      return otherwise;
    }
    String source = s.name(key, attribute);
    String lower = v.toLowerCase(Locale.ROOT);
    if (lower.equals("none")) {
      return Retention.Keep.none();
    }
    if (lower.equals("unlimited")) {
      return Retention.Keep.unlimited();
    }
    String[] parts = v.split(",", -1);
    Optional<Duration> age = Optional.empty();
    OptionalLong count = OptionalLong.empty();
    List<String> bad = new ArrayList<>();
    if (parts.length > 2) {
      bad.add("more than an age and a count");
    }
    for (String raw : parts) {
      String part = raw.strip();
      if (!part.isEmpty() && Character.isDigit(part.charAt(0))) {
        try {
          long n = Long.parseLong(part);
          if (count.isPresent()) {
            bad.add("two counts");
          }
          count = OptionalLong.of(n);
        } catch (NumberFormatException e) {
          bad.add("\"" + part + "\" is not a whole number");
        }
        continue;
      }
      try {
        Duration d = Duration.parse(part);
        if (d.isNegative() || !d.equals(Duration.ofMillis(d.toMillis()))) {
          bad.add(part + " is not a whole number of milliseconds, 0 or more");
        } else if (age.isPresent()) {
          bad.add("two ages");
        } else {
          age = Optional.of(d);
        }
      } catch (DateTimeParseException | ArithmeticException e) {
        bad.add("\"" + part + "\" is neither an ISO-8601 duration (P7D) nor a count (10000)");
      }
    }
    if (!bad.isEmpty()) {
      problems.add(
          new Coded(
              BAD_RETENTION,
              source
                  + " is \""
                  + v
                  + "\": "
                  + String.join(", ", bad)
                  + "; use none, unlimited, an ISO-8601 age (P7D), a count (10000), or both"
                  + " (P7D,10000)"));
      return otherwise;
    }
    return new Retention.Keep(age, count);
  }
}
