package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.Job;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.UniqueKey;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin API's cancel, bulk cancel and delete, listing by status with a cursor, counts, and the
 * control and history fields of a job's JSON, without a server: a queue on the in-memory store with
 * a fake clock and a step-by-step worker.
 */
class ControlRestTest {

  public record Task(String label) {}

  final Jsonb jsonb = JsonbBuilder.create();
  final FakeClock clock = new FakeClock(Instant.parse("2026-12-01T10:00:00Z"));
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final InMemoryKvStore store = new InMemoryKvStore();
  final JsonbCodec<Task> codec = new JsonbCodec<>(jsonb, Task.class);
  final Queue<Task> queue = Queue.builder(store, "tasks", codec).clock(clock).build();
  final AdminQueue<Task> admin = new AdminQueue<>(queue, codec);

  @AfterEach
  void close() throws Exception {
    jsonb.close();
    store.close();
  }

  static int status(ControlRest.Refused e) {
    return e.status;
  }

  @Test
  void aWaitingJobIsCancelledOnceAndAnUnknownOneIsNotFound() {
    Job<Task> job = queue.push(new Task("a"));

    ControlRest.cancel(queue, job.id());

    Job<Task> cancelled = queue.job(job.id()).orElseThrow();
    assertThat(cancelled.status()).isEqualTo(JobStatus.CANCELLED);
    JsonObject json = QueuesResource.job(admin, cancelled, -1);
    assertThat(json.getString("status")).isEqualTo("cancelled");
    assertThat(json.getString("cancelledAt")).isEqualTo("2026-12-01T10:00:00Z");

    ControlRest.Refused again =
        catchThrowableOfType(ControlRest.Refused.class, () -> ControlRest.cancel(queue, job.id()));
    assertThat(status(again)).isEqualTo(409);
    assertThat(again.getMessage()).contains("is cancelled", "nothing to cancel");

    ControlRest.Refused unknown =
        catchThrowableOfType(
            ControlRest.Refused.class, () -> ControlRest.cancel(queue, "01NOSUCHJOB"));
    assertThat(status(unknown)).isEqualTo(404);
  }

  @Test
  void aRunningJobIsCancelledAndItsCompletionRefused() {
    List<JobEvent<Task>> events = new ArrayList<>();
    String[] id = new String[1];
    Worker<Task> worker =
        queue.worker(
            (job, ctx) -> ControlRest.cancel(queue, id[0]), // an operator's cancel while it runs
            WorkerOptions.defaults(),
            scheduler);
    worker.addListener(events::add);
    id[0] = queue.push(new Task("running")).id();
    worker.start();
    scheduler.runUntilIdle();

    assertThat(queue.job(id[0]).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
    assertThat(events)
        .as("the worker's completion after the cancel is refused")
        .singleElement()
        .isInstanceOf(JobEvent.LeaseLost.class);
    worker.stop();
    scheduler.runUntilIdle();
  }

  @Test
  void manyJobsAreCancelledByStatusAndBadStatusesAreRefused() {
    queue.push(new Task("w1"));
    queue.push(new Task("w2"));
    queue.push(new Task("d1"), JobOptions.defaults().delay(Duration.ofHours(1)));

    assertThat(ControlRest.cancelAll(queue, "waiting", null, null).getInt("cancelled"))
        .isEqualTo(2);
    assertThat(queue.counts().delayed()).isEqualTo(1);
    assertThat(ControlRest.cancelAll(queue, "delayed, waiting", null, null).getInt("cancelled"))
        .isEqualTo(1);
    assertThat(queue.counts().queued()).isZero();

    for (String bad : new String[] {null, "", "dead", "completed", "waiting,nonsense"}) {
      ControlRest.Refused e =
          catchThrowableOfType(
              ControlRest.Refused.class, () -> ControlRest.cancelAll(queue, bad, null, null));
      assertThat(status(e)).as(bad).isEqualTo(400);
      assertThat(e.field).isEqualTo("status");
      assertThat(e.getMessage()).as(bad).contains("waiting, delayed, processing, held");
    }
  }

  @Test
  void cancelledJobsAreListedPageByPageWithACursorThenDeletedInBulk() {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(queue.push(new Task("c" + i)).id());
      clock.advance(Duration.ofSeconds(1));
    }
    ControlRest.cancelAll(queue, "waiting", null, null);
    assertThat(ControlRest.count(queue, "cancelled", null, null).getJsonNumber("count").longValue())
        .isEqualTo(5);

    List<String> listed = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      JsonObject page = ControlRest.page(admin, "cancelled", cursor, 2, null, null);
      assertThat(page.getString("status")).isEqualTo("cancelled");
      assertThat(page.getJsonArray("jobs").size()).isBetween(1, 2);
      for (JsonValue j : page.getJsonArray("jobs")) {
        assertThat(j.asJsonObject().getString("status")).isEqualTo("cancelled");
        listed.add(j.asJsonObject().getString("id"));
      }
      cursor = page.containsKey("next") ? page.getString("next") : null;
      pages++;
    } while (cursor != null && pages < 10);

