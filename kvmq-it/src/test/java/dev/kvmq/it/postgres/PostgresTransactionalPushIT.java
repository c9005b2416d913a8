package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Job;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import dev.kvmq.store.postgres.PostgresKvStore;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.asset.StringAsset;
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
 * rollback is refused and writes nothing. The WAR defines two DataSources on one PostgreSQL: kvmq's
 * own, non-transactional, and the application's, transactional (enlisted by the server).
 */
@OnPayara
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresTransactionalPushIT {

  static final String APP_DATASOURCE = "java:app/jdbc/app";

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
        """
                <?xml version="1.0" encoding="UTF-8"?>
                <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
                  <data-source>
                    <name>java:app/jdbc/kvmq</name>
                    <class-name>org.postgresql.ds.PGSimpleDataSource</class-name>
                    <url>%1$s</url>
                    <user>postgres</user>
                    <password>postgres</password>
                    <transactional>false</transactional>
                  </data-source>
                  <data-source>
                    <name>java:app/jdbc/app</name>
                    <class-name>org.postgresql.ds.PGSimpleDataSource</class-name>
                    <url>%1$s</url>
                    <user>postgres</user>
                    <password>postgres</password>
                  </data-source>
                </web-app>
                """
            .formatted(url);
    return Wars.withKvmq(Wars.testWar(name))
        .addAsLibraries(Wars.jarOf(PostgresKvStore.class), Wars.jarOf(org.postgresql.Driver.class))
        .addClasses(PlacedOrder.class, OrderHandler.class)
        .addAsResource(
            new StringAsset(
                "kvmq.store=postgres\n"
                    + "kvmq.postgres.datasource=java:app/jdbc/kvmq\n"
                    + "kvmq.postgres.jta-datasource="
                    + APP_DATASOURCE
                    + "\n"
                    // the tests count job records left: a job that ran must be gone, not kept
                    + "kvmq.queue.orders.keep-completed=none\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(webXml), "web.xml");
  }

  @Inject
  @QueueName("orders")
  JobQueue<PlacedOrder> orders;

  @Test
  @Order(1)
  void rowsAndJobsCommitTogetherAndRollBackTogether() throws Exception {
    execute(
        "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY);"
            + " CREATE TABLE IF NOT EXISTS handled (id text PRIMARY KEY)");
    UserTransaction ut = userTransaction();
    Random random = new Random(18);
    Set<String> committed = new TreeSet<>();
    for (int i = 0; i < TRANSACTIONS; i++) {
      String id = "order-" + i;
      ut.begin();
      try (Connection c = app().getConnection();
          PreparedStatement ps = c.prepareStatement("INSERT INTO orders (id) VALUES (?)")) {
        ps.setString(1, id);
        ps.executeUpdate();
      }
      Optional<Job<PlacedOrder>> job = orders.push(new PlacedOrder(id));
      assertThat(job).as("in-transaction: the job is returned at once").isPresent();
      if (random.nextInt(3) == 0) {
        ut.rollback();
      } else {
        ut.commit();
        committed.add(id);
      }
    }
    assertThat(committed).hasSizeBetween(TRANSACTIONS / 3, TRANSACTIONS - 1);

    Wait.until(
        "every committed order's job ran",
        () -> ids("SELECT id FROM handled WHERE id LIKE 'order-%'").equals(committed));
    assertThat(ids("SELECT id FROM orders WHERE id LIKE 'order-%'")).isEqualTo(committed);
  }

  @Test
  @Order(2)
  @RunAsClient
  void noJobIsLeftAndNoneRanWithoutItsRow() {
    Wait.until(
        "no orders job left in kvmq_kv",
        () ->
            PgServer.query(
                    "SELECT count(*) FROM kvmq_kv"
                        + " WHERE position(convert_to('order-', 'UTF8') in value) > 0")
                == 0);
    assertThat(
            PgServer.query(
                "SELECT count(*) FROM orders o FULL JOIN handled h ON o.id = h.id"
                    + " WHERE (o.id IS NULL OR h.id IS NULL)"
                    + " AND coalesce(o.id, h.id) LIKE 'order-%'"))
        .as("rows without a job that ran, or jobs that ran without a row")
        .isZero();
  }

  @Test
  @Order(3)
  void aPushInATransactionMarkedForRollbackIsRefusedAndWritesNothing() throws Exception {
    UserTransaction ut = userTransaction();
    long before = orders.counts().queued();
    ut.begin();
    try {
      ut.setRollbackOnly();
      assertThatThrownBy(() -> orders.push(new PlacedOrder("doomed")))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("marked for rollback")
          .hasMessageContaining("nothing was pushed");
    } finally {
      ut.rollback();
    }
    assertThat(orders.counts().queued()).isEqualTo(before);
  }

  private static UserTransaction userTransaction() throws NamingException {
    return (UserTransaction) new InitialContext().lookup("java:comp/UserTransaction");
  }

  private static DataSource app() throws NamingException {
    return (DataSource) new InitialContext().lookup(APP_DATASOURCE);
  }

  private static void execute(String sql) throws NamingException, SQLException {
    try (Connection c = app().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static Set<String> ids(String sql) {
    Set<String> ids = new TreeSet<>();
    try (Connection c = app().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    } catch (NamingException | SQLException e) {
      throw new IllegalStateException(sql + " failed", e);
    }
    return ids;
  }
}
