package dev.kvmq;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The queue's state machine as data: every allowed {@link Edge} (an event taking a job from one
 * {@link Node} to another), and the table {@code state x event -> allowed next states} derived from
 * them. {@link Transitions} checks every plan it builds against it; a plan outside the table is a
 * bug, not a refusal.
 *
 * <p>Which edge applies, and when (a lease that is live or expired, a delay that is due), is
 * decided by the functions of {@link Transitions}; the table says which moves exist at all. {@link
 * #render()} prints it; the Javadoc of {@link Edge} lists it.
 */
final class TransitionTable {

  private TransitionTable() {}

  /** Where a job is: one of its record's states, or no record. */
  enum Node {
    /** No record (not pushed yet, or gone). */
    ABSENT,
    /** In the ready index. */
    READY,
    /** In the delayed index. */
    DELAYED,
    /** In the leased index. */
    LEASED,
    /** In the dead-letter index. */
    DEAD,
    /** A record that can't be decoded, still in an index. */
    UNREADABLE,
    /** An unreadable record moved aside: in no index, kept for inspection. */
    QUARANTINED,
    /** In the held index: written in an application's transaction, not released yet. */
    HELD,
    /** Ready, in its group's parked index: its group has no free slot (docs/flow-control.md). */
    PARKED,
    /** In the cancelled index: cancelled by an operator, kept. */
    CANCELLED,
    /** Completed, in the completed index: kept for the queue's retention. */
    COMPLETED;

    /** The node of a decoded record. */
    static Node of(JobRecord r) {
      return switch (r.state) {
        case READY -> r.parked ? PARKED : READY;
        case DELAYED -> DELAYED;
        case LEASED -> LEASED;
        case DEAD -> DEAD;
        case HELD -> HELD;
        case CANCELLED -> CANCELLED;
        case COMPLETED -> COMPLETED;
      };
    }
  }

  /** What happens to a job. */
  enum Event {
    /** A new job is written. */
    PUSH,
    /** The next run of a repeating job is written by its completion. */
    REPEAT,
    /** A delayed job fell due. */
    PROMOTE,
    /** A worker leases a ready job. */
    CLAIM,
    /** A lease expired; the job is ready again. */
    RECLAIM,
    /** The holder gives back a job it never started. */
    RELEASE,
    /** The holder extends its lease. */
    RENEW,
    /** The holder changes the job while it runs. */
    UPDATE,
    /** The holder completes the job. */
    COMPLETE,
    /** The holder reports a failed attempt. */
    FAIL,
    /** A dead letter goes back to the queue. */
    REPLAY,
    /** A job not processed under a live lease is removed. */
    DELETE,
    /** An unreadable record's index entry is moved aside. */
    QUARANTINE,
    /** A due schedule pushes the job of a slot (ScheduleTransitions.fire). */
    FIRE,
    /** A schedule's job is pushed by hand (ScheduleTransitions.trigger). */
    TRIGGER,
    /** A new job is written held, in an application's transaction that has not ended. */
    HOLD,
    /**
     * A held job joins the queue: its transaction committed, the held-job policy's timeout passed,
     * or an operator released it.
     */
    RELEASE_HELD,
    /** A held job is removed: its transaction rolled back. */
    DROP_HELD,
    /** A parked job takes its group's free slot: it joins the ready index. */
    ADMIT,
    /**
     * The holder says the remote side limits us: the job waits, unattempted, until the queue's
     * starts resume (JobContext.pauseQueueStarts), or its group's (JobContext.pauseGroupStarts).
     */
    DEFER,
    /**
     * A push of a taken unique key in debounce mode gives the waiting job that holds it the pushed
     * state and due time (UniqueTransitions.push).
     */
    DEBOUNCE,
    /** A job kept in the history is removed: past its status's retention. */
    PRUNE,
    /**
     * An operator cancels a job that has not ended; a lease on it is revoked in the same commit.
     */
    CANCEL,
    /** The holder puts its job back for a while without using a retry. */
    SNOOZE,
    /**
     * A claim finds the starts of a ready job's group blocked (its rate window full, or its starts
     * paused): the job leaves the ready index for its group's parked jobs, freeing its slot.
     */
    BLOCK
  }

  /**
   * Every allowed move, and nothing else:
   *
   * <pre>
   *   ABSENT     -push-------> READY | DELAYED
   *   ABSENT     -repeat-----> READY | DELAYED   (written by a completion)
   *   DELAYED    -promote----> READY             (due)
   *   READY      -claim------> LEASED            (token + 1, attempt + 1)
   *   LEASED     -reclaim----> READY             (expired)
   *   LEASED     -reclaim----> DEAD              (expired, the maxLeaseExpiries-th time: poison)
   *   LEASED     -release----> READY             (attempt - 1)
   *   LEASED     -renew------> LEASED
   *   LEASED     -update-----> LEASED
   *   LEASED     -complete---> ABSENT
   *   LEASED     -fail-------> READY | DELAYED | DEAD
   *   DEAD       -replay-----> READY
   *   READY | DELAYED | DEAD | LEASED (expired) -delete-> ABSENT
   *   UNREADABLE -quarantine-> QUARANTINED
   *   ABSENT     -fire-------> READY             (a schedule's slot)
   *   ABSENT     -trigger----> READY             (a schedule run by hand)
   *   ABSENT     -hold-------> HELD              (in an application's transaction)
   *   HELD       -release_held-> READY | DELAYED (commit, held timeout, operator)
   *   HELD       -drop_held--> ABSENT            (rollback)
   *   HELD       -delete-----> ABSENT            (an operator)
   *   ABSENT | DELAYED | DEAD | HELD -push, repeat, promote, replay, release_held-> PARKED
   *                                                (a job of a group with no free slot)
   *   PARKED     -admit------> READY             (a slot of its group freed)
   *   PARKED     -delete-----> ABSENT
   *   LEASED     -defer------> DELAYED           (the queue's starts paused; attempt - 1)
   *   READY | DELAYED -debounce-> READY | DELAYED (a push of its unique key, debounced)
   *   LEASED     -complete---> COMPLETED         (completed jobs kept)
   *   LEASED     -fail-------> ABSENT            (no retries left, no dead letters kept)
   *   COMPLETED  -delete-----> ABSENT            (an operator)
   *   COMPLETED | DEAD -prune-> ABSENT           (past the retention)
   *   READY | PARKED | DELAYED | LEASED | HELD -cancel-> CANCELLED (an operator; revokes a lease)
   *   LEASED     -snooze-----> READY | DELAYED   (retries untouched)
   *   CANCELLED  -delete-----> ABSENT            (an operator, or pruning)
   *   READY      -block------> PARKED            (its group's rate window full or starts paused)
   * </pre>
   */
  enum Edge {
    PUSH_READY(Event.PUSH, Node.ABSENT, Node.READY),
    PUSH_DELAYED(Event.PUSH, Node.ABSENT, Node.DELAYED),
    REPEAT_READY(Event.REPEAT, Node.ABSENT, Node.READY),
    REPEAT_DELAYED(Event.REPEAT, Node.ABSENT, Node.DELAYED),
    PROMOTE(Event.PROMOTE, Node.DELAYED, Node.READY),
    CLAIM(Event.CLAIM, Node.READY, Node.LEASED),
    RECLAIM(Event.RECLAIM, Node.LEASED, Node.READY),
    RELEASE(Event.RELEASE, Node.LEASED, Node.READY),
    RENEW(Event.RENEW, Node.LEASED, Node.LEASED),
    UPDATE(Event.UPDATE, Node.LEASED, Node.LEASED),
    COMPLETE(Event.COMPLETE, Node.LEASED, Node.ABSENT),
    FAIL_RETRY_READY(Event.FAIL, Node.LEASED, Node.READY),
    FAIL_RETRY_DELAYED(Event.FAIL, Node.LEASED, Node.DELAYED),
    FAIL_DEAD(Event.FAIL, Node.LEASED, Node.DEAD),
    REPLAY(Event.REPLAY, Node.DEAD, Node.READY),
    DELETE_READY(Event.DELETE, Node.READY, Node.ABSENT),
    DELETE_DELAYED(Event.DELETE, Node.DELAYED, Node.ABSENT),
    DELETE_EXPIRED_LEASE(Event.DELETE, Node.LEASED, Node.ABSENT),
    DELETE_DEAD(Event.DELETE, Node.DEAD, Node.ABSENT),
    QUARANTINE(Event.QUARANTINE, Node.UNREADABLE, Node.QUARANTINED),
    FIRE(Event.FIRE, Node.ABSENT, Node.READY),
    TRIGGER(Event.TRIGGER, Node.ABSENT, Node.READY),
    HOLD(Event.HOLD, Node.ABSENT, Node.HELD),
    RELEASE_HELD_READY(Event.RELEASE_HELD, Node.HELD, Node.READY),
    RELEASE_HELD_DELAYED(Event.RELEASE_HELD, Node.HELD, Node.DELAYED),
    DROP_HELD(Event.DROP_HELD, Node.HELD, Node.ABSENT),
    DELETE_HELD(Event.DELETE, Node.HELD, Node.ABSENT),
    PUSH_PARKED(Event.PUSH, Node.ABSENT, Node.PARKED),
    REPEAT_PARKED(Event.REPEAT, Node.ABSENT, Node.PARKED),
    PROMOTE_PARKED(Event.PROMOTE, Node.DELAYED, Node.PARKED),
    REPLAY_PARKED(Event.REPLAY, Node.DEAD, Node.PARKED),
    RELEASE_HELD_PARKED(Event.RELEASE_HELD, Node.HELD, Node.PARKED),
    ADMIT(Event.ADMIT, Node.PARKED, Node.READY),
    DELETE_PARKED(Event.DELETE, Node.PARKED, Node.ABSENT),
    DEFER(Event.DEFER, Node.LEASED, Node.DELAYED),
    DEBOUNCE_READY(Event.DEBOUNCE, Node.READY, Node.READY),
    DEBOUNCE_READY_DELAYED(Event.DEBOUNCE, Node.READY, Node.DELAYED),
    DEBOUNCE_DELAYED_READY(Event.DEBOUNCE, Node.DELAYED, Node.READY),
    DEBOUNCE_DELAYED(Event.DEBOUNCE, Node.DELAYED, Node.DELAYED),
    DEBOUNCE_PARKED(Event.DEBOUNCE, Node.PARKED, Node.PARKED),
    DEBOUNCE_PARKED_DELAYED(Event.DEBOUNCE, Node.PARKED, Node.DELAYED),
    DEBOUNCE_DELAYED_PARKED(Event.DEBOUNCE, Node.DELAYED, Node.PARKED),
    COMPLETE_KEPT(Event.COMPLETE, Node.LEASED, Node.COMPLETED),
    FAIL_DISCARDED(Event.FAIL, Node.LEASED, Node.ABSENT),
    DELETE_COMPLETED(Event.DELETE, Node.COMPLETED, Node.ABSENT),
    PRUNE_COMPLETED(Event.PRUNE, Node.COMPLETED, Node.ABSENT),
    PRUNE_DEAD(Event.PRUNE, Node.DEAD, Node.ABSENT),
    RECLAIM_DEAD(Event.RECLAIM, Node.LEASED, Node.DEAD),
    CANCEL_READY(Event.CANCEL, Node.READY, Node.CANCELLED),
    CANCEL_DELAYED(Event.CANCEL, Node.DELAYED, Node.CANCELLED),
    CANCEL_LEASED(Event.CANCEL, Node.LEASED, Node.CANCELLED),
    CANCEL_HELD(Event.CANCEL, Node.HELD, Node.CANCELLED),
    SNOOZE_READY(Event.SNOOZE, Node.LEASED, Node.READY),
    SNOOZE_DELAYED(Event.SNOOZE, Node.LEASED, Node.DELAYED),
    DELETE_CANCELLED(Event.DELETE, Node.CANCELLED, Node.ABSENT),
    CANCEL_PARKED(Event.CANCEL, Node.PARKED, Node.CANCELLED),
    BLOCK(Event.BLOCK, Node.READY, Node.PARKED);

    final Event event;
    final Node from;
    final Node to;

    Edge(Event event, Node from, Node to) {
      this.event = event;
      this.from = from;
      this.to = to;
    }
  }

  /** {@code event -> from -> allowed next nodes}, derived from {@link Edge}. */
  private static final Map<Event, Map<Node, Set<Node>>> TABLE = table();

  /**
   * {@code [event][from][to] -> edge} (null where none), so that the check every plan makes is
   * three array reads: it runs on every push, claim and completion.
   */
  private static final Edge[][][] BY_MOVE = byMove();

  private static final ThreadLocal<Consumer<Edge>> RECORDER = new ThreadLocal<>();

  private static Edge[][][] byMove() {
    int nodes = Node.values().length;
    Edge[][][] t = new Edge[Event.values().length][nodes][nodes];
    for (Edge e : Edge.values()) {
      t[e.event.ordinal()][e.from.ordinal()][e.to.ordinal()] = e;
    }
    return t;
  }

  private static Map<Event, Map<Node, Set<Node>>> table() {
    Map<Event, Map<Node, Set<Node>>> t = new EnumMap<>(Event.class);
    for (Edge e : Edge.values()) {
      t.computeIfAbsent(e.event, x -> new EnumMap<>(Node.class))
          .computeIfAbsent(e.from, x -> EnumSet.noneOf(Node.class))
          .add(e.to);
    }
    t.replaceAll(
        (event, row) -> {
          row.replaceAll((from, to) -> Collections.unmodifiableSet(to));
          return Collections.unmodifiableMap(row);
        });
    return Collections.unmodifiableMap(t);
  }

  /** The nodes {@code event} may take a job to from {@code from}; empty if none. */
  static Set<Node> next(Node from, Event event) {
    return TABLE.getOrDefault(event, Map.of()).getOrDefault(from, Set.of());
  }

  /** The edge of {@code event} from {@code from} to {@code to}, if the table has it. */
  static Optional<Edge> edge(Event event, Node from, Node to) {
    return Optional.ofNullable(BY_MOVE[event.ordinal()][from.ordinal()][to.ordinal()]);
  }

  /**
   * Checks a planned move against the table and tells the recorder of this thread, if one is
   * installed.
   *
   * @throws IllegalStateException if the table has no such edge: a transition planned a move the
   *     state machine does not allow
   */
  static Edge check(Event event, Node from, Node to) {
    Edge e = BY_MOVE[event.ordinal()][from.ordinal()][to.ordinal()];
    if (e == null) {
      throw new IllegalStateException(
          "a transition planned "
              + event
              + " from "
              + from
              + " to "
              + to
              + ", which the transition table does not allow. Indicates a bug.");
    }
    Consumer<Edge> recorder = RECORDER.get();
    if (recorder != null) {
      recorder.accept(e);
    }
    return e;
  }

  /**
   * Calls {@code recorder} with every edge planned on this thread until {@link #stopRecording()}
   * (tests: which edges the model test and the simulation walk).
   */
  static void recordOnThisThread(Consumer<Edge> recorder) {
    RECORDER.set(recorder);
  }

  /** Removes this thread's recorder. */
  static void stopRecording() {
    RECORDER.remove();
  }

  /** The table as text, one line per state and event. */
  static String render() {
    StringBuilder b = new StringBuilder();
    for (Node from : Node.values()) {
      for (Event event : Event.values()) {
        Set<Node> to = next(from, event);
        if (!to.isEmpty()) {
          b.append(
              String.format(
                  Locale.ROOT,
                  "%-11s -%-10s-> %s%n",
                  from,
                  event.name().toLowerCase(Locale.ROOT),
                  to));
        }
      }
    }
    return b.toString();
  }
}
