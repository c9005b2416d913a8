package dev.kvmq.it.support.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Wait;

/**
 * The test side's checks after {@link OrderTransactions#commitAndRollBackAtRandom}, read straight
 * from the database ({@link PgServer}), never in the server.
 */
public final class OrderChecks {

  private OrderChecks() {}

  /**
   * Waits until no job of the orders of {@code prefix} is left in kvmq's table, then checks that
   * every order's row has a job that ran and every job that ran has its row, and that no
   * transaction is left prepared.
   *
   * @param prefix the start of the orders' ids
   * @throws AssertionError if a job is still there after 30 s, a row and a job don't match, or a
   *     branch is left prepared
   */
  public static void nothingLeftAndEveryRowHadItsJob(String prefix) {
    Wait.until(
        "no orders job left in kvmq_kv",
        () ->
            PgServer.query(
                    "SELECT count(*) FROM kvmq_kv WHERE position(convert_to('"
                        + prefix
                        + "', 'UTF8') in value) > 0")
                == 0);
    assertThat(PgServer.query("SELECT count(*) FROM pg_prepared_xacts"))
        .as("branches left prepared")
        .isZero();
    assertThat(PgServer.query(OrderTransactions.unmatched(prefix)))
        .as("rows without a job that ran, or jobs that ran without a row")
        .isZero();
  }
}
