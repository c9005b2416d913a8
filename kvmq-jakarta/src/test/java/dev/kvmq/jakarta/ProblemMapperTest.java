package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.KvStoreException;
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
  void anythingElseIsAnErrorThatSaysNothingMore() {
    ProblemMapper.Unexpected a =
        ProblemMapper.unexpected(new IllegalStateException("an internal detail"));

    assertThat(a.status()).isEqualTo(500);
    assertThat(a.detail()).isEqualTo("see the server log").doesNotContain("internal detail");
    assertThat(a.logged()).isEqualTo(System.Logger.Level.ERROR);
  }
}
