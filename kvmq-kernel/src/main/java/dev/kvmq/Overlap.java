package dev.kvmq;

/**
 * What a schedule does with a slot while the job of its previous slot is still waiting, delayed or
 * running (not completed and not dead).
 */
public enum Overlap {
  /** Push the slot's job anyway: runs of one schedule may overlap. The default. */
  ALLOW,
  /**
   * Skip the slot (no job for it) and advance to the next one, while the schedule's previous job
   * (the last it pushed, fired or {@linkplain Schedules#trigger(String) triggered}: {@link
   * ScheduleEntry#lastJobId()}) exists and is not dead. Checked in the firing's atomic operation
   * against that job's record (its versionstamp, or its absence), so it holds across nodes. With
   * {@link MissedRuns#runEach(int)}, the jobs of one firing may still run side by side.
   */
  SKIP
}
