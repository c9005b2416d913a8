package dev.kvmq;

import java.time.Duration;
import java.util.Objects;

/**
 * The definition of a recurring schedule: its name in the queue, when its slots are ({@link
 * ScheduleSpec}), the state and options of the job each slot pushes, and what happens to slots that
 * were missed and to slots that come while the previous run is not done. An immutable value; define
 * it with {@link Schedules#define(Schedule)}. docs/scheduling.md is the reference.
 *
 * <pre>{@code
 * queue.schedules().define(
 *     Schedule.builder("nightly-report", ScheduleSpec.cron("0 2 * * *", ZoneId.of("Europe/Paris")),
 *             new Report("daily"))
 *         .missed(MissedRuns.runOnce())
 *         .overlap(Overlap.SKIP)
 *         .build());
 * }</pre>
 *
 * <p>Two definitions are equal when every field is (the state by its {@code equals}); {@link
 * Schedules#define} compares the state by its encoded bytes.
 *
 * @param <S> the queue's state type
 */
public final class Schedule<S> {

  /** The longest schedule name, in characters. */
  public static final int MAX_NAME_LENGTH = 200;

  /** The default {@link Builder#lateness(Duration)}: one minute. */
  public static final Duration DEFAULT_LATENESS = Duration.ofMinutes(1);

  private final String name;
  private final ScheduleSpec spec;
  private final S state;
  private final JobOptions options;
  private final MissedRuns missed;
  private final Overlap overlap;
  private final Duration lateness;

  private Schedule(Builder<S> b) {
    this.name = b.name;
    this.spec = b.spec;
    this.state = b.state;
    this.options = b.options;
    this.missed = b.missed;
    this.overlap = b.overlap;
    this.lateness = b.lateness;
  }

  /**
   * Starts a definition.
   *
   * @param name the schedule's name, unique in its queue: 1 to {@link #MAX_NAME_LENGTH} characters,
   *     no control characters
   * @param spec when its slots are
   * @param state the state of the job each slot pushes
   * @param <S> the queue's state type
   * @return a builder with the defaults: {@link JobOptions#defaults()}, {@link
   *     MissedRuns#runOnce()}, {@link Overlap#ALLOW}, {@link #DEFAULT_LATENESS}
   * @throws IllegalArgumentException if the name is empty, too long or has a control character
   * @throws NullPointerException if an argument is null
   */
  public static <S> Builder<S> builder(String name, ScheduleSpec spec, S state) {
    return new Builder<>(name, spec, state);
  }

  /**
   * Returns the schedule's name.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * Returns when the slots are.
   *
   * @return the spec
   */
  public ScheduleSpec spec() {
    return spec;
  }

  /**
   * Returns the state of the job each slot pushes.
   *
   * @return the state
   */
  public S state() {
    return state;
  }

  /**
   * Returns the options of the job each slot pushes: its priority, retries and backoff. Their delay
   * is not used (a slot's job is ready when its slot is fired) and not stored: a definition read
   * back ({@link Schedules#get(String)}) has options with no delay, and its backoff in whole
   * milliseconds.
   *
   * @return the options
   */
  public JobOptions options() {
    return options;
  }

  /**
   * Returns what happens to slots that passed while no worker fired them.
   *
   * @return the policy
   */
  public MissedRuns missed() {
    return missed;
  }

  /**
   * Returns what happens to a slot while the previous slot's job is still waiting or running.
   *
   * @return the policy
   */
  public Overlap overlap() {
    return overlap;
  }

  /**
   * Returns how late a slot may be fired and still count as on time rather than missed: a slot
   * fired more than this after it, or one with a later slot also due, is missed ({@link
   * MissedRuns}).
   *
   * @return the lateness, positive
   */
  public Duration lateness() {
    return lateness;
  }

