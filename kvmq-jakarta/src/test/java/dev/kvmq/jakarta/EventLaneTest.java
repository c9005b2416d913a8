package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A queue's events are fired in the order given, on the lane's thread, never on the caller's: a
 * caller (the thread that commits a worker's outcomes) is not held up by a slow observer; closing
 * fires what was given, and drops what a stuck observer leaves after the timeout.
 */
class EventLaneTest {

  private final EventLane lane = new EventLane("q", Executors.defaultThreadFactory());

  @Test
  void eventsAreFiredInOrderOnAnotherThreadAndASlowOneHoldsUpNoCaller() throws Exception {
    CountDownLatch slowObserver = new CountDownLatch(1);
    List<String> fired = new CopyOnWriteArrayList<>();
    Thread caller = Thread.currentThread();

    lane.fire(
        () -> {
          awaitQuietly(slowObserver);
          fired.add("first on " + (Thread.currentThread() == caller ? "caller" : "lane"));
        });
    for (int i = 0; i < 100; i++) {
      int n = i;
      lane.fire(() -> fired.add("event " + n));
    }

    assertThat(fired).as("the caller gave 101 events while the first observer is busy").isEmpty();
    slowObserver.countDown();
    assertThat(lane.close(Duration.ofSeconds(30))).as("dropped").isZero();
    assertThat(fired).hasSize(101).first().isEqualTo("first on lane");
    for (int i = 0; i < 100; i++) {
      assertThat(fired.get(i + 1)).isEqualTo("event " + i);
    }
  }

  @Test
  void closingDropsWhatAStuckObserverLeavesAfterTheTimeoutAndLaterEventsAreNotFired()
      throws Exception {
    CountDownLatch never = new CountDownLatch(1);
    List<String> fired = new CopyOnWriteArrayList<>();
    lane.fire(() -> awaitQuietly(never));
    lane.fire(() -> fired.add("behind the stuck one"));
    lane.fire(() -> fired.add("also behind"));

    assertThat(lane.close(Duration.ofMillis(200))).as("dropped").isEqualTo(2);
    lane.fire(() -> fired.add("after close"));
    assertThat(fired).isEmpty();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
