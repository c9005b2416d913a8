package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobError;
import dev.kvmq.Queue;
import dev.kvmq.store.InMemoryKvStore;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Typed access to an event's job, as an {@code @Observes} method reads it. */
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
}
