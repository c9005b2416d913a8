package dev.kvmq.it.postgres;

import dev.kvmq.it.OnPayara;
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
 * A push in the application's JTA transaction on Payara with PostgreSQL, where {@code
 * kvmq.postgres.jta-datasource} is an XA DataSource (pgjdbc's {@code PGXADataSource}), and the
 * application writes its own row through a second XA DataSource: two resources in one transaction,
 * so Payara prepares both branches ({@code PREPARE TRANSACTION}) and commits them in two phases.
 * pgjdbc's XA connections say they are in auto-commit mode inside their branch; kvmq must push
 * through them all the same. Many transactions with random rollbacks: afterwards the rows and the
 * jobs that ran match one to one, and no job is left.
 */
@OnPayara
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresXaPushIT {

  private static final String PREFIX = "xa2pc-";
  private static final int TRANSACTIONS = 40;

  @Deployment
  static WebArchive war() {
    return PostgresTransactionalPushIT.war(
        "kvmq-pg-xa.war", OrderWars.xaWebXml(PgServer.start()), OrderWars.JOBS_DATASOURCE);
  }

  @Inject
  @QueueName("orders")
  JobQueue<PlacedOrder> orders;

  @Test
  @Order(1)
  void rowsAndJobsCommitInTwoPhasesTogetherAndRollBackTogether() throws Exception {
    OrderTransactions.commitAndRollBackAtRandom(orders, PREFIX, TRANSACTIONS, 19);
  }

  @Test
  @Order(2)
  @RunAsClient
  void noJobIsLeftNoBranchIsLeftPreparedAndNoneRanWithoutItsRow() {
    OrderChecks.nothingLeftAndEveryRowHadItsJob(PREFIX);
  }
}
