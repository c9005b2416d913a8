package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobError;
import dev.kvmq.JobEvent;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Typed access to an event's job, as an {@code @Observes} method reads it; which CDI event a
 * worker's event fires.
 */
class EventsTest {

  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue = Queue.builder(store, "mail", Codecs.utf8()).build();

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void anObserverGetsTheStateWithItsType() {
    Job<?> job = queue.push("ada@example.org");
    JobCompleted completed = new JobCompleted("mail", job, Optional.empty());
    String address = completed.job(String.class).state();
    assertThat(address).isEqualTo("ada@example.org");
    assertThat(completed.job(CharSequence.class).state()).isEqualTo("ada@example.org");
    JobFailed failed = new JobFailed("mail", job, new JobError("E", "m", Instant.EPOCH), true);
    assertThat(failed.job(String.class).id()).isEqualTo(job.id());
    assertThat(new JobLeaseLost("mail", job, "complete").job(String.class).state())
        .isEqualTo("ada@example.org");
  }

  @Test
  void theWrongTypeIsRefusedWithBothNames() {
    Job<?> job = queue.push("ada@example.org");
    JobCompleted completed = new JobCompleted("mail", job, Optional.empty());
    assertThatThrownBy(() -> completed.job(Integer.class))
        .isInstanceOf(ClassCastException.class)
        .hasMessage("the jobs of queue \"mail\" hold java.lang.String, not java.lang.Integer");
    assertThatThrownBy(
            () ->
                new JobFailed("mail", job, new JobError("E", "m", Instant.EPOCH), false)
                    .job(Long.class))
        .isInstanceOf(ClassCastException.class)
        .hasMessageContaining("java.lang.Long");
  }

  @Test
  void aSnoozeFiresOneJobSnoozedWithTheTimeTheJobRunsAgainThenTheCompletion() {
    FakeClock clock = new FakeClock();
    ManualScheduler scheduler = new ManualScheduler(clock);
    Queue<String> timed = Queue.builder(store, "digest", Codecs.utf8()).clock(clock).build();
    List<Object> fired = new ArrayList<>();
    Worker<String> w =
        timed.worker(
            (job, ctx) -> {
              if (ctx.attempt() == 1) {
                ctx.snooze(Duration.ofMinutes(5));
              }
            },
            WorkerOptions.defaults(),
            scheduler);
    w.addListener(e -> fired.add(KvmqRuntime.cdiEvent(e)));
    w.start();
    Job<String> pushed = timed.push("daily");
    Instant pushedAt = clock.instant();

    scheduler.runUntilIdle();

    assertThat(fired).singleElement().isInstanceOf(JobSnoozed.class);
    JobSnoozed snoozed = (JobSnoozed) fired.get(0);
    assertThat(snoozed.queue()).isEqualTo("digest");
    assertThat(snoozed.runsAt()).isEqualTo(pushedAt.plus(Duration.ofMinutes(5)));
    assertThat(snoozed.job().id()).isEqualTo(pushed.id());
    assertThat(snoozed.job().status()).isEqualTo(JobStatus.DELAYED);
    assertThat(snoozed.job(String.class).state()).isEqualTo("daily");

    scheduler.advance(Duration.ofMinutes(6));
    assertThat(fired).hasSize(2).last().isInstanceOf(JobCompleted.class);
    w.stop();
  }

  /**
   * An operator's cancel of a running job fires {@link JobLeaseLost} with {@code cancelled} true
   * and counts as cancelled, in the activity and in the metrics; a lease lost without a cancel
   * counts as lease lost.
   */
  @Test
  void aCancelledRunCountsAsCancelledNotAsALostLease() {
    FakeClock clock = new FakeClock();
    ManualScheduler scheduler = new ManualScheduler(clock);
    Queue<String> timed = Queue.builder(store, "report", Codecs.utf8()).clock(clock).build();
    List<JobEvent<String>> events = new ArrayList<>();
    Worker<String> w =
        timed.worker((job, ctx) -> timed.cancel(job.id()), WorkerOptions.defaults(), scheduler);
    w.addListener(events::add);
    w.start();
    timed.push("monthly");
    scheduler.runUntilIdle();
    w.stop();
    scheduler.runUntilIdle();

    assertThat(events).singleElement().isInstanceOf(JobEvent.LeaseLost.class);
    JobLeaseLost fired = (JobLeaseLost) KvmqRuntime.cdiEvent(events.get(0));
    assertThat(fired.cancelled()).isTrue();
    assertThat(fired.refusedOutcome()).isEqualTo("complete");

    QueueActivity activity = new QueueActivity("report");
    List<String> counted = new ArrayList<>();
    QueueMetrics metrics = recording(counted);
    KvmqRuntime.count(events.get(0), activity, metrics);
    Job<String> job = events.get(0).job();
    KvmqRuntime.count(
        new JobEvent.LeaseLost<>(job, JobEvent.RefusedOutcome.RENEW), activity, metrics);

    QueueActivity.Snapshot s = activity.snapshot(1, clock.millis());
    assertThat(s.cancelled()).isEqualTo(1);
    assertThat(s.leaseLost()).isEqualTo(1);
    assertThat(counted).containsExactly("cancelled report", "leaseLost report");
  }

  /** Metrics that write down the counters they were asked to add to. */
  private static QueueMetrics recording(List<String> counted) {
    return new QueueMetrics() {
      @Override
      public void register(Queue<?> queue) {}

      @Override
      public void started(String queue, long pickupMillis, long claimMillis) {
        counted.add("started " + queue);
      }

      @Override
      public void completed(String queue) {
        counted.add("completed " + queue);
      }

      @Override
      public void failed(String queue, boolean dead) {
        counted.add("failed " + queue);
      }

      @Override
      public void leaseLost(String queue) {
        counted.add("leaseLost " + queue);
      }

      @Override
      public void cancelled(String queue) {
        counted.add("cancelled " + queue);
      }

      @Override
      public void handled(String queue, long nanos) {}

      @Override
      public void close() {}
    };
  }
}
