package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Pages of a queue's listing: the same jobs and places as the whole listing, fewer decodes. */
class QueueListingTest {

  /** Counts the states it decodes. */
  private static final class CountingCodec implements Codec<String> {
    final AtomicInteger decodes = new AtomicInteger();

    @Override
    public byte[] encode(String state) {
      return state.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String decode(byte[] bytes) {
      decodes.incrementAndGet();
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }

  private final FakeClock clock = new FakeClock();
  private final CountingCodec codec = new CountingCodec();
  private final Queue<String> queue =
      Queue.builder(new InMemoryKvStore(), "q", codec).clock(clock).build();

  /**
   * A state the queue's codec no longer decodes (an application's new version): listed and read
   * with a null state, and its stored bytes kept for an operator to read; a state that decodes has
   * none.
   */
  @Test
  void aStateTheCodecCantDecodeIsReadAsNullWithItsStoredBytes() {
    InMemoryKvStore store = new InMemoryKvStore();
    Queue<String> before = Queue.builder(store, "v", Codecs.utf8()).clock(clock).build();
    String old = before.push("{\"amount\":12}").id();
    Codec<Integer> strict =
        new Codec<>() {
          @Override
          public byte[] encode(Integer state) {
            return state.toString().getBytes(StandardCharsets.UTF_8);
          }

          @Override
          public Integer decode(byte[] bytes) {
            return Integer.valueOf(new String(bytes, StandardCharsets.UTF_8));
          }
        };
    Queue<Integer> after = Queue.builder(store, "v", strict).clock(clock).build();
    clock.advance(Duration.ofMillis(1)); // created later, so listed after the old job
    String fresh = after.push(7).id();

    Job<Integer> read = after.job(old).orElseThrow();
    assertThat(read.state()).isNull();
    assertThat(read.undecodedState())
        .hasValueSatisfying(
            b -> assertThat(new String(b, StandardCharsets.UTF_8)).isEqualTo("{\"amount\":12}"));
    read.undecodedState().orElseThrow()[0] = 'X';
    assertThat(read.undecodedState().orElseThrow()[0]).as("a copy each time").isEqualTo((byte) '{');
    assertThat(after.jobs().stream().map(e -> e.job().undecodedState().isPresent()))
        .containsExactly(true, false);
    assertThat(after.job(fresh).orElseThrow().undecodedState()).isEmpty();
    assertThat(read).isEqualTo(after.job(old).orElseThrow());
  }

  @Test
  void pagesAreSlicesOfTheWholeListingWithTheirPlaces() {
    for (int i = 0; i < 30; i++) {
      JobOptions o = JobOptions.defaults().priority(i % 3);
      if (i % 4 == 0) {
        o = o.delay(Duration.ofMinutes(1 + i));
      }
      queue.push("job-" + i, o);
    }
    List<JobEntry<String>> all = queue.jobs();
    assertThat(all).hasSize(30);

    for (JobStatus status : new JobStatus[] {null, JobStatus.WAITING, JobStatus.DELAYED}) {
      List<JobEntry<String>> matching =
          all.stream().filter(e -> status == null || e.job().status() == status).toList();
      for (int offset :
          new int[] {0, 1, 7, matching.size() - 1, matching.size(), matching.size() + 5}) {
        for (int limit : new int[] {0, 1, 5, 100}) {
          List<JobEntry<String>> expected = matching.stream().skip(offset).limit(limit).toList();
          assertThat(queue.jobs(status, offset, limit))
              .as("status %s, offset %d, limit %d", status, offset, limit)
              .isEqualTo(expected);
        }
      }
    }
  }

  @Test
  void aPageDecodesOnlyItsOwnStates() {
    for (int i = 0; i < 1_000; i++) {
      queue.push("job-" + i);
    }
    codec.decodes.set(0);

    List<JobEntry<String>> page = queue.jobs(JobStatus.WAITING, 500, 20);

    assertThat(page).hasSize(20);
    assertThat(page.get(0).place()).isEqualTo(501);
    assertThat(page.get(0).job().state()).isEqualTo("job-500");
    assertThat(codec.decodes.get()).isEqualTo(20);
  }

  @Test
  void statusesAreReadAtTheClocksNow() {
    queue.push("later", JobOptions.defaults().delay(Duration.ofSeconds(10)));
    assertThat(queue.jobs(JobStatus.DELAYED, 0, 10)).hasSize(1);
    assertThat(queue.jobs(JobStatus.WAITING, 0, 10)).isEmpty();

    clock.advance(Duration.ofSeconds(10));

    assertThat(queue.jobs(JobStatus.DELAYED, 0, 10)).isEmpty();
    assertThat(queue.jobs(JobStatus.WAITING, 0, 10))
        .extracting(e -> e.job().state())
        .containsExactly("later");
  }

  @Test
  void deadLetterPagesAreSlicesOfAllDeadLettersAndDecodeOnlyTheirOwnStates() {
    ManualScheduler scheduler = new ManualScheduler(clock);
    queue
        .worker(
            (job, ctx) -> {
              throw new IllegalStateException("no " + job.state());
            },
            WorkerOptions.defaults(),
            scheduler)
        .start();
    for (int i = 0; i < 25; i++) {
      queue.push("dead-" + i); // no retries: dead at its first failure
      scheduler.runUntilIdle();
      clock.advance(Duration.ofMillis(i % 3)); // some fail in the same millisecond
    }
    List<Job<String>> all = queue.deadLetters();
    assertThat(all).hasSize(25);
    for (int offset : new int[] {0, 1, 7, 24, 25, 30}) {
      for (int limit : new int[] {0, 1, 5, 100, Integer.MAX_VALUE}) {
        assertThat(queue.deadLetters(offset, limit))
            .as("offset %d, limit %d", offset, limit)
            .extracting(Job::id)
            .containsExactlyElementsOf(
                all.stream().skip(offset).limit(limit).map(Job::id).toList());
      }
    }
    codec.decodes.set(0);
    assertThat(queue.deadLetters(20, 3))
        .extracting(Job::state)
        .containsExactly(all.get(20).state(), all.get(21).state(), all.get(22).state());
    assertThat(codec.decodes.get()).isEqualTo(3);
    assertThatThrownBy(() -> queue.deadLetters(-1, 1)).hasMessageContaining("must not be negative");
    assertThatThrownBy(() -> queue.deadLetters(0, -1)).hasMessageContaining("must not be negative");
  }

  @Test
  void refusesDeadNegativeOffsetsAndLimits() {
    assertThatThrownBy(() -> queue.jobs(JobStatus.DEAD, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deadLetters()");
    assertThatThrownBy(() -> queue.jobs(null, -1, 1)).hasMessageContaining("must not be negative");
    assertThatThrownBy(() -> queue.jobs(null, 0, -1)).hasMessageContaining("must not be negative");
  }
}