    assertThat(listed).containsExactlyInAnyOrderElementsOf(ids).doesNotHaveDuplicates();
    assertThat(pages).isBetween(3, 4); // 2 + 2 + 1, and perhaps an empty last page

    assertThat(ControlRest.deleteAll(queue, "cancelled", null, null).getInt("deleted"))
        .isEqualTo(5);
    assertThat(ControlRest.count(queue, "cancelled", null, null).getJsonNumber("count").longValue())
        .isZero();
  }

  @Test
  void aCompletedJobIsListedWithItsResultAndAttempt() {
    Worker<Task> worker =
        queue.worker(
            (job, ctx) -> ctx.result("done " + job.state().label()),
            WorkerOptions.defaults(),
            scheduler);
    Job<Task> job = queue.push(new Task("x"));
    worker.start();
    scheduler.runUntilIdle();

    JsonObject page = ControlRest.page(admin, "completed", null, null, null, null);
    assertThat(page.getJsonArray("jobs")).hasSize(1);
    JsonObject j = page.getJsonArray("jobs").getJsonObject(0);
    assertThat(j.getString("id")).isEqualTo(job.id());
    assertThat(j.getString("status")).isEqualTo("completed");
    assertThat(j.getString("result")).isEqualTo("done x");
    assertThat(j.getString("finishedAt")).isNotEmpty();
    assertThat(j.getJsonArray("attempts")).hasSize(1);
    JsonObject attempt = j.getJsonArray("attempts").getJsonObject(0);
    assertThat(attempt.getInt("number")).isEqualTo(1);
    assertThat(attempt.getString("node")).isEqualTo(queue.node());
    assertThat(attempt.containsKey("endedAt")).isTrue();
    assertThat(attempt.containsKey("error")).isFalse();
    assertThat(page.containsKey("next")).isFalse();
    worker.stop();
    scheduler.runUntilIdle();
  }

  @Test
  void badListingRequestsNameTheField() {
    record Bad(String status, String cursor, Integer limit, String field) {}
    for (Bad b :
        List.of(
            new Bad(null, null, null, "status"),
            new Bad("finished", null, null, "status"),
            new Bad("completed", null, 0, "limit"),
            new Bad("completed", null, 1001, "limit"),
            new Bad("completed", "not-a-cursor", 10, "cursor"))) {
      ControlRest.Refused e =
          catchThrowableOfType(
              ControlRest.Refused.class,
              () -> ControlRest.page(admin, b.status(), b.cursor(), b.limit(), null, null));
      assertThat(e).as(b.toString()).isNotNull();
      assertThat(status(e)).as(b.toString()).isEqualTo(400);
      assertThat(e.field).as(b.toString()).isEqualTo(b.field());
    }
    ControlRest.Refused e =
        catchThrowableOfType(
            ControlRest.Refused.class,
            () -> ControlRest.deleteAll(queue, "processing", null, null));
    assertThat(status(e)).isEqualTo(400);
  }

  @Test
  void jobsAreListedCountedCancelledAndDeletedByGroupAndUniqueKeyPrefix() {
    for (int i = 0; i < 6; i++) {
      JobOptions o = JobOptions.defaults().group(i % 2 == 0 ? "acme" : "other");
      if (i < 3) {
        o = o.unique(UniqueKey.whileWaiting("sync-" + i));
      }
      queue.push(new Task("t" + i), o);
    }
    JsonObject acme = ControlRest.page(admin, "waiting", null, 2, "acme", null);
    assertThat(acme.getJsonArray("jobs")).hasSize(2);
    JsonObject rest = ControlRest.page(admin, "waiting", acme.getString("next"), 2, "acme", "");
    assertThat(rest.getJsonArray("jobs")).hasSize(1);
    assertThat(rest.containsKey("next")).isFalse();
    assertThat(ControlRest.count(queue, "waiting", null, "sync-").getInt("count")).isEqualTo(3);
    assertThat(ControlRest.count(queue, "waiting", "other", "sync-").getInt("count")).isEqualTo(1);

    assertThat(ControlRest.cancelAll(queue, "waiting", "other", null).getInt("cancelled"))
        .isEqualTo(3);
    assertThat(ControlRest.deleteAll(queue, "waiting", null, "sync-").getInt("deleted"))
        .as("of acme, t0 and t2 have keys")
        .isEqualTo(2);
    assertThat(ControlRest.count(queue, "waiting", null, null).getInt("count")).isEqualTo(1);
    assertThat(ControlRest.count(queue, "cancelled", "other", null).getInt("count")).isEqualTo(3);

    ControlRest.Refused badGroup =
        catchThrowableOfType(
            ControlRest.Refused.class,
            () -> ControlRest.count(queue, "waiting", "g".repeat(201), null));
    assertThat(status(badGroup)).isEqualTo(400);
    assertThat(badGroup.field).isEqualTo("group");
    ControlRest.Refused badPrefix =
        catchThrowableOfType(
            ControlRest.Refused.class,
            () -> ControlRest.page(admin, "waiting", null, 5, null, "k".repeat(300)));
    assertThat(badPrefix.field).isEqualTo("unique");
  }
}
