package dev.kvmq.jakarta;

import dev.kvmq.MissedRuns;
import dev.kvmq.Overlap;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a recurring schedule of the queue whose {@link QueueHandler} carries it: each slot of
 * the schedule pushes one job with the given state to that queue, exactly once across every node
 * that shares the store (docs/scheduling.md). Repeatable: one annotation per schedule.
 *
 * <pre>{@code
 * @QueueHandler("reports")
 * @QueueSchedule(name = "nightly", cron = "0 2 * * *", zone = "Europe/Paris",
 *     state = "{\"kind\":\"daily\"}")
 * @QueueSchedule(name = "heartbeat", every = "PT1M", overlap = Overlap.SKIP)
 * public class ReportHandler implements JobHandler<Report> { ... }
 * }</pre>
 *
 * <p>Checked at deployment, every problem at once with a code (see {@link KvmqExtension}): exactly
 * one of {@link #cron()} and {@link #every()}, a cron expression the kernel reads, a known zone,
 * state JSON that decodes to the handler's state type, one schedule per name and queue. At startup
 * every node defines every declared schedule; defining the same schedule again writes nothing.
 *
 * <p>Each attribute can be overridden by configuration, {@code
 * kvmq.queue.QUEUE.schedule.NAME.cron}, {@code .every}, {@code .anchor}, {@code .zone}, {@code
 * .state}, {@code .missed}, {@code .missed-limit}, {@code .overlap}, {@code .lateness}, and {@code
 * .enabled=false} turns a declared schedule off (docs/scheduling.md lists the rules).
 *
 * <p>The job of each slot gets the queue's default job options (the handler's {@link
 * QueueHandler#priority()}, {@link QueueHandler#retries()} and so on); {@link dev.kvmq.Job#slot()}
 * tells the handler which slot it runs for.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Repeatable(QueueSchedule.List.class)
public @interface QueueSchedule {

  /**
   * The schedule's name, unique in its queue.
   *
   * @return 1 to {@value dev.kvmq.Schedule#MAX_NAME_LENGTH} characters, no control characters
   */
  String name();

  /**
   * A cron expression (five Unix fields, an optional leading seconds field, or a macro such as
   * {@code @daily}; see {@link dev.kvmq.ScheduleSpec.Cron}), read in {@link #zone()}. Give either
   * this or {@link #every()}.
   *
   * @return the expression, or empty (default)
   */
  String cron() default "";

  /**
   * A fixed rate: an ISO-8601 duration of whole seconds, at least {@code PT1S}. The slots are
   * {@link #anchor()} plus every multiple of it, so every node computes the same slots: with the
   * default anchor, {@code PT1H} fires at every full hour UTC and {@code PT15M} at :00, :15, :30
   * and :45. Give either this or {@link #cron()}.
   *
   * @return the duration, or empty (default)
   */
  String every() default "";

  /**
   * The first slot of an {@link #every()} schedule, an ISO-8601 instant such as {@code
   * 2026-01-01T02:30:00Z}; only with {@code every}.
   *
   * @return the instant, or empty for {@code 1970-01-01T00:00:00Z} (default)
   */
  String anchor() default "";

  /**
   * The time zone a {@link #cron()} expression is read in, an ID such as {@code Europe/Paris}; only
   * with {@code cron}. The default is UTC, not the server's zone: nodes in different zones must
   * compute the same slots.
   *
   * @return the zone's ID, or empty for UTC (default)
   */
  String zone() default "";

  /**
   * The state of the job each slot pushes, as JSON; decoded with the queue's JSON-B codec at
   * deployment (unknown properties refused unless the handler's {@link
   * QueueHandler#ignoreUnknownProperties()} is set).
   *
   * @return the JSON (default {@code {}})
   */
  String state() default "{}";

  /**
   * What happens to slots missed while no node fired them (every node down, the queue paused).
   *
   * @return the policy (default {@link MissedRuns.Kind#RUN_ONCE}: one job for all of them)
   */
  MissedRuns.Kind missed() default MissedRuns.Kind.RUN_ONCE;

  /**
   * With {@link MissedRuns.Kind#RUN_EACH}, how many missed slots get a job (the latest ones).
   *
   * @return 1 to {@value dev.kvmq.MissedRuns#MAX_LIMIT} for {@code RUN_EACH}; 0 (default) otherwise
   */
  int missedLimit() default 0;

  /**
   * What happens to a slot while the previous slot's job is still waiting or running.
   *
   * @return the policy (default {@link Overlap#ALLOW})
   */
  Overlap overlap() default Overlap.ALLOW;

  /**
   * How late a slot may fire and still count as on time, not missed.
   *
   * @return a positive ISO-8601 duration (default {@code PT1M})
   */
  String lateness() default "PT1M";

  /**
   * Holds several {@link QueueSchedule}s on one class; the compiler writes it for a repeated
   * annotation.
   */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @interface List {
    /**
     * The schedules.
     *
     * @return the schedules
     */
    QueueSchedule[] value();
  }
}
