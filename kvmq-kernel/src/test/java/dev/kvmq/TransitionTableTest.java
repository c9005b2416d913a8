package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.TransitionTable.Edge;
import dev.kvmq.TransitionTable.Event;
import dev.kvmq.TransitionTable.Node;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The state machine as data: which moves exist, and that nothing else is allowed. */
class TransitionTableTest {

  @Test
  void theTableIsTheEdgesAndNothingElse() {
    int allowed = 0;
    for (Node from : Node.values()) {
      for (Event event : Event.values()) {
        for (Node to : TransitionTable.next(from, event)) {
          assertThat(TransitionTable.edge(event, from, to)).isPresent();
          allowed++;
        }
      }
    }
    assertThat(allowed).isEqualTo(Edge.values().length);
  }

  @Test
  void theDocumentedMoves() {
    assertThat(TransitionTable.next(Node.ABSENT, Event.PUSH))
        .containsExactlyInAnyOrder(Node.READY, Node.DELAYED);
    assertThat(TransitionTable.next(Node.DELAYED, Event.PROMOTE)).containsExactly(Node.READY);
    assertThat(TransitionTable.next(Node.READY, Event.CLAIM)).containsExactly(Node.LEASED);
    assertThat(TransitionTable.next(Node.LEASED, Event.FAIL))
        .as("a retry, a dead letter, or gone when no dead letters are kept")
        .containsExactlyInAnyOrder(Node.READY, Node.DELAYED, Node.DEAD, Node.ABSENT);
    assertThat(TransitionTable.next(Node.LEASED, Event.COMPLETE))
        .as("gone, or kept in the history")
        .containsExactlyInAnyOrder(Node.ABSENT, Node.COMPLETED);
    assertThat(TransitionTable.next(Node.DEAD, Event.REPLAY)).containsExactly(Node.READY);
    assertThat(TransitionTable.next(Node.UNREADABLE, Event.QUARANTINE))
        .containsExactly(Node.QUARANTINED);
  }

  @Test
  void onlyALeaseHolderMovesALeasedJobAndNoOneClaimsWhatIsNotReady() {
    Set<Event> fromLeased = EnumSet.noneOf(Event.class);
    for (Edge e : Edge.values()) {
      if (e.from == Node.LEASED) {
        fromLeased.add(e.event);
      }
      if (e.event == Event.CLAIM) {
        assertThat(e.from).isEqualTo(Node.READY);
      }
    }
    assertThat(fromLeased)
        .containsExactlyInAnyOrder(
            Event.RECLAIM,
            Event.RELEASE,
            Event.RENEW,
            Event.UPDATE,
            Event.COMPLETE,
            Event.FAIL,
            Event.DELETE,
            Event.CANCEL,
            Event.SNOOZE);
    assertThat(TransitionTable.next(Node.DEAD, Event.CLAIM)).isEmpty();
    assertThat(TransitionTable.next(Node.DELAYED, Event.CLAIM))
        .as("a delayed job is promoted first")
        .isEmpty();
    assertThat(TransitionTable.next(Node.UNREADABLE, Event.DELETE)).isEmpty();
    for (Event event : Event.values()) {
      assertThat(TransitionTable.next(Node.QUARANTINED, event))
          .as("nothing leaves quarantine")
          .isEmpty();
    }
  }

  @Test
  void aCompletedJobIsOnlyPrunedOrDeleted() {
    for (Event event : Event.values()) {
      java.util.Set<Node> next = TransitionTable.next(Node.COMPLETED, event);
      if (event == Event.PRUNE || event == Event.DELETE) {
        assertThat(next).containsExactly(Node.ABSENT);
      } else {
        assertThat(next).as("a completed job does not run again (%s)", event).isEmpty();
      }
    }
    assertThat(TransitionTable.next(Node.DEAD, Event.PRUNE)).containsExactly(Node.ABSENT);
    for (Node from : Node.values()) {
      if (from != Node.COMPLETED && from != Node.DEAD) {
        assertThat(TransitionTable.next(from, Event.PRUNE)).as("prune of %s", from).isEmpty();
      }
    }
  }

