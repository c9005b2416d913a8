package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.PushFailedException;
import dev.kvmq.store.KvStoreException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A store that fails is a 503 that says so, logged at DEBUG (the store logs its outage once); a new
 * user's dashboard, polling once a second through a PostgreSQL outage on Payara, got a 500 "see the
 * server log" and an ERROR with a stack trace for every request (147 in one outage).
 */
class ProblemMapperTest {

  @Test
  void aFailingStoreIsUnavailableWithItsReasonAndLogsOnlyAtDebug() {
    ProblemMapper.Unexpected a =
        ProblemMapper.unexpected(
            new KvStoreException(
                "PostgresKvStore[kvmq_kv]: get failed: This connection has been closed. [SQLState"
                    + " 08003]"));

    assertThat(a.status()).isEqualTo(503);
    assertThat(a.detail()).contains("the store is failing", "SQLState 08003");
    assertThat(a.logged()).isEqualTo(System.Logger.Level.DEBUG);
  }

  @Test
  void aPushWhoseCommitFailedIsUnavailableAndListsItsJobsIds() {
    KvStoreException store =
        new KvStoreException(
            "PostgresKvStore[kvmq_kv]: commit failed: An I/O error occurred; the commit's outcome is"
                + " unknown");
    PushFailedException pushed =
        new PushFailedException("mail", List.of("01KDVDNA00NF6G00V7K35QB1WP"), store);

    ProblemMapper.Unexpected a = ProblemMapper.unexpected(pushed);
    assertThat(a.status()).isEqualTo(503);
    assertThat(a.detail())
        .contains("job 01KDVDNA00NF6G00V7K35QB1WP of queue mail", "outcome is unknown");
    assertThat(a.jobIds()).containsExactly("01KDVDNA00NF6G00V7K35QB1WP");
    JsonObject body =
        Json.createReader(
                new StringReader(Problem.body(a.status(), a.title(), a.detail(), null, a.jobIds())))
            .readObject();
    assertThat(body.getInt("status")).isEqualTo(503);
    assertThat(body.getJsonArray("jobIds").getString(0)).isEqualTo("01KDVDNA00NF6G00V7K35QB1WP");
    ProblemMapper.Unexpected other = ProblemMapper.unexpected(store);
    assertThat(other.jobIds()).as("a failure that is no push's").isEmpty();
    assertThat(Problem.body(503, "Service Unavailable", other.detail(), null, other.jobIds()))
        .doesNotContain("jobIds");
  }

  @Test
  void anythingElseIsAnErrorThatSaysNothingMore() {
    ProblemMapper.Unexpected a =
        ProblemMapper.unexpected(new IllegalStateException("an internal detail"));

    assertThat(a.status()).isEqualTo(500);
    assertThat(a.detail()).isEqualTo("see the server log").doesNotContain("internal detail");
    assertThat(a.logged()).isEqualTo(System.Logger.Level.ERROR);
  }
}
