package dev.kvmq.it.wildfly;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.postgres.OrderChecks;
import dev.kvmq.it.support.postgres.OrderTransactions;
import dev.kvmq.it.support.postgres.OrderWars;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.it.support.postgres.PlacedOrder;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import org.assertj.core.api.Assertions;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kvmq on PostgreSQL on WildFly, with pushes in the application's JTA transaction through an XA
 * DataSource, as on Payara ({@code PostgresXaPushIT} of kvmq-it). The WAR carries the PostgreSQL
 * driver and defines three DataSources in its {@code web.xml} on one real PostgreSQL: kvmq's own
 * ({@code kvmq.postgres.datasource}, not transactional), the application's and the jobs' ({@code
 * kvmq.postgres.jta-datasource}), both pgjdbc's {@code PGXADataSource}: two XA resources in one
 * transaction, so WildFly's transaction manager prepares both branches and commits them in two
 * phases. Many transactions with random rollbacks: afterwards the rows and the jobs that ran match
 * one to one, no job is left and no branch is left prepared. A push in a transaction marked for
 * rollback is refused and writes nothing.
 */
@ExtendWith(ArquillianExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresXaOnWildFlyIT {

  private static final String PREFIX = "wildfly-xa-";
  private static final int TRANSACTIONS = 40;

  @Deployment
  static WebArchive war() {
    WebArchive war =
        KvmqWars.withKvmq(ShrinkWrap.create(WebArchive.class, "kvmq-pg-xa.war"))
            .addAsLibraries(KvmqWars.jarOf(Assertions.class));
    return OrderWars.withOrders(
        war, OrderWars.xaWebXml(PgServer.start()), OrderWars.JOBS_DATASOURCE);
  }

  @Inject
  @QueueName("orders")
  JobQueue<PlacedOrder> orders;

  @Test
  @Order(1)
  void rowsAndJobsCommitInTwoPhasesTogetherAndRollBackTogether() throws Exception {
    OrderTransactions.commitAndRollBackAtRandom(orders, PREFIX, TRANSACTIONS, 23);
  }

  @Test
  @Order(2)
  void aPushInATransactionMarkedForRollbackIsRefusedAndWritesNothing() throws Exception {
    OrderTransactions.aPushMarkedForRollbackIsRefused(orders, PREFIX + "doomed");
  }

  @Test
  @Order(3)
  @RunAsClient
  void noJobIsLeftNoBranchIsLeftPreparedAndNoneRanWithoutItsRow() {
    OrderChecks.nothingLeftAndEveryRowHadItsJob(PREFIX);
  }
}
