package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class QueueActivityTest {

  private static final long T0 = 1_800_000_000_000L; // an epoch millisecond on a second boundary

  @Test
  void countsEachOutcomeInTheSecondItHappened() {
    QueueActivity a = new QueueActivity("q");
    a.completed(T0);
    a.completed(T0 + 999);
    a.failed(false, T0 + 1_000);
    a.failed(true, T0 + 2_500);
    a.completed(T0 + 2_999);
    a.leaseLost();
    a.cancelled();
    a.cancelled();

    QueueActivity.Snapshot s = a.snapshot(5, T0 + 2_000);

    assertThat(s.startSecond()).isEqualTo(T0 / 1000 - 2);
    assertThat(s.completedPerSecond()).containsExactly(0, 0, 2, 0, 1);
    assertThat(s.failedPerSecond()).containsExactly(0, 0, 0, 1, 1);
    assertThat(s.completed()).isEqualTo(3);
    assertThat(s.retried()).isEqualTo(1);
    assertThat(s.dead()).isEqualTo(1);
    assertThat(s.failed()).isEqualTo(2);
    assertThat(s.leaseLost()).isEqualTo(1);
    assertThat(s.cancelled()).isEqualTo(2);
  }

  @Test
  void forgetsSecondsOlderThanTheWindowButKeepsTheTotals() {
    QueueActivity a = new QueueActivity("q");
    a.completed(T0);
    long later = T0 + QueueActivity.WINDOW_SECONDS * 1000L; // the same slot of the ring
    a.completed(later);
    a.completed(later);

    QueueActivity.Snapshot now = a.snapshot(QueueActivity.WINDOW_SECONDS, later);
    assertThat(now.completedPerSecond()[QueueActivity.WINDOW_SECONDS - 1]).isEqualTo(2);
    assertThat(sum(now.completedPerSecond())).isEqualTo(2);
    assertThat(now.completed()).isEqualTo(3);

    a.completed(T0); // a clock stepped back past the window: only the total counts it
    assertThat(sum(a.snapshot(QueueActivity.WINDOW_SECONDS, later).completedPerSecond()))
        .isEqualTo(2);
    assertThat(a.snapshot(1, later).completed()).isEqualTo(4);
  }

  @Test
  void anEmptySlotReadsAsZeroEvenAfterTheRingWrapped() {
    QueueActivity a = new QueueActivity("q");
    a.completed(T0);
    QueueActivity.Snapshot s = a.snapshot(10, T0 + 2L * QueueActivity.WINDOW_SECONDS * 1000);
    assertThat(s.completedPerSecond()).containsOnly(0);
  }

  @Test
  void handlerDurationsGiveMeanAndMax() {
    QueueActivity a = new QueueActivity("q");
    assertThat(a.snapshot(1, T0).handlerMeanMillis()).isZero();
    a.handled(2_000_000);
    a.handled(4_000_000);
    QueueActivity.Snapshot s = a.snapshot(1, T0);
    assertThat(s.handlerCalls()).isEqualTo(2);
    assertThat(s.handlerMeanMillis()).isEqualTo(3.0);
    assertThat(s.handlerMaxMillis()).isEqualTo(4.0);
  }

  @Test
  void refusesAWindowItDoesNotKeep() {
    QueueActivity a = new QueueActivity("q");
    assertThatThrownBy(() -> a.snapshot(0, T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("seconds must be 1 to 900");
    assertThatThrownBy(() -> a.snapshot(901, T0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void losesNoCountUnderConcurrentWorkers() throws Exception {
    QueueActivity a = new QueueActivity("q");
    int threads = 8;
    int each = 20_000;
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < each; i++) {
                  long at = T0 + (i % 3) * 1000L;
                  if (id % 2 == 0) {
                    a.completed(at);
                  } else {
                    a.failed(i % 2 == 0, at);
                  }
                  a.handled(1);
                }
              });
      th.start();
      started.add(th);
    }
    go.countDown();
    for (Thread th : started) {
      th.join();
    }
    QueueActivity.Snapshot s = a.snapshot(3, T0 + 2_000);
    assertThat(s.completed()).isEqualTo(4L * each);
    assertThat(s.failed()).isEqualTo(4L * each);
    assertThat(s.retried()).isEqualTo(2L * each);
    assertThat(sum(s.completedPerSecond())).isEqualTo(4L * each);
    assertThat(sum(s.failedPerSecond())).isEqualTo(4L * each);
    assertThat(s.handlerCalls()).isEqualTo(8L * each);
  }

  @Test
  void theAdminApiShapeCarriesEveryNumber() {
    QueueActivity a = new QueueActivity("mail");
    a.completed(T0);
    a.failed(true, T0);
    a.handled(5_000_000);
    JsonObject json = QueuesResource.activityJson(a.snapshot(2, T0));

    assertThat(json.getString("queue")).isEqualTo("mail");
    assertThat(json.getJsonNumber("completed").longValue()).isEqualTo(1);
    assertThat(json.getJsonNumber("failed").longValue()).isEqualTo(1);
    assertThat(json.getJsonNumber("dead").longValue()).isEqualTo(1);
    assertThat(json.getJsonNumber("retried").longValue()).isZero();
    assertThat(json.getJsonObject("handler").getJsonNumber("meanMs").doubleValue()).isEqualTo(5.0);
    JsonObject perSecond = json.getJsonObject("perSecond");
    assertThat(perSecond.getJsonNumber("start").longValue()).isEqualTo(T0 / 1000 - 1);
    assertThat(perSecond.getJsonArray("completed").toString()).isEqualTo("[0,1]");
    assertThat(perSecond.getJsonArray("failed").toString()).isEqualTo("[0,1]");
  }

  private static long sum(int[] values) {
    long s = 0;
    for (int v : values) {
      s += v;
    }
    return s;
  }
}
