package dev.kvmq.jakarta;

import dev.kvmq.Backoff;
import dev.kvmq.JobOptions;
import dev.kvmq.WorkerOptions;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A queue's settings in this application: its worker's options, the default options of a job pushed
 * without options of its own, and whether its JSON-B codec ignores unknown properties. Each comes
 * from configuration ({@code kvmq.queue.NAME.*}) if set there, else from the queue's {@link
 * QueueHandler} if this application has one, else kvmq's default.
 *
 * @param worker the worker's options
 * @param jobDefaults the options of a push that gives none
 * @param ignoreUnknownProperties whether the codec reads JSON with properties its type lacks
 * @param threads the managed thread factory the queue's handlers run on, if it names one; else they
 *     run on kvmq's pool
 * @param control the queue's timeout, non-retryable exception types and retention
 */
record QueueSettings(
    WorkerOptions worker,
    JobOptions jobDefaults,
    boolean ignoreUnknownProperties,
    Optional<QueueThreads> threads,
    QueueControl control) {

  /** The cap of a growing backoff that has none: long enough never to be reached. */
  private static final Duration NO_CAP = Duration.ofDays(365L * 100);

  /** The settings that {@code kvmq.queue.NAME.*} may give, as the ends of their keys. */
  static final List<String> KEYS =
      Stream.concat(
              Stream.of(
                  "concurrency",
                  "prefetch",
                  "handoff",
                  "lease",
                  "renew-every",
                  "poll-every",
                  "priority",
                  "retries",
                  "retry-delay",
                  "retry-multiplier",
                  "retry-max-delay",
                  "retry-jitter",
                  "ignore-unknown-properties",
                  TransactionPush.KEY,
                  "thread-factory",
                  TransactionPush.HELD_TIMEOUT_KEY,
                  FlowLimits.GROUP_LIMIT_KEY,
                  FlowLimits.RATE_LIMIT_KEY,
                  FlowLimits.GROUP_RATE_LIMIT_KEY),
              QueueControl.KEYS.stream())
          .toList();

  /** The settings of a queue without configuration or handler. */
  static final QueueSettings DEFAULTS =
      new QueueSettings(
          WorkerOptions.defaults(),
          JobOptions.defaults(),
          false,
          Optional.empty(),
          QueueControl.DEFAULTS);

  /**
   * A setting that can't be used; the message names where the value came from. The worker's and the
   * default job options' problems are KVMQ-004; the control settings' have codes of their own
   * ({@link #coded}).
   */
  static final class BadSettings extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The KVMQ-004 problems. */
    final transient List<String> problems;

    /** The problems with codes of their own (KVMQ-017 to KVMQ-019). */
    final transient List<QueueControl.Coded> coded;

    BadSettings(List<String> problems) {
      this(problems, List.of());
    }

    BadSettings(List<String> problems, List<QueueControl.Coded> coded) {
      super(
          String.join(
              "; ",
              Stream.concat(problems.stream(), coded.stream().map(c -> c.code() + ": " + c.text()))
                  .toList()));
      this.problems = List.copyOf(problems);
      this.coded = List.copyOf(coded);
    }
  }

  /**
   * Reads a queue's settings.
   *
   * @param queue the queue's name
   * @param handler its handler's annotation, or null if this application has none
   * @param config the configuration
   * @return the settings
   * @throws BadSettings listing every bad value, each with its source (the configuration key or the
   *     annotation's attribute)
   */
  static QueueSettings of(String queue, QueueHandler handler, KvmqConfig config) {
    Reader r = new Reader(queue, handler, config);
    int concurrency =
        r.whole(
            "concurrency", "concurrency", handler != null ? handler.concurrency() : 1, 0, 10_000);
    int prefetch =
        r.whole("prefetch", "prefetch", handler != null ? handler.prefetch() : 0, 0, 10_000);
    boolean handoff = r.bool("handoff", "handoff", handler != null && handler.handoff());
    Duration lease = r.duration("lease", "lease", handler != null ? handler.lease() : "PT5S", true);
    Duration renew =
        r.duration(
            "renew-every", "renewEvery", handler != null ? handler.renewEvery() : "PT2S", true);
    Duration poll =
        r.duration("poll-every", "pollEvery", handler != null ? handler.pollEvery() : "PT3S", true);
    if (lease != null && renew != null && renew.compareTo(lease) >= 0) {
      r.problems.add(
          r.source("renew-every", "renewEvery")
              + " "
              + renew
              + " must be shorter than "
              + r.source("lease", "lease")
              + " "
              + lease);
    }
    double priority =
        r.number(
            "priority", "priority", handler != null ? handler.priority() : 0, -Double.MAX_VALUE);
    int retries =
        r.whole(
            "retries", "retries", handler != null ? handler.retries() : 0, 0, Integer.MAX_VALUE);
    Duration delay =
        r.duration(
            "retry-delay", "retryDelay", handler != null ? handler.retryDelay() : "PT0S", false);
    double multiplier =
        r.number(
            "retry-multiplier",
            "retryMultiplier",
            handler != null ? handler.retryMultiplier() : 1,
            1);
    String maxText = r.text("retry-max-delay", handler != null ? handler.retryMaxDelay() : "");
    Duration max =
        maxText.isEmpty() ? null : r.duration("retry-max-delay", "retryMaxDelay", maxText, false);
    double jitter =
        r.number("retry-jitter", "retryJitter", handler != null ? handler.retryJitter() : 0, 0);
    if (jitter > 1) {
      r.problems.add(
          r.source("retry-jitter", "retryJitter") + " is " + jitter + "; it must be 0 to 1");
    }
    if (delay != null && max != null && max.compareTo(delay) < 0) {
      r.problems.add(
          r.source("retry-max-delay", "retryMaxDelay")
              + " "
              + max
              + " is shorter than "
              + r.source("retry-delay", "retryDelay")
              + " "
              + delay);
    }
    boolean ignoreUnknown =
        r.bool(
            "ignore-unknown-properties",
            "ignoreUnknownProperties",
            handler != null && handler.ignoreUnknownProperties());
    Optional<QueueThreads> threads = r.threads(handler != null ? handler.threadFactory() : "");
    List<QueueControl.Coded> coded = new ArrayList<>();
    QueueControl control = QueueControl.of(queue, handler, config, coded);
    if (!r.problems.isEmpty() || !coded.isEmpty()) {
      throw new BadSettings(r.problems, coded);
    }
    Duration cap = max != null ? max : multiplier == 1 ? delay : NO_CAP;
    try {
      return new QueueSettings(
          new WorkerOptions(concurrency, lease, renew, poll, prefetch, handoff),
          JobOptions.defaults()
              .priority(priority)
              .retry(
                  retries,
                  retries == 0 && delay.isZero()
                      ? Backoff.NONE
                      : new Backoff(delay, multiplier, cap, jitter)),
          ignoreUnknown,
          threads,
          control);
    } catch (IllegalArgumentException e) {
      throw new BadSettings(List.of(e.getMessage()));
    }
  }

  /** Reads values, naming their source in every problem. */
  private static final class Reader {
    final String prefix;
    final QueueHandler handler;
    final KvmqConfig config;
    final List<String> problems = new ArrayList<>();

    Reader(String queue, QueueHandler handler, KvmqConfig config) {
      this.prefix = "kvmq.queue." + queue + ".";
      this.handler = handler;
      this.config = config;
    }

    /** The configuration key if it is set, else the annotation's attribute, else kvmq's default. */
    String source(String key, String attribute) {
      if (config.get(prefix + key).isPresent()) {
        return prefix + key;
      }
      return handler != null ? "@QueueHandler(" + attribute + ")" : "the default " + attribute;
    }

    String text(String key, String annotated) {
      return config.get(prefix + key).map(String::strip).orElse(annotated);
    }

    int whole(String key, String attribute, int annotated, int min, int max) {
      Optional<String> v = config.get(prefix + key);
      long value;
      if (v.isPresent()) {
        try {
          value = Long.parseLong(v.get().strip());
        } catch (NumberFormatException e) {
          problems.add(prefix + key + " is \"" + v.get() + "\", not a whole number");
          return min;
        }
      } else {
        value = annotated;
      }
      if (value < min || value > max) {
        problems.add(
            source(key, attribute) + " is " + value + "; it must be " + min + " to " + max);
        return min;
      }
      return (int) value;
    }

    double number(String key, String attribute, double annotated, double min) {
      Optional<String> v = config.get(prefix + key);
      double value;
      if (v.isPresent()) {
        try {
          value = Double.parseDouble(v.get().strip());
        } catch (NumberFormatException e) {
          problems.add(prefix + key + " is \"" + v.get() + "\", not a number");
          return Math.max(min, 0);
        }
      } else {
        value = annotated;
      }
      if (!Double.isFinite(value) || value < min) {
        problems.add(
            source(key, attribute)
                + " is "
                + value
                + "; it must be a finite number"
                + (min > -Double.MAX_VALUE ? " of at least " + min : ""));
        return Math.max(min, 0);
      }
      return value;
    }

    Duration duration(String key, String attribute, String annotated, boolean positive) {
      String v = text(key, annotated);
      try {
        Duration d = Duration.parse(v);
        if (d.isNegative() || (positive && d.isZero())) {
          problems.add(
              source(key, attribute)
                  + " is "
                  + v
                  + "; it must be "
                  + (positive ? "positive" : "0 or more"));
          return null;
        }
        return d;
      } catch (DateTimeParseException e) {
        problems.add(
            source(key, attribute) + " is \"" + v + "\", not an ISO-8601 duration such as PT30S");
        return null;
      }
    }

    /** The thread factory's JNDI name, if one is given (an empty one is none). */
    Optional<QueueThreads> threads(String annotated) {
      String name = text("thread-factory", annotated.strip());
      if (name.isEmpty()) {
        return Optional.empty();
      }
      String source = source("thread-factory", "threadFactory");
      String problem = QueueThreads.problem(name);
      if (problem != null) {
        problems.add(source + " " + problem);
        return Optional.empty();
      }
      return Optional.of(new QueueThreads(name, source));
    }

    boolean bool(String key, String attribute, boolean annotated) {
      Optional<String> v = config.get(prefix + key);
      if (v.isEmpty()) {
        return annotated;
      }
      String s = v.get().strip().toLowerCase(Locale.ROOT);
      if (!s.equals("true") && !s.equals("false")) {
        problems.add(prefix + key + " is \"" + v.get() + "\"; use true or false");
        return annotated;
      }
      return s.equals("true");
    }
  }
}
