package dev.kvmq;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * The history part of {@link SimulationContract} (docs/semantics.md, "History"). It states two
 * guarantees over everything that happened in a run:
 *
 * <ul>
 *   <li>every retained record is consistent with the runs and the events that were reported: a
 *       completed record is of a job that ran, with the token of its newest run, the result that
 *       run set, its last attempt ended without error at its finish time on this node; a job
 *       reported completed and still retained is retained as reported;
 *   <li>retention limits hold after pruning, both ways: no completed record past its age or beyond
 *       its count, and none pruned early: a reported completion within both limits is retained.
 * </ul>
 */
final class HistoryChecker {

  /** How far the simulation moves the clock before checking, twice: past a worker's poll. */
  static final Duration PRUNE_SLACK = WorkerOptions.defaults().pollInterval().plusSeconds(1);

  private final Queue<String> queue;

  /** job id + ":" + token -> the result that run set ("" for none). */
  private final Map<String, String> results = new HashMap<>();

  /** job id -> the Completed event reported for it. */
  private final Map<String, Job<String>> completed = new HashMap<>();

  HistoryChecker(Queue<String> queue) {
    this.queue = queue;
  }

  /** A retention for one run; dead letters are kept (the simulation's checker reads them). */
  static Retention randomRetention(SplittableRandom r) {
    Retention.Keep keep =
        switch (r.nextInt(5)) {
          case 0 -> Retention.Keep.none();
          case 1 -> Retention.Keep.newest(1 + r.nextInt(6));
          case 2 -> Retention.Keep.youngerThan(Duration.ofMillis(2_000 + r.nextInt(20_000)));
          case 3 -> Retention.Keep.atMost(Duration.ofMillis(5_000 + r.nextInt(20_000)), 4);
          default -> Retention.Keep.unlimited();
        };
    return Retention.defaults().completed(keep).dead(Retention.Keep.unlimited());
  }

  /** A handler ran: it may set a result (the last one set wins). */
  void ran(Job<String> job, JobContext<String> ctx, SplittableRandom outcomes) {
    String result = "";
    int n = outcomes.nextInt(3);
    for (int i = 0; i < n; i++) {
      result = "res:" + job.id() + ":" + ctx.token() + ":" + i;
      ctx.result(result);
    }
    results.put(job.id() + ":" + ctx.token(), result);
  }

  /** An event a worker reported. */
  void reported(JobEvent<String> e) {
    if (e instanceof JobEvent.Completed<String> c) {
      completed.put(c.job().id(), c.job());
    }
  }

  /** After the drain: the guarantees, as problems. */
  void check(long now, List<String> problems) {
    List<Job<String>> kept = new ArrayList<>();
    String cursor = null;
    do {
      JobPage<String> page = queue.list(JobFilter.status(JobStatus.COMPLETED), cursor, 7);
      kept.addAll(page.jobs());
      cursor = page.next().orElse(null);
    } while (cursor != null);
    if (queue.count(JobFilter.status(JobStatus.COMPLETED)) != kept.size()) {
      problems.add("the completed count differs from the completed listing");
    }
    Map<String, Job<String>> keptById = new HashMap<>();
    for (Job<String> j : kept) {
      keptById.put(j.id(), j);
      consistent(j, problems);
    }
    Retention.Keep keep = queue.retention().completed();
    long slack = PRUNE_SLACK.toMillis();
    long oldestAllowed = keep.maxAge().map(a -> now - a.toMillis() - slack).orElse(Long.MIN_VALUE);
    for (Job<String> j : kept) {
      if (j.finishedAt().orElseThrow().toEpochMilli() <= oldestAllowed) {
        problems.add("completed job " + j.id() + " kept past its retention's age " + keep);
      }
    }
    if (keep.maxCount().isPresent() && kept.size() > keep.maxCount().getAsLong()) {
      problems.add(kept.size() + " completed jobs kept, over the retention's count " + keep);
    }
    if (!keep.keepsAny() && !kept.isEmpty()) {
      problems.add("completed jobs kept by a retention that keeps none");
    }
    // none pruned early: a reported completion young enough, and newer than the oldest kept
    // one (or fewer kept than the count), is still there
    Comparator<Job<String>> order =
        Comparator.<Job<String>>comparingLong(j -> j.finishedAt().orElseThrow().toEpochMilli())
            .thenComparing(Job::id);
    Optional<Job<String>> oldestKept = kept.stream().min(order);
    long youngEnough = keep.maxAge().map(a -> now - a.toMillis() + slack).orElse(Long.MIN_VALUE);
    for (Job<String> c : completed.values()) {
      if (!keep.keepsAny() || keptById.containsKey(c.id())) {
        continue;
      }
      boolean young = c.finishedAt().orElseThrow().toEpochMilli() > youngEnough;
      boolean roomLeft =
          keep.maxCount().isEmpty()
              || kept.size() < keep.maxCount().getAsLong()
              || (oldestKept.isPresent() && order.compare(c, oldestKept.get()) > 0);
      if (young && roomLeft && queue.job(c.id()).isEmpty()) {
        problems.add("completed job " + c.id() + " pruned within its retention " + keep);
      }
    }
  }

  /** A retained completed record against the runs and the events. */
  private void consistent(Job<String> j, List<String> problems) {
    String what = "retained completed job " + j.id();
    String result = results.get(j.id() + ":" + j.token());
    if (result == null) {
      problems.add(what + " has token " + j.token() + ", of no run");
      return;
    }
    if (!j.result().orElse("").equals(result)) {
      problems.add(what + " has result " + j.result() + ", its run set \"" + result + "\"");
    }
    if (j.attempts().isEmpty()) {
      problems.add(what + " has no attempts");
      return;
    }
    Attempt last = j.attempts().get(j.attempts().size() - 1);
    Optional<Instant> finished = j.finishedAt();
    if (last.number() != j.attempt()
        || !last.endedAt().equals(finished)
        || last.error().isPresent()
        || !last.node().equals(queue.node())) {
      problems.add(what + ": its last attempt " + last + " is not its completion at " + finished);
    }
    for (int i = 1; i < j.attempts().size(); i++) {
      Attempt a = j.attempts().get(i - 1);
      if (a.number() + 1 != j.attempts().get(i).number() || a.error().isEmpty()) {
        problems.add(what + ": an earlier attempt " + a + " did not end with an error");
      }
    }
    Job<String> event = completed.get(j.id());
    if (event != null && !event.equals(j)) {
      problems.add(what + " is " + j + " with " + j.result() + ", reported as " + event);
    }
  }
}
