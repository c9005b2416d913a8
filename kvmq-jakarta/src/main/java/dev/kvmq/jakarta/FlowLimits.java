package dev.kvmq.jakarta;

import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.RateLimit;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A queue's flow-control limits from configuration (docs/flow-control.md, "Groups" and "Rate
 * limits"):
 *
 * <ul>
 *   <li>{@code kvmq.queue.NAME.group-limit}: how many jobs of one group run at once, across every
 *       node, for every group without a limit of its own; a whole number from 0, or {@code
 *       unlimited} (the default);
 *   <li>{@code kvmq.queue.NAME.group.GROUP.limit}: the limit of one group, in place of the default;
 *   <li>{@code kvmq.queue.NAME.rate-limit}: at most N job starts of the queue per period across
 *       every node, written {@code N/PERIOD} with an ISO-8601 period ({@code 100/PT1M});
 *   <li>{@code kvmq.queue.NAME.group-rate-limit}: at most N job starts of one group per period, for
 *       every group without a rate limit of its own, in the same syntax;
 *   <li>{@code kvmq.queue.NAME.group.GROUP.rate-limit}: the rate limit of one group, in place of
 *       the default.
 * </ul>
 *
 * <p>Every problem is a coded message naming the key: KVMQ-020 for a group limit and for a group
 * key (a group name the kernel refuses, a group key that names no property), KVMQ-021 for a bad
 * rate limit of the queue or of a group.
 *
 * @param groupLimit the default limit of every group ({@link Queue#UNLIMITED} for none)
 * @param groupLimits the limits of single groups, by group
 * @param rateLimit the queue's rate limit, or null for none
 * @param groupRateLimit the default rate limit of every group, or null for none
 * @param groupRateLimits the rate limits of single groups, by group
 */
record FlowLimits(
    int groupLimit,
    Map<String, Integer> groupLimits,
    RateLimit rateLimit,
    RateLimit groupRateLimit,
    Map<String, RateLimit> groupRateLimits) {

  /** The end of the key of the default group limit. */
  static final String GROUP_LIMIT_KEY = "group-limit";

  /** The end of the key of the queue's rate limit. */
  static final String RATE_LIMIT_KEY = "rate-limit";

  /** The end of the key of the default rate limit of every group. */
  static final String GROUP_RATE_LIMIT_KEY = "group-rate-limit";

  /** What follows a queue's name in the key of one group's setting. */
  static final String GROUP_INFIX = ".group.";

  /** The properties a group's key may end with. */
  static final List<String> GROUP_KEYS = List.of("limit", "rate-limit");

  /** No limit at all. */
  static final FlowLimits NONE = new FlowLimits(Queue.UNLIMITED, Map.of(), null);

  FlowLimits {
    groupLimits = Collections.unmodifiableMap(new TreeMap<>(groupLimits));
    groupRateLimits = Collections.unmodifiableMap(new TreeMap<>(groupRateLimits));
  }

  /** Limits with no rate limit of any group. */
  FlowLimits(int groupLimit, Map<String, Integer> groupLimits, RateLimit rateLimit) {
    this(groupLimit, groupLimits, rateLimit, null, Map.of());
  }

  /**
   * Reads a queue's limits.
   *
   * @param queue the queue's name
   * @param config the configuration
   * @return the limits; {@link #NONE} when none is configured
   * @throws IllegalArgumentException listing every bad value, each with its key
   */
  static FlowLimits of(String queue, KvmqConfig config) {
    List<String> problems = new ArrayList<>();
    FlowLimits limits = read(queue, config, problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return limits;
  }

  /**
   * Checks the limits of every queue that has a flow-control key set (in MicroProfile Config or as
   * a system property).
   *
   * @param config the configuration
   * @return KVMQ-020 and KVMQ-021 problems
   */
  static List<String> check(KvmqConfig config) {
    TreeSet<String> queues = new TreeSet<>();
    for (String key : config.keysStartingWith("kvmq.queue.")) {
      String rest = key.substring("kvmq.queue.".length());
      int at = rest.indexOf(GROUP_INFIX);
      if (at > 0) {
        queues.add(rest.substring(0, at));
      } else if (rest.endsWith("." + GROUP_LIMIT_KEY)
          || rest.endsWith("." + RATE_LIMIT_KEY)
          || rest.endsWith("." + GROUP_RATE_LIMIT_KEY)) {
        queues.add(rest.substring(0, rest.lastIndexOf('.')));
      }
    }
    List<String> problems = new ArrayList<>();
    for (String queue : queues) {
      read(queue, config, problems);
    }
    return problems;
  }

  /**
   * Applies the limits to a queue's builder.
   *
   * @param <S> the queue's state type
   * @param b the builder
   * @return the builder
   */
  <S> Queue.Builder<S> applyTo(Queue.Builder<S> b) {
    b.groupLimit(groupLimit);
    groupLimits.forEach(b::groupLimit);
    b.groupRateLimit(groupRateLimit);
    groupRateLimits.forEach(b::groupRateLimit);
    return b.rateLimit(rateLimit);
  }

  private static FlowLimits read(String queue, KvmqConfig config, List<String> problems) {
    String prefix = "kvmq.queue." + queue + ".";
    int groupLimit =
        limit(prefix + GROUP_LIMIT_KEY, config.get(prefix + GROUP_LIMIT_KEY), problems)
            .orElse(Queue.UNLIMITED);
    Map<String, Integer> groupLimits = new TreeMap<>();
    Map<String, RateLimit> groupRateLimits = new TreeMap<>();
    String base = "kvmq.queue." + queue + GROUP_INFIX;
    for (String key : config.keysStartingWith(base)) {
      String rest = key.substring(base.length());
      String property =
          GROUP_KEYS.stream()
              .filter(k -> rest.endsWith("." + k) && rest.length() > k.length() + 1)
              .max(java.util.Comparator.comparingInt(String::length)) // rate-limit over limit
              .orElse(null);
      if (property == null) {
        problems.add(
            "KVMQ-020: configuration key "
                + key
                + " names no property of a group of queue \""
                + queue
                + "\"; they are "
                + base
                + "GROUP."
                + String.join(", .", GROUP_KEYS));
        continue;
      }
      String group = rest.substring(0, rest.length() - property.length() - 1);
      try {
        JobOptions.defaults().group(group);
      } catch (IllegalArgumentException e) {
        problems.add(
            "KVMQ-020: configuration key " + key + " names a bad group: " + e.getMessage());
        continue;
      }
      if (property.equals("limit")) {
        limit(key, config.get(key), problems).ifPresent(l -> groupLimits.put(group, l));
      } else {
        RateLimit r = rate(key, config.get(key), problems);
        if (r != null) {
          groupRateLimits.put(group, r);
        }
      }
    }
    RateLimit rate = rate(prefix + RATE_LIMIT_KEY, config.get(prefix + RATE_LIMIT_KEY), problems);
    RateLimit groupRate =
        rate(prefix + GROUP_RATE_LIMIT_KEY, config.get(prefix + GROUP_RATE_LIMIT_KEY), problems);
    return new FlowLimits(groupLimit, groupLimits, rate, groupRate, groupRateLimits);
  }

  /** A group limit: a whole number from 0, or {@code unlimited}. */
  private static Optional<Integer> limit(String key, Optional<String> v, List<String> problems) {
    if (v.isEmpty()) {
      return Optional.empty();
    }
    String s = v.get().strip();
    if (s.toLowerCase(Locale.ROOT).equals("unlimited")) {
      return Optional.of(Queue.UNLIMITED);
    }
    try {
      long l = Long.parseLong(s);
      if (l >= 0 && l <= Integer.MAX_VALUE) {
        return Optional.of((int) l);
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    problems.add(
        "KVMQ-020: "
            + key
            + " is \""
            + v.get()
            + "\"; a group limit is a whole number from 0 (no job of the group starts) to "
            + Integer.MAX_VALUE
            + ", or unlimited");
    return Optional.empty();
  }

  /** A rate limit: {@code N/PERIOD}. */
  private static RateLimit rate(String key, Optional<String> v, List<String> problems) {
    if (v.isEmpty()) {
      return null;
    }
    String s = v.get().strip();
    int slash = s.indexOf('/');
    String expected =
        "; a rate limit is STARTS/PERIOD, 1 to "
            + RateLimit.MAX_STARTS
            + " starts per ISO-8601 period of 1 ms to "
            + JobOptions.MAX_DELAY
            + ", such as 100/PT1M";
    if (slash < 0) {
      problems.add("KVMQ-021: " + key + " is \"" + v.get() + "\"" + expected);
      return null;
    }
    int starts;
    Duration period;
    try {
      starts = Integer.parseInt(s.substring(0, slash).strip());
      period = Duration.parse(s.substring(slash + 1).strip());
    } catch (NumberFormatException | DateTimeParseException e) {
      problems.add("KVMQ-021: " + key + " is \"" + v.get() + "\"" + expected);
      return null;
    }
    try {
      return new RateLimit(starts, period);
    } catch (IllegalArgumentException e) {
      problems.add("KVMQ-021: " + key + " is \"" + v.get() + "\"" + expected);
      return null;
    }
  }
}
