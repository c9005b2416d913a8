package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * History with a real worker on the in-memory store, driven by the fake clock: a completed job is
 * kept with its result and attempts, listed and counted by status with a cursor, and pruned by the
 * worker once past the retention; keep none leaves nothing.
 */
class HistoryWorkerTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();

  @AfterEach
  void close() {
    store.close();
  }

  Queue<String> queue(Retention retention) {
    return Queue.builder(store, "q", Codecs.utf8())
        .clock(clock)
        .random(new Random(1))
        .retention(retention)
        .node("node-a")
        .build();
  }

  @Test
  void aCompletedJobIsKeptWithItsResultAndAttempts() {
    Queue<String> q = queue(Retention.defaults());
    q.worker(
            (job, ctx) -> {
              if (ctx.attempt() == 1) {
                throw new IllegalStateException("first try fails");
              }
              ctx.result("sent:" + job.state());
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    Job<String> pushed = q.push("mail", JobOptions.defaults().retry(1, Backoff.NONE));
    scheduler.runUntilIdle();
    Job<String> done = q.job(pushed.id()).orElseThrow();
    assertThat(done.status()).isEqualTo(JobStatus.COMPLETED);
    assertThat(done.result()).contains("sent:mail");
    assertThat(done.finishedAt()).contains(clock.instant());
    assertThat(done.attempts()).hasSize(2);
    assertThat(done.attempts().get(0).error().orElseThrow().message()).isEqualTo("first try fails");
    assertThat(done.attempts().get(1).error()).isEmpty();
    assertThat(done.attempts()).extracting(Attempt::node).containsOnly("node-a");
    assertThat(q.jobs()).as("the queue's listing has no completed job").isEmpty();
    assertThat(q.count(JobFilter.status(JobStatus.COMPLETED))).isEqualTo(1);
  }

  @Test
  void aResultOverTheLimitIsRefusedWithTheLimitNamed() {
    Queue<String> q = queue(Retention.defaults());
    List<Throwable> refused = new ArrayList<>();
    q.worker(
            (job, ctx) -> {
              try {
                ctx.result("x".repeat(Queue.MAX_RESULT_BYTES + 1));
              } catch (IllegalArgumentException e) {
                refused.add(e);
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    Job<String> pushed = q.push("x");
    scheduler.runUntilIdle();
    assertThat(refused)
        .singleElement()
        .extracting(Throwable::getMessage)
        .asString()
        .contains("4096");
    assertThat(q.job(pushed.id()).orElseThrow().result()).isEmpty();
  }

  @Test
  void listingPagesByCursorInCompletionOrder() {
    Queue<String> q = queue(Retention.defaults());
    q.worker((job, ctx) -> {}, WorkerOptions.defaults(), scheduler).start();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      ids.add(q.push("j" + i).id());
      scheduler.runUntilIdle();
      clock.advance(Duration.ofMillis(10));
    }
    List<String> listed = new ArrayList<>();
    JobPage<String> page = q.list(JobFilter.status(JobStatus.COMPLETED), null, 3);
    int pages = 1;
    listed.addAll(page.jobs().stream().map(Job::id).toList());
    while (page.next().isPresent()) {
      page = q.list(JobFilter.status(JobStatus.COMPLETED), page.next().get(), 3);
      listed.addAll(page.jobs().stream().map(Job::id).toList());
      pages++;
    }
    assertThat(listed).containsExactlyElementsOf(ids);
    assertThat(pages).isEqualTo(3);
    assertThatThrownBy(() -> q.list(JobFilter.status(JobStatus.COMPLETED), "garbage!", 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a cursor");
    assertThatThrownBy(() -> q.list(JobFilter.status(JobStatus.COMPLETED), null, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theWorkerPrunesWhatIsPastTheRetentionInBatches() {
    Queue<String> q =
        queue(Retention.defaults().completed(Retention.Keep.youngerThan(Duration.ofMinutes(1))));
    q.worker((job, ctx) -> {}, WorkerOptions.defaults().concurrency(4), scheduler).start();
    for (int i = 0; i < Pruner.BATCH + 50; i++) {
      q.push("old" + i);
    }
    scheduler.runUntilIdle();
    clock.advance(Duration.ofSeconds(30));
    Job<String> young = q.push("young");
    scheduler.runUntilIdle();
    assertThat(q.count(JobFilter.status(JobStatus.COMPLETED))).isEqualTo(Pruner.BATCH + 51);
    scheduler.advance(Duration.ofSeconds(31)); // the old ones are past a minute now
    assertThat(q.count(JobFilter.status(JobStatus.COMPLETED))).isEqualTo(1);
    assertThat(q.job(young.id()).orElseThrow().status()).isEqualTo(JobStatus.COMPLETED);
    scheduler.advance(Duration.ofSeconds(31));
    assertThat(q.count(JobFilter.status(JobStatus.COMPLETED))).isZero();
  }

  @Test
  void keepNoneLeavesNothingBehind() {
    Queue<String> q = queue(Retention.none().dead(Retention.Keep.none()));
    q.worker(
            (job, ctx) -> {
              if (job.state().equals("bad")) {
                throw new IllegalStateException("bad");
              }
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    Job<String> ok = q.push("ok");
    Job<String> bad = q.push("bad");
    scheduler.runUntilIdle();
    assertThat(q.job(ok.id())).isEmpty();
    assertThat(q.job(bad.id())).as("no dead letters kept").isEmpty();
    assertThat(store.count(dev.kvmq.store.KeyRange.prefix(q.keys.root))).isZero();
  }
}