  @Test
  void aHeldJobLeavesTheHeldStateOnlyByARelease() {
    assertThat(TransitionTable.next(Node.ABSENT, Event.HOLD)).containsExactly(Node.HELD);
    assertThat(TransitionTable.next(Node.HELD, Event.RELEASE_HELD))
        .containsExactlyInAnyOrder(Node.READY, Node.DELAYED);
    assertThat(TransitionTable.next(Node.HELD, Event.DROP_HELD)).containsExactly(Node.ABSENT);
    assertThat(TransitionTable.next(Node.HELD, Event.DELETE)).containsExactly(Node.ABSENT);
    Set<Event> fromHeld = EnumSet.noneOf(Event.class);
    for (Edge e : Edge.values()) {
      if (e.from == Node.HELD) {
        fromHeld.add(e.event);
      }
      if (e.to == Node.HELD) {
        assertThat(e).as("only a hold makes a held job").isEqualTo(Edge.HOLD);
      }
    }
    assertThat(fromHeld)
        .as("no claim, promote or reclaim: a held job never runs")
        .containsExactlyInAnyOrder(Event.RELEASE_HELD, Event.DROP_HELD, Event.DELETE, Event.CANCEL);
  }

  @Test
  void aCancelledJobOnlyLeavesByADeleteAndNothingEndedIsCancelled() {
    Set<Event> fromCancelled = EnumSet.noneOf(Event.class);
    for (Edge e : Edge.values()) {
      if (e.from == Node.CANCELLED) {
        fromCancelled.add(e.event);
      }
      if (e.to == Node.CANCELLED) {
        assertThat(e.event).as("only a cancel makes a cancelled job").isEqualTo(Event.CANCEL);
      }
    }
    assertThat(fromCancelled).as("a cancelled job never runs again").containsExactly(Event.DELETE);
    assertThat(TransitionTable.next(Node.DEAD, Event.CANCEL))
        .as("a dead letter has ended")
        .isEmpty();
    assertThat(TransitionTable.next(Node.LEASED, Event.RECLAIM))
        .as("a poison job is not reclaimed forever")
        .containsExactlyInAnyOrder(Node.READY, Node.DEAD);
  }

  @Test
  void aMoveOutsideTheTableIsABug() {
    assertThatThrownBy(() -> TransitionTable.check(Event.CLAIM, Node.DEAD, Node.LEASED))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("CLAIM from DEAD to LEASED")
        .hasMessageEndingWith("Indicates a bug.");
    assertThat(TransitionTable.check(Event.CLAIM, Node.READY, Node.LEASED)).isEqualTo(Edge.CLAIM);
  }

  @Test
  void aRecorderOnThisThreadHearsEveryCheckedEdge() {
    Set<Edge> heard = EnumSet.noneOf(Edge.class);
    TransitionTable.recordOnThisThread(heard::add);
    try {
      QueueKeys keys = new QueueKeys("t");
      Transitions.push(keys, Ulid.format(1, 2, 3), new byte[0], JobOptions.defaults(), 1);
    } finally {
      TransitionTable.stopRecording();
    }
    TransitionTable.check(Event.PROMOTE, Node.DELAYED, Node.READY);
    assertThat(heard).containsExactly(Edge.PUSH_READY);
  }

  @Test
  void theRenderedTableListsEveryMove() {
    String text = TransitionTable.render();
    assertThat(text.lines()).hasSize((int) countRows());
    assertThat(text).contains("LEASED      -fail      -> [ABSENT, READY, DELAYED, DEAD]");
  }

  private static long countRows() {
    long rows = 0;
    for (Node from : Node.values()) {
      for (Event event : Event.values()) {
        rows += TransitionTable.next(from, event).isEmpty() ? 0 : 1;
      }
    }
    return rows;
  }
}
