package dev.kvmq;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A schedule as its queue holds it: the definition, whether it is paused, when it is next due, and
 * its latest run. An immutable snapshot; {@link Schedules#get(String)} and {@link Schedules#list()}
 * read them.
 *
 * @param <S> the queue's state type
 * @param schedule the definition
 * @param paused whether the schedule is paused ({@link Schedules#pause(String)})
 * @param nextDue the next slot it fires at; empty when paused or when its spec has no slot left
 * @param lastSlot the slot of the latest job it pushed (fired or triggered); empty before its first
 *     run
 * @param lastJobId the id of the latest job it pushed (fired or triggered); empty before its first
 *     run. The job may be gone (completed, deleted)
 */
public record ScheduleEntry<S>(
    Schedule<S> schedule,
    boolean paused,
    Optional<Instant> nextDue,
    Optional<Instant> lastSlot,
    Optional<String> lastJobId) {

  /**
   * Checks the components.
   *
   * @param schedule the {@code schedule} component
   * @param paused the {@code paused} component
   * @param nextDue the {@code nextDue} component
   * @param lastSlot the {@code lastSlot} component
   * @param lastJobId the {@code lastJobId} component
   * @throws NullPointerException if a component is null
   */
  public ScheduleEntry {
    Objects.requireNonNull(schedule, "schedule");
    Objects.requireNonNull(nextDue, "nextDue");
    Objects.requireNonNull(lastSlot, "lastSlot");
    Objects.requireNonNull(lastJobId, "lastJobId");
  }

  /**
   * Returns the schedule's name.
   *
   * @return {@code schedule().name()}
   */
  public String name() {
    return schedule.name();
  }
}
