package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.WorkerOptions;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code kvmq_jobs} view shows a job's last failure whatever characters it holds. A record
 * keeps its strings in Java's modified UTF-8, which PostgreSQL does not take as UTF-8 when they
 * hold a character beyond the BMP (a surrogate pair, 3 bytes each) or a NUL (C0 80): the view used
 * to show no error at all for such a job, not even its type and time (a new user's test, a message
 * with an emoji). {@code kvmq_mutf8} decodes them.
 */
@PostgresTest
class PostgresJobsViewTest {

  @Test
  void aFailureShowsWhateverCharactersItsMessageHas(TestSchema schema) throws Exception {
    FakeClock clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
    ManualScheduler scheduler = new ManualScheduler(clock);
    String odd = "rocket \uD83D\uDE80, nul \u0000, lone \uD800 and \uDC00, then \u00e9\u65e5";
    try (PostgresKvStore store = schema.store().build()) {
      Queue<String> queue = Queue.builder(store, "view", Codecs.utf8()).clock(clock).build();
      queue
          .worker(
              (job, ctx) -> {
                // the message itself: the state's codec would have made lone surrogates '?'
                throw new IllegalStateException(job.state().equals("odd") ? odd : job.state());
              },
              WorkerOptions.defaults(),
              scheduler)
          .start();
      JobOptions once = JobOptions.defaults().retry(0, Backoff.NONE);
      String plainId = queue.push("plain", once).id();
      String oddId = queue.push("odd", once).id();
      scheduler.runUntilIdle();
      assertThat(queue.deadLetters()).hasSize(2);

      assertThat(failure(schema, plainId))
          .containsExactly("dead", "java.lang.IllegalStateException", "plain", clock.instant());
      assertThat(failure(schema, oddId))
          .containsExactly(
              "dead",
              "java.lang.IllegalStateException",
              "rocket \uD83D\uDE80, nul \uFFFD, lone \uFFFD and \uFFFD, then \u00e9\u65e5",
              clock.instant());
    }
  }

  /** The view's status, error type, error message and failure time of a job. */
  private static List<Object> failure(TestSchema schema, String id) throws Exception {
    try (Connection c = schema.db().unpooled().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT status, error_type, error_message, failed_at FROM "
                    + schema.name()
                    + ".kvmq_jobs WHERE id = ?")) {
      s.setString(1, id);
      try (ResultSet rs = s.executeQuery()) {
        assertThat(rs.next()).as("job %s in the view", id).isTrue();
        List<Object> row = new ArrayList<>();
        row.add(rs.getString(1));
        row.add(rs.getString(2));
        row.add(rs.getString(3));
        row.add(rs.getTimestamp(4) == null ? null : rs.getTimestamp(4).toInstant());
        return row;
      }
    }
  }
}
