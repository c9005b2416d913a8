package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testing.LogCapture;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tracing hook ({@link JobTracing}) on the in-memory store, driven by the fake clock: what a
 * push stores is what every run of the job sees, each run ends with the outcome that was recorded,
 * and a hook that throws costs no job anything.
 */
class JobTracingTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Recording tracing = new Recording();
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8())
          .clock(clock)
          .random(new Random(1))
          .tracing(tracing)
          .build();

  @AfterEach
  void close() {
    store.close();
  }

  /** What a recording hook saw of one run. */
  record Seen(
      String queue,
      String id,
      int attempt,
      Map<String, String> context,
      Instant claimedAt,
      Instant startedAt,
      List<String> calls,
      JobTracing.Outcome outcome,
      Throwable error) {}

  /** Records every call; its push context is whatever the "caller" has set as current. */
  static final class Recording implements JobTracing {
    volatile Map<String, String> current = Map.of();
    final List<Seen> runs = new ArrayList<>();
    RuntimeException throwInPush;
    RuntimeException throwInStarted;
    RuntimeException throwInEnd;

    @Override
    public Map<String, String> pushContext(String queue) {
      if (throwInPush != null) {
        throw throwInPush;
      }
      return current;
    }

    @Override
    public synchronized Span started(Run run) {
      if (throwInStarted != null) {
        throw throwInStarted;
      }
      List<String> calls = new ArrayList<>(List.of("started"));
      int index = runs.size();
      runs.add(seen(run, calls, null, null));
      return new Span() {
        @Override
        public void detach() {
          calls.add("detach");
        }

        @Override
        public void end(Outcome outcome, Throwable error) {
          calls.add("end");
          synchronized (Recording.this) {
            runs.set(index, seen(run, calls, outcome, error));
          }
          if (throwInEnd != null) {
            throw throwInEnd;
          }
        }
      };
    }

    private static Seen seen(Run run, List<String> calls, Outcome outcome, Throwable error) {
      return new Seen(
          run.job().queue(),
          run.job().id(),
          run.job().attempt(),
          run.traceContext(),
          run.claimedAt(),
          run.startedAt(),
          calls,
          outcome,
          error);
    }
  }

  static Map<String, String> parent(String traceId) {
    return Map.of("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01", "tracestate", "k=v");
  }

  Worker<String> worker(JobHandler<String> handler, WorkerOptions options) {
    Worker<String> w = queue.worker(handler, options, scheduler);
    w.start();
    return w;
  }

  @Test
  void theContextOfThePushIsTheOneEveryRunSeesRetriesIncluded() {
    Map<String, String> a = parent("4bf92f3577b34da6a3ce929d0e0e4736");
    Map<String, String> b = parent("0af7651916cd43dd8448eb211c80319c");
    tracing.current = a;
    Job<String> first =
        queue.push("a", JobOptions.defaults().retry(1, Backoff.fixed(Duration.ofSeconds(10))));
    tracing.current = b;
    Job<String> second = queue.push("b");
    tracing.current = Map.of("traceparent", "the worker's own context, never stored");
    worker(
        (job, ctx) -> {
          if (job.state().equals("a") && ctx.attempt() == 1) {
            throw new IllegalStateException("first attempt of a");
          }
        },
        WorkerOptions.defaults().concurrency(1));
    scheduler.runUntilIdle();
    clock.advance(Duration.ofSeconds(3));
    Instant retryDue = clock.instant().plusSeconds(7);
    scheduler.advance(Duration.ofSeconds(7));

    assertThat(tracing.runs)
        .extracting(Seen::id, Seen::attempt, Seen::context, Seen::outcome)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(first.id(), 1, a, JobTracing.Outcome.FAILED),
            org.assertj.core.groups.Tuple.tuple(second.id(), 1, b, JobTracing.Outcome.COMPLETED),
            org.assertj.core.groups.Tuple.tuple(first.id(), 2, a, JobTracing.Outcome.COMPLETED));
    assertThat(tracing.runs).allMatch(s -> s.queue().equals("q"));
    Seen retry = tracing.runs.get(2);
    assertThat(retry.startedAt()).isEqualTo(retryDue);
    assertThat(retry.claimedAt()).isEqualTo(retryDue);
    assertThat(tracing.runs.get(0).error())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("first attempt of a");
    assertThat(tracing.runs.get(1).error()).isNull();
    assertThat(tracing.runs)
        .as("detach on the handler's thread after the handler, then end once")
        .allMatch(s -> s.calls().equals(List.of("started", "detach", "end")));
  }

  @Test
  void aHeldJobCarriesTheContextOfItsPushToItsRunOnceReleased() {
    Map<String, String> a = parent("4bf92f3577b34da6a3ce929d0e0e4736");
    tracing.current = a;
    Job<String> held = queue.holdAll(List.of("h"), JobOptions.defaults()).get(0);
    tracing.current = Map.of("traceparent", "the releasing side's context, never stored");
    queue.releaseHeld(List.of(held.id()));
    worker((job, ctx) -> {}, WorkerOptions.defaults());
    scheduler.runUntilIdle();
    assertThat(tracing.runs)
        .extracting(Seen::id, Seen::context, Seen::outcome)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(held.id(), a, JobTracing.Outcome.COMPLETED));
  }

  @Test
  void aJobWithNoRetriesLeftEndsDead() {
    queue.push("x");
    worker(
        (job, ctx) -> {
          throw new IllegalArgumentException("bad x");
        },
        WorkerOptions.defaults());
    scheduler.runUntilIdle();
    assertThat(tracing.runs)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.outcome()).isEqualTo(JobTracing.Outcome.DEAD);
              assertThat(s.error()).hasMessage("bad x");
            });
    assertThat(queue.deadLetters()).hasSize(1);
  }

  @Test
  void aRunWhoseLeaseWasTakenOverEndsLeaseLost() {
    Job<String> job = queue.push("slow");
    ManualScheduler other = new ManualScheduler(clock);
    List<String> ranByOther = new ArrayList<>();
    worker(
        (j, ctx) -> {
          if (ranByOther.isEmpty()) {
            // this worker stalls (no renewals) past its lease; another worker takes the job
            clock.advance(Duration.ofSeconds(6));
            queue.worker((o, c) -> ranByOther.add(o.id()), WorkerOptions.defaults(), other).start();
            other.runUntilIdle();
          }
        },
        WorkerOptions.defaults()
            .concurrency(1)
            .lease(Duration.ofSeconds(5), Duration.ofSeconds(2)));
    scheduler.runUntilIdle();
    assertThat(ranByOther).containsExactly(job.id());
    assertThat(tracing.runs)
        .extracting(Seen::attempt, Seen::outcome)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(1, JobTracing.Outcome.LEASE_LOST),
            org.assertj.core.groups.Tuple.tuple(2, JobTracing.Outcome.COMPLETED));
  }

  @Test
  void aJobWhoseStateCannotBeDecodedIsTracedAsItsFailure() {
    Queue<String> strict =
        Queue.builder(store, "q", new FailingCodec()).clock(clock).tracing(tracing).build();
    strict.push("x");
    List<String> ran = new ArrayList<>();
    strict.worker((job, ctx) -> ran.add(job.id()), WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(ran).isEmpty();
    assertThat(tracing.runs)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.outcome()).isEqualTo(JobTracing.Outcome.DEAD);
              assertThat(s.error()).hasMessage("cannot decode");
            });
  }

  /** Encodes as UTF-8 and refuses to decode: a poison job. */
  static final class FailingCodec implements Codec<String> {
    @Override
    public byte[] encode(String value) {
      return Codecs.utf8().encode(value);
    }

    @Override
    public String decode(byte[] bytes) {
      throw new IllegalArgumentException("cannot decode");
    }
  }

  @Test
  void aHookThatThrowsEverywhereLosesNoJobAndIsLoggedOnce() {
    LogCapture log = new LogCapture(JobTracing.class.getName());
    List<LogRecord> logged = log.records();
    try {
      tracing.throwInPush = new IllegalStateException("push hook broken");
      Job<String> a = queue.push("a");
      tracing.throwInPush = null;
      tracing.current = parent("4bf92f3577b34da6a3ce929d0e0e4736");
      Job<String> b = queue.push("b");
      tracing.throwInEnd = new IllegalStateException("end hook broken");
      List<String> ran = new ArrayList<>();
      worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults().concurrency(1));
      scheduler.runUntilIdle();
      tracing.throwInStarted = new IllegalStateException("started hook broken");
      Job<String> c = queue.push("c");
      scheduler.runUntilIdle();

      assertThat(ran).containsExactly("a", "b", "c");
      assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
      assertThat(tracing.runs)
          .extracting(Seen::id, Seen::context, Seen::outcome)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(a.id(), Map.of(), JobTracing.Outcome.COMPLETED),
              org.assertj.core.groups.Tuple.tuple(
                  b.id(), tracing.current, JobTracing.Outcome.COMPLETED));
      assertThat(c.id()).isNotNull();
      assertThat(logged)
          .as("one line for the broken hook, not one per call")
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.getLevel()).isEqualTo(Level.WARNING);
                assertThat(r.getMessage()).contains("queue q").contains("push hook broken");
              });
    } finally {
      log.close();
    }
  }

  @Test
  void withoutAHookNothingIsStored() {
    Queue<String> plain = Queue.builder(store, "plain", Codecs.utf8()).clock(clock).build();
    Job<String> job = plain.push("x");
    JobRecord r = JobRecord.decode(store.get(plain.keys.job(job.id())).orElseThrow().value());
    assertThat(r.traceContext).isEmpty();
  }
}
