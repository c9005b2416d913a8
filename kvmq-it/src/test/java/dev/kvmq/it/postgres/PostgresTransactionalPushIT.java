package dev.kvmq.it.postgres;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.postgres.OrderChecks;
import dev.kvmq.it.support.postgres.OrderTransactions;
import dev.kvmq.it.support.postgres.OrderWars;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.it.support.postgres.PlacedOrder;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A push in the application's JTA transaction on Payara with PostgreSQL ({@code
 * kvmq.postgres.jta-datasource}, the default {@code in-transaction} mode): a business row and its
 * job are written in one transaction, many times, with random rollbacks; afterwards the rows and
 * the jobs that ran match one to one, and no job is left. A push in a transaction marked for
 * rollback is refused and writes nothing. A transaction that pushed a job of a group and stays open
 * holds up none of the group's pushes and completions on other threads. The WAR defines two
 * DataSources on one PostgreSQL: kvmq's own, non-transactional, and the application's,
 * transactional (enlisted by the server).
 */
@OnPayara
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresTransactionalPushIT {

  static final String APP_DATASOURCE = OrderTransactions.APP_DATASOURCE;

  static final String SIMPLE = OrderWars.SIMPLE;

  private static final String PREFIX = "order-";

  private static final int TRANSACTIONS = 60;

  @Deployment
  static WebArchive war() {
    return war("kvmq-pg-tx.war", PgServer.start());
  }

  /**
   * A WAR with kvmq on PostgreSQL, the {@code orders} queue and its handler, and two DataSources on
   * {@code url}: kvmq's own (non-transactional) and the application's (transactional), named in
   * {@code kvmq.postgres.jta-datasource}.
   */
  static WebArchive war(String name, String url) {
    String webXml =
        PgServer.webXml(
            PgServer.dataSource(OrderWars.KVMQ_DATASOURCE, SIMPLE, url, false),
            PgServer.dataSource(APP_DATASOURCE, SIMPLE, url, true));
    return war(name, webXml, APP_DATASOURCE);
  }

  /**
   * A WAR with kvmq on PostgreSQL, the {@code orders} queue and its handler, the DataSources of
   * {@code webXml}, and {@code jtaDataSource} as {@code kvmq.postgres.jta-datasource} ({@link
   * OrderWars#withOrders}).
   */
  static WebArchive war(String name, String webXml, String jtaDataSource) {
    return OrderWars.withOrders(Wars.withKvmq(Wars.testWar(name)), webXml, jtaDataSource);
  }

  @Inject
  @QueueName("orders")
  JobQueue<PlacedOrder> orders;

  @Test
  @Order(1)
  void rowsAndJobsCommitTogetherAndRollBackTogether() throws Exception {
    OrderTransactions.commitAndRollBackAtRandom(orders, PREFIX, TRANSACTIONS, 18);
  }

  @Test
  @Order(2)
  @RunAsClient
  void noJobIsLeftAndNoneRanWithoutItsRow() {
    OrderChecks.nothingLeftAndEveryRowHadItsJob(PREFIX);
  }

  @Test
  @Order(3)
  void aPushInATransactionMarkedForRollbackIsRefusedAndWritesNothing() throws Exception {
    OrderTransactions.aPushMarkedForRollbackIsRefused(orders, PREFIX + "doomed");
  }

  /** An open transaction that pushed a job of a group holds up none of the group's commits. */
  @Test
  @Order(4)
  void aTransactionThatPushedAJobOfAGroupHoldsUpNoneOfTheGroupsCommits() throws Exception {
    OrderTransactions.aGroupsJobsCompleteBesideAnOpenTransaction(orders, PREFIX + "grouped-");
  }
}
