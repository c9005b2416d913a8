package dev.kvmq;

/**
 * What a schedule does with a slot while the job of its previous slot is still waiting, delayed or
 * running (not completed and not dead).
 */
public enum Overlap {
  /** Push the slot's job anyway: runs of one schedule may overlap. The default. */
  ALLOW,
  /**
   * Skip the slot (no job for it) and advance to the next one. Checked in the firing's atomic
   * operation against the previous job's record, so it holds across nodes.
   */
  SKIP
}
