package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A job with both a unique key and a group (docs/flow-control.md): its push is booked in its
 * group's record like any push of the group (admitted, or parked behind the limit), and a debounce
 * that moves its holder between ready and delayed frees or takes the group's slot in the same
 * commit.
 */
class UniqueGroupJobsTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final Queue<String> queue =
      Queue.builder(store, "q", Codecs.utf8())
          .clock(clock)
          .random(new Random(1))
          .groupLimit("g", 1)
          .build();

  @AfterEach
  void close() {
    store.close();
  }

  JobOptions keyed(String key) {
    return JobOptions.defaults().group("g").unique(UniqueKey.whileWaiting(key).debounce());
  }

  boolean parked(String id) {
    return JobRecord.decode(store.get(queue.keys.job(id)).orElseThrow().value()).parked;
  }

  @Test
  void keyedJobsOfAGroupAreAdmittedUpToItsLimitAndTheRestParked() {
    PushResult<String> first = queue.offer("one", keyed("k1"));
    PushResult<String> second = queue.offer("two", keyed("k2"));
    assertThat(first.created()).isTrue();
    assertThat(second.created()).isTrue();
    assertThat(parked(first.id())).as("the group's one slot").isFalse();
    assertThat(parked(second.id())).as("behind the limit").isTrue();
    assertThat(
            queue
                .offer(
                    "again", JobOptions.defaults().group("g").unique(UniqueKey.whileWaiting("k2")))
                .outcome())
        .isEqualTo(PushResult.Outcome.DUPLICATE);
    assertThat(store.count(queue.keys.parked("g"))).isEqualTo(1);

    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    queue.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("one", "two");
    assertThat(store.get(queue.keys.group("g"))).as("no group record left").isEmpty();
  }

  @Test
  void aDebounceThatDelaysTheAdmittedHolderAdmitsTheParkedJob() {
    String holder = queue.offer("one", keyed("k1")).id();
    String other = queue.offer("two", keyed("k2")).id();
    assertThat(parked(other)).isTrue();

    PushResult<String> debounced =
        queue.offer("one, later", keyed("k1").delay(Duration.ofMinutes(5)));
    assertThat(debounced.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
    assertThat(debounced.id()).isEqualTo(holder);
    assertThat(queue.job(holder).orElseThrow().status()).isEqualTo(JobStatus.DELAYED);
    assertThat(parked(other)).as("the freed slot went to the parked job").isFalse();
    assertThat(store.count(queue.keys.parked("g"))).isZero();

    // due again: the holder comes back behind the admitted job, parked
    clock.advance(Duration.ofMinutes(5));
    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    queue.worker((job, ctx) -> ran.add(job.state()), WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(ran).containsExactly("two", "one, later");
    assertThat(store.get(queue.keys.group("g"))).isEmpty();
  }

  @Test
  void aDebounceOfAParkedHolderKeepsItParkedWithTheNewState() {
    queue.offer("one", keyed("k1"));
    String parkedHolder = queue.offer("two", keyed("k2")).id();
    PushResult<String> debounced = queue.offer("two, newer", keyed("k2"));
    assertThat(debounced.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
    assertThat(parked(parkedHolder)).isTrue();
    assertThat(queue.job(parkedHolder).orElseThrow().state()).isEqualTo("two, newer");

    PushResult<String> delayed =
        queue.offer("two, later", keyed("k2").delay(Duration.ofMinutes(1)));
    assertThat(delayed.outcome()).isEqualTo(PushResult.Outcome.DEBOUNCED);
    assertThat(queue.job(parkedHolder).orElseThrow().status()).isEqualTo(JobStatus.DELAYED);
    assertThat(store.count(queue.keys.parked("g"))).as("no longer parked").isZero();
  }
}
