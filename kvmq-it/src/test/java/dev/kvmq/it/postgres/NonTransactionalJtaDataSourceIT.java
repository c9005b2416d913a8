package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.postgres.OrderTransactions;
import dev.kvmq.it.support.postgres.OrderWars;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.it.support.postgres.PlacedOrder;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.util.Set;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A mistake a user can make on Payara with PostgreSQL: {@code kvmq.postgres.jta-datasource} names a
 * DataSource the server does not enlist in transactions ({@code <transactional>false}, here kvmq's
 * own). Its connections are in auto-commit mode with no transaction open, so a job pushed through
 * one inside a JTA transaction would commit at once, whatever the transaction does. kvmq refuses
 * such a push, saying which DataSource and why, and writes nothing; outside a transaction the same
 * push goes through kvmq's own DataSource and runs.
 */
@OnPayara
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NonTransactionalJtaDataSourceIT {

  private static final String PREFIX = "nontx-";

  @Deployment
  static WebArchive war() {
    String url = PgServer.start();
    String webXml =
        PgServer.webXml(
            PgServer.dataSource(OrderWars.KVMQ_DATASOURCE, OrderWars.SIMPLE, url, false),
            PgServer.dataSource(OrderTransactions.APP_DATASOURCE, OrderWars.SIMPLE, url, true));
    return PostgresTransactionalPushIT.war("kvmq-pg-nontx.war", webXml, OrderWars.KVMQ_DATASOURCE);
  }

  @Inject
  @QueueName("orders")
  JobQueue<PlacedOrder> orders;

  @Test
  @Order(1)
  void aPushInATransactionIsRefusedNamingTheDataSourceAndWritesNothing() throws Exception {
    UserTransaction ut = OrderTransactions.userTransaction();
    long before = orders.counts().queued();
    ut.begin();
    try {
      assertThatThrownBy(() -> orders.push(new PlacedOrder(PREFIX + "in-transaction")))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("kvmq.postgres.jta-datasource \"" + OrderWars.KVMQ_DATASOURCE)
          .hasMessageContaining("not enlisted")
          .hasMessageContaining("nothing was pushed");
    } finally {
      ut.rollback();
    }
    assertThat(orders.counts().queued()).isEqualTo(before);
  }

  @Test
  @Order(2)
  void outsideATransactionThePushGoesThroughAndRuns() throws Exception {
    OrderTransactions.createTables();
    orders.push(new PlacedOrder(PREFIX + "outside")).orElseThrow();
    Wait.until(
        "the job pushed outside a transaction to run",
        () -> OrderTransactions.handled(PREFIX),
        Set.of(PREFIX + "outside")::equals);
  }

  @Test
  @Order(3)
  @RunAsClient
  void theRefusedJobIsNowhereInTheDatabase() {
    assertThat(
            PgServer.query(
                "SELECT count(*) FROM kvmq_kv WHERE position(convert_to('"
                    + PREFIX
                    + "in-transaction', 'UTF8') in value) > 0"))
        .isZero();
    assertThat(PgServer.strings("SELECT id FROM handled WHERE id LIKE '" + PREFIX + "%'"))
        .containsExactly(PREFIX + "outside");
  }
}
