package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.ForwardingKvStore;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Follows every commit a queue's store applies (it sits under the fault injection, so it sees
 * commits whose caller was told they failed) and states the flow-control guarantees as properties
 * of every instant between two commits:
 *
 * <ul>
 *   <li>no group has more jobs leased (running, or held by a crashed worker until reclaimed) than
 *       its limit, nor more admitted (ready in the ready index, or leased) than its limit;
 *   <li>no more than {@code N} jobs start (a claim: a job record leased under a new token) in any
 *       half-open window {@code (t - period, t]} of the rate limit;
 *   <li>no job starts while a committed pause of the queue's starts runs;
 *   <li>no more than {@code N} jobs of one group start in any window {@code (t - period, t]} of its
 *       group's rate limit;
 *   <li>no job of a group starts while a committed pause of its group's starts runs.
 * </ul>
 *
 * Every problem is recorded with the instant it happened.
 */
final class FlowChecker extends ForwardingKvStore {

  private final QueueKeys keys;
  private final InstantSource clock;
  private final GroupBook.Limits limits;
  private final RateLimit rate;
  private final GroupBook.Rates rates;
  private final Map<String, Deque<Long>> groupStarts = new HashMap<>();
  private final Map<String, Long> groupPausedUntil = new HashMap<>();

  /** Starts of jobs of a group with a rate limit, and starts refused by no pause of a group. */
  int groupRateStartsSeen;

  int groupPausesSeen;

  /** The job records as committed: id -> record. */
  final Map<String, JobRecord> jobs = new HashMap<>();

  private final Deque<Long> starts = new ArrayDeque<>();
  private long pausedUntil;
  final List<String> problems = new ArrayList<>();

  /** Completions per job state (a completion deletes a leased record, or keeps it COMPLETED). */
  final Map<String, Integer> completions = new HashMap<>();

  int startsSeen;
  int maxLeasedInAGroup;
  int parkedSeen;

  FlowChecker(
      KvStore delegate,
      QueueKeys keys,
      InstantSource clock,
      GroupBook.Limits limits,
      RateLimit rate) {
    this(delegate, keys, clock, limits, rate, GroupBook.Rates.NONE);
  }

  FlowChecker(
      KvStore delegate,
      QueueKeys keys,
      InstantSource clock,
      GroupBook.Limits limits,
      RateLimit rate,
      GroupBook.Rates rates) {
    super(delegate);
    this.keys = keys;
    this.clock = clock;
    this.limits = limits;
    this.rate = rate;
    this.rates = rates;
  }

  @Override
  public List<CommitResult> commitAll(List<AtomicOperation> operations) {
    List<CommitResult> results = delegate.commitAll(operations);
    long now = clock.millis();
    for (int i = 0; i < operations.size(); i++) {
      if (results.get(i).ok()) {
        apply(operations.get(i), now);
      }
    }
    return results;
  }

  private void apply(AtomicOperation op, long now) {
    Key jobPrefix = keys.root.append("job");
    for (AtomicOperation.Mutation m : op.mutations()) {
      Key key = m.key();
      if (key.equals(keys.startsPaused()) && !m.isDelete()) {
        pausedUntil = Math.max(pausedUntil, Transitions.decodeTime(m.value()));
      }
      Key groupPaused = keys.root.append("group", "paused");
      if (key.startsWith(groupPaused) && key.size() == groupPaused.size() + 1 && !m.isDelete()) {
        groupPausesSeen++;
        String group =
            new String((byte[]) key.get(key.size() - 1), java.nio.charset.StandardCharsets.UTF_8);
        groupPausedUntil.merge(group, Transitions.decodeTime(m.value()), Math::max);
      }
      if (!key.startsWith(jobPrefix) || key.size() != jobPrefix.size() + 1) {
        continue;
      }
      String id = QueueKeys.idOf(key);
      if (m.isDelete()) {
        JobRecord gone = jobs.remove(id);
        if (gone != null && gone.state == JobRecord.State.LEASED) {
          completions.merge(
              new String(gone.payload, java.nio.charset.StandardCharsets.UTF_8), 1, Integer::sum);
        }
        continue;
      }
      JobRecord after = JobRecord.decode(m.value());
      JobRecord before = jobs.put(id, after);
      if (after.state == JobRecord.State.COMPLETED
          && before != null
          && before.state == JobRecord.State.LEASED) {
        // a completion that keeps the record (the queue keeps completed jobs)
        completions.merge(
            new String(after.payload, java.nio.charset.StandardCharsets.UTF_8), 1, Integer::sum);
      }
      if (after.parked) {
        parkedSeen++;
      }
      if (after.state == JobRecord.State.LEASED
          && (before == null || before.state != JobRecord.State.LEASED)) {
        started(id, now);
        if (after.group != null) {
          startedInGroup(id, after.group, now);
        }
      }
    }
    checkGroups(now);
  }

  private void started(String id, long now) {
    startsSeen++;
    if (now < pausedUntil) {
      problems.add(
          "job "
              + id
              + " started at "
              + now
              + " while the starts were paused until "
              + pausedUntil);
    }
    if (rate == null) {
      return;
    }
    starts.addLast(now);
    long period = rate.period().toMillis();
    while (!starts.isEmpty() && starts.peekFirst() <= now - period) {
      starts.removeFirst();
    }
    if (starts.size() > rate.starts()) {
      problems.add(
          starts.size()
              + " starts in the window ("
              + (now - period)
              + ", "
              + now
              + "] over the rate limit "
              + rate);
    }
  }

  private void startedInGroup(String id, String group, long now) {
    long paused = groupPausedUntil.getOrDefault(group, 0L);
    if (now < paused) {
      problems.add(
          "job "
              + id
              + " of group "
              + group
              + " started at "
              + now
              + " while its group's starts were paused until "
              + paused);
    }
    RateLimit groupRate = rates.of(group);
    if (groupRate == null) {
      return;
    }
    groupRateStartsSeen++;
    Deque<Long> window = groupStarts.computeIfAbsent(group, g -> new ArrayDeque<>());
    window.addLast(now);
    long period = groupRate.period().toMillis();
    while (!window.isEmpty() && window.peekFirst() <= now - period) {
      window.removeFirst();
    }
    if (window.size() > groupRate.starts()) {
      problems.add(
          window.size()
              + " starts of group "
              + group
              + " in the window ("
              + (now - period)
              + ", "
              + now
              + "] over its rate limit "
              + groupRate);
    }
  }

  private void checkGroups(long now) {
    Map<String, int[]> byGroup = new HashMap<>();
    for (JobRecord r : jobs.values()) {
      if (r.group == null) {
        continue;
      }
      int[] c = byGroup.computeIfAbsent(r.group, g -> new int[2]);
      if (r.state == JobRecord.State.LEASED) {
        c[0]++;
        c[1]++;
      } else if (r.state == JobRecord.State.READY && !r.parked) {
        c[1]++;
      }
    }
    for (Map.Entry<String, int[]> e : byGroup.entrySet()) {
      int limit = limits.of(e.getKey());
      int leased = e.getValue()[0];
      maxLeasedInAGroup = Math.max(maxLeasedInAGroup, leased);
      if (leased > limit) {
        problems.add(
            "at "
                + now
                + " group "
                + e.getKey()
                + " has "
                + leased
                + " jobs leased, limit "
                + limit);
      }
      if (e.getValue()[1] > limit) {
        problems.add(
            "at "
                + now
                + " group "
                + e.getKey()
                + " has "
                + e.getValue()[1]
                + " jobs admitted, limit "
                + limit);
      }
    }
  }
}
