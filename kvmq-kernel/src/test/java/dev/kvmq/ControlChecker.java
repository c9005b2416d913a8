package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.KvStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The simulation's part for job control ({@link SimulationContract}): operators cancel jobs in
 * every state (one, or many by status) between the workers' steps, and sometimes the job a handler
 * is running while it runs; handlers sometimes snooze or fail for good. It states the guarantees:
 *
 * <ul>
 *   <li>no completion is accepted after a cancel: no {@link JobEvent.Completed} is reported for a
 *       job once it was read back CANCELLED, and every such job stays CANCELLED to the end;
 *   <li>a lost lease the worker reports as a cancel ({@link JobEvent.LeaseLost#cancelled()}) is of
 *       a job that is CANCELLED when the report comes (or gone, deleted since);
 *   <li>a dead letter used all its retries, or failed for good ({@link
 *       JobError#PERMANENT_FAILURE}), or is a poison job: its lease expired the queue's {@link
 *       Queue#maxLeaseExpiries()} times, and its error ({@link JobError#LEASE_EXPIRED}) says so.
 * </ul>
 *
 * A cancel whose commit failed may or may not have applied: the checker reads the job back, and a
 * job read CANCELLED counts as cancelled from then on, however its cancel's commit was reported.
 */
final class ControlChecker {

  private final Queue<String> queue;
  private final List<String> problems;

  /** Jobs read back CANCELLED: from then on no completion of theirs may be accepted. */
  private final Set<String> cancelled = new LinkedHashSet<>();

  /** Jobs whose handler called failPermanently (and may have thrown after). */
  private final Set<String> failedForGood = new LinkedHashSet<>();

  /** Chains a cancel may have ended early (applied or not). */
  private final Set<String> cancelledChains = new LinkedHashSet<>();

  /** Chains no operator and no handler cancels, snoozes or fails for good. */
  private Set<String> spared = Set.of();

  ControlChecker(Queue<String> queue, List<String> problems) {
    this.queue = queue;
    this.problems = problems;
  }

  /** From now on, the jobs of these chains (a live view) are left to fail on their own. */
  void spare(Set<String> chains) {
    this.spared = chains;
  }

  /** An operator cancels one job of the queue's listing (waiting, delayed, processing, held). */
  void cancelOne(SplittableRandom r) {
    List<JobEntry<String>> jobs =
        queue.jobs().stream().filter(e -> !spared.contains(e.job().state())).toList();
    if (jobs.isEmpty()) {
      return;
    }
    Job<String> j = jobs.get(r.nextInt(jobs.size())).job();
    cancel(j.id(), j.state());
  }

  /** An operator cancels every job of one or two statuses, in batches. */
  void cancelMany(SplittableRandom r) {
    JobStatus[] live = {JobStatus.WAITING, JobStatus.DELAYED, JobStatus.PROCESSING, JobStatus.HELD};
    JobFilter filter = JobFilter.status(live[r.nextInt(live.length)], live[r.nextInt(live.length)]);
    List<JobEntry<String>> before = queue.jobs();
    if (before.stream().anyMatch(e -> spared.contains(e.job().state()))) {
      return;
    }
    try {
      queue.cancelAll(filter);
    } catch (KvStoreException e) {
      // some batches may be applied: read back below
    }
    for (JobEntry<String> e : before) {
      cancelledChains.add(e.job().state()); // the chain may stop early, or not
      readBack(e.job().id());
    }
  }

  /**
   * What a handler may do while it runs: an operator cancels its job (then its completion must be
   * refused), or it snoozes, or fails for good.
   */
  void whileRunning(Job<String> job, JobContext<String> ctx, SplittableRandom outcomes) {
    int x = outcomes.nextInt(100);
    if (spared.contains(job.state())) {
      return;
    }
    if (x < 4) {
      cancel(job.id(), job.state());
    } else if (x < 8) {
      ctx.snooze(Duration.ofMillis(outcomes.nextInt(2) * 500L));
    } else if (x < 10) {
      ctx.failPermanently("never");
      failedForGood.add(job.id());
    }
  }

  private void cancel(String id, String chain) {
    cancelledChains.add(chain);
    try {
      queue.cancel(id);
    } catch (KvStoreException | IllegalStateException e) {
      // applied or not: read back
    }
    readBack(id);
  }

  private void readBack(String id) {
    Optional<Job<String>> now = queue.job(id);
    if (now.isPresent() && now.get().status() == JobStatus.CANCELLED) {
      cancelled.add(id);
    }
  }

  boolean isCancelled(String id) {
    return queue.job(id).map(j -> j.status() == JobStatus.CANCELLED).orElse(false);
  }

  /** A worker reported the completion of {@code id}: refused if the job was cancelled before. */
  void completed(String id) {
    if (cancelled.contains(id)) {
      problems.add("the completion of job " + id + " was accepted after its cancel");
    }
  }

  /**
   * A worker reported a lost lease. Read back now, the job says whether it was a cancel: a cancel
   * is final until the job is deleted, so a job CANCELLED under the reporting lease's token was
   * cancelled under it, and one in any other state was not. A job gone (deleted since) proves
   * nothing, nor a store that fails to answer.
   */
  void leaseLost(JobEvent.LeaseLost<String> lost) {
    String id = lost.job().id();
    Optional<Job<String>> now;
    try {
      now = queue.job(id);
    } catch (KvStoreException e) {
      return; // can't tell now
    }
    if (now.isEmpty()) {
      return;
    }
    boolean cancelledUnderIt =
        now.get().status() == JobStatus.CANCELLED && now.get().token() == lost.job().token();
    if (lost.cancelled() != cancelledUnderIt) {
      problems.add(
          "job "
              + id
              + "'s lost lease (token "
              + lost.job().token()
              + ", refused "
              + lost.refusedOutcome().word()
              + ") was reported with cancelled "
              + lost.cancelled()
              + ", but the job is "
              + now.get().status()
              + " with token "
              + now.get().token());
    }
  }

  /** Chains a cancel may have ended before they ran to their end. */
  Set<String> cancelledChains() {
    return cancelledChains;
  }

  /** The jobs of schedules that ended without running: poison jobs, and jobs cancelled first. */
  List<Job<String>> endedWithoutRunning() {
    List<Job<String>> ended = new ArrayList<>();
    for (Job<String> d : queue.deadLetters()) {
      if (d.schedule().isPresent()) {
        ended.add(d);
      }
    }
    for (String id : cancelled) {
      queue.job(id).filter(j -> j.schedule().isPresent()).ifPresent(ended::add);
    }
    return ended;
  }

  /** After the drain: every job read back CANCELLED is still CANCELLED. */
  void check() {
    for (String id : cancelled) {
      assertThat(queue.job(id).map(Job::status))
          .as("job %s, cancelled, stays cancelled", id)
          .contains(JobStatus.CANCELLED);
    }
  }

  /** A dead letter is one of the three kinds, and says which. */
  void checkDeadLetter(Job<String> d) {
    JobError error = d.lastError().orElseThrow();
    if (error.type().equals(JobError.LEASE_EXPIRED)) {
      assertThat(d.leaseExpiries())
          .as("a poison job %s expired the limit of times", d.id())
          .isEqualTo(queue.maxLeaseExpiries());
      assertThat(error.message()).contains("expired " + queue.maxLeaseExpiries() + " times");
    } else if (error.type().equals(JobError.PERMANENT_FAILURE)) {
      assertThat(failedForGood).as("%s failed for good by its handler", d.id()).contains(d.id());
    } else if (!failedForGood.contains(d.id())) {
      assertThat(d.retriesLeft()).as("a dead letter %s used all its retries", d.id()).isZero();
    }
  }

  /** Whether the chain of {@code d} may have ended without running: a poison job's. */
  static boolean poison(Job<String> d) {
    return d.lastError().map(e -> e.type().equals(JobError.LEASE_EXPIRED)).orElse(false);
  }
}