  /**
   * Compares every field.
   *
   * @param o the other object
   * @return true if {@code o} is a definition with equal fields
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof Schedule<?> s
        && name.equals(s.name)
        && spec.equals(s.spec)
        && state.equals(s.state)
        && options.equals(s.options)
        && missed.equals(s.missed)
        && overlap == s.overlap
        && lateness.equals(s.lateness);
  }

  /**
   * Hashes every field.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    return Objects.hash(name, spec, state, options, missed, overlap, lateness);
  }

  /**
   * Describes the schedule: name, spec and policies.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "Schedule[" + name + " " + spec + " missed=" + missed + " overlap=" + overlap + "]";
  }

  /**
   * Builds a {@link Schedule}. Not thread-safe.
   *
   * @param <S> the queue's state type
   */
  public static final class Builder<S> {
    private final String name;
    private final ScheduleSpec spec;
    private final S state;
    private JobOptions options = JobOptions.defaults();
    private MissedRuns missed = MissedRuns.runOnce();
    private Overlap overlap = Overlap.ALLOW;
    private Duration lateness = DEFAULT_LATENESS;

    private Builder(String name, ScheduleSpec spec, S state) {
      this.name = checkName(name);
      this.spec = Objects.requireNonNull(spec, "spec");
      this.state = Objects.requireNonNull(state, "state");
    }

    /**
     * Sets the options of the job each slot pushes (priority, retries, backoff). A delay in them is
     * not used: the job is due at its slot.
     *
     * @param options the options
     * @return this builder
     * @throws IllegalArgumentException if the options have a unique key, or repeat the job ({@link
     *     JobOptions#repeatCount()} is not zero): a schedule is the repeat; or if they give a group
     *     ({@link JobOptions#group()}): a schedule's jobs belong to no group
     * @throws NullPointerException if {@code options} is null
     */
    public Builder<S> options(JobOptions options) {
      Objects.requireNonNull(options, "options");
      if (options.unique() != null) {
        throw new IllegalArgumentException(
            "schedule "
                + name
                + ": its job options must not have a unique key (the schedule runs one job per"
                + " slot; see Overlap for one at a time)");
      }
      if (options.repeatCount() != 0) {
        throw new IllegalArgumentException(
            "schedule " + name + ": its job options must not repeat the job (the schedule does)");
      }
      if (options.group() != null) {
        throw new IllegalArgumentException(
            "schedule "
                + name
                + ": its jobs belong to no group (a schedule's job options must not give one)");
      }
      this.options = options;
      return this;
    }

    /**
     * Sets what happens to missed slots.
     *
     * @param missed the policy
     * @return this builder
     * @throws NullPointerException if {@code missed} is null
     */
    public Builder<S> missed(MissedRuns missed) {
      this.missed = Objects.requireNonNull(missed, "missed");
      return this;
    }

    /**
     * Sets what happens to a slot while the previous slot's job is not done.
     *
     * @param overlap the policy
     * @return this builder
     * @throws NullPointerException if {@code overlap} is null
     */
    public Builder<S> overlap(Overlap overlap) {
      this.overlap = Objects.requireNonNull(overlap, "overlap");
      return this;
    }

    /**
     * Sets how late a slot may be fired and still count as on time.
     *
     * @param lateness the lateness
     * @return this builder
     * @throws IllegalArgumentException if {@code lateness} is zero or negative
     * @throws NullPointerException if {@code lateness} is null
     */
    public Builder<S> lateness(Duration lateness) {
      Objects.requireNonNull(lateness, "lateness");
      if (lateness.isZero() || lateness.isNegative()) {
        throw new IllegalArgumentException(
            "schedule " + name + ": lateness must be positive: " + lateness);
      }
      this.lateness = lateness;
      return this;
    }

    /**
     * Builds the definition.
     *
     * @return the definition
     */
    public Schedule<S> build() {
      return new Schedule<>(this);
    }

    private static String checkName(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
        throw new IllegalArgumentException(
            "a schedule name has 1 to " + MAX_NAME_LENGTH + " characters: \"" + name + "\"");
      }
      for (int i = 0; i < name.length(); i++) {
        if (Character.isISOControl(name.charAt(i))) {
          throw new IllegalArgumentException(
              "a schedule name must not contain control characters: \"" + name + "\"");
        }
      }
      return name;
    }
  }
}
