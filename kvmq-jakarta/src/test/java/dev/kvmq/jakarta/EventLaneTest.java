package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
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

  @Test
  void theFirstBacklogOverTheLimitIsLoggedOnceAsAWarning() throws Exception {
    Logger log = Logger.getLogger(KvmqRuntime.class.getName());
    List<LogRecord> records = new CopyOnWriteArrayList<>();
    Handler capture =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            records.add(r);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    boolean parents = log.getUseParentHandlers();
    log.setUseParentHandlers(false);
    log.addHandler(capture);
    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    try {
      lane.fire(
          () -> {
            started.countDown();
            awaitQuietly(busy);
          });
      assertThat(started.await(30, TimeUnit.SECONDS)).as("the first observer runs").isTrue();
      for (int i = 0; i < EventLane.BACKLOG_WARNING; i++) {
        lane.fire(() -> {});
      }
      assertThat(warnings(records)).as("exactly the limit waits: no warning").isEmpty();
      for (int i = 0; i < EventLane.BACKLOG_WARNING; i++) {
        lane.fire(() -> {});
      }
      assertThat(warnings(records))
          .as("said once, however far over the limit")
          .singleElement()
          .satisfies(
              r ->
                  assertThat(r.getMessage())
                      .contains("more than 10000 events of queue q wait for their observers"));
    } finally {
      busy.countDown();
      assertThat(lane.close(Duration.ofSeconds(30))).as("dropped").isZero();
      log.removeHandler(capture);
      log.setUseParentHandlers(parents);
    }
  }

  @Test
  void theThreadEndsWhenIdleAndTheNextEventGetsANewOne() throws Exception {
    List<Thread> made = new CopyOnWriteArrayList<>();
    ThreadFactory factory =
        r -> {
          Thread t = Executors.defaultThreadFactory().newThread(r);
          made.add(t);
          return t;
        };
    EventLane idling = new EventLane("q", factory, Duration.ofMillis(50));
    List<String> fired = new CopyOnWriteArrayList<>();
    fireAndAwait(idling, fired, "one");
    Thread first = made.get(0);
    first.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(first.isAlive()).as("the lane's thread ended when idle").isFalse();
    fireAndAwait(idling, fired, "two");
    assertThat(made).as("a new thread for the event after the idle time").hasSize(2);
    assertThat(fired).containsExactly("one", "two");
    assertThat(idling.close(Duration.ofSeconds(30))).isZero();
  }

  /** Fires an event that adds {@code event} to {@code fired}, and waits until it has. */
  private static void fireAndAwait(EventLane lane, List<String> fired, String event)
      throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    lane.fire(
        () -> {
          fired.add(event);
          done.countDown();
        });
    assertThat(done.await(30, TimeUnit.SECONDS)).as("event %s fired", event).isTrue();
  }

  private static List<LogRecord> warnings(List<LogRecord> records) {
    return records.stream().filter(r -> r.getLevel() == Level.WARNING).toList();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
