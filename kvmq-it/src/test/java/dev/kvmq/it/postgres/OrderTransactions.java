package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
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

/**
 * The in-server part of the transactional push ITs ({@link PostgresTransactionalPushIT}, {@link
 * PostgresXaPushIT}): an order's row (in {@code orders}, through the application's DataSource
 * {@value PostgresTransactionalPushIT#APP_DATASOURCE}) and its job pushed in one JTA transaction,
 * many times, with random rollbacks; then the rows and the jobs that ran ({@code handled}, written
 * by {@link OrderHandler}) must match one to one. Each IT names its orders with a prefix of its
 * own, since the tables are shared.
 */
final class OrderTransactions {

  private OrderTransactions() {}

  /**
   * Runs {@code transactions} transactions, each inserting the row {@code prefix + i} and pushing
   * its job, a third of them rolled back at random, and waits until exactly the committed orders'
   * jobs have run.
   *
   * @return the committed orders' ids
   */
  static Set<String> commitAndRollBackAtRandom(
      JobQueue<PlacedOrder> orders, String prefix, int transactions, long seed) throws Exception {
    execute(
        "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY);"
            + " CREATE TABLE IF NOT EXISTS handled (id text PRIMARY KEY)");
    UserTransaction ut = userTransaction();
    Random random = new Random(seed);
    Set<String> committed = new TreeSet<>();
    for (int i = 0; i < transactions; i++) {
      String id = prefix + i;
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
    assertThat(committed).hasSizeBetween(transactions / 3, transactions - 1);

    String mine = " WHERE id LIKE '" + prefix + "%'";
    Wait.until(
        "every committed order's job ran",
        () -> ids("SELECT id FROM handled" + mine).equals(committed));
    assertThat(ids("SELECT id FROM orders" + mine)).isEqualTo(committed);
    return committed;
  }

  /** The count of orders of {@code prefix} with no job that ran, or jobs with no order. */
  static String unmatched(String prefix) {
    return "SELECT count(*) FROM orders o FULL JOIN handled h ON o.id = h.id"
        + " WHERE (o.id IS NULL OR h.id IS NULL) AND coalesce(o.id, h.id) LIKE '"
        + prefix
        + "%'";
  }

  static UserTransaction userTransaction() throws NamingException {
    return (UserTransaction) new InitialContext().lookup("java:comp/UserTransaction");
  }

  private static DataSource app() throws NamingException {
    return (DataSource) new InitialContext().lookup(PostgresTransactionalPushIT.APP_DATASOURCE);
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
