package dev.kvmq.it.support.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.QueueCounts;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import jakarta.transaction.Status;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * The in-server part of the transactional push ITs (on Payara {@code PostgresTransactionalPushIT}
 * and {@code PostgresXaPushIT}, on WildFly {@code PostgresXaOnWildFlyIT}): an order's row (in
 * {@code orders}, through the application's DataSource {@value #APP_DATASOURCE}) and its job pushed
 * in one JTA transaction, many times, with random rollbacks; then the rows and the jobs that ran
 * ({@code handled}, written by {@link OrderHandler}) must match one to one. Each IT names its
 * orders with a prefix of its own, since the tables are shared.
 */
public final class OrderTransactions {

  /** The application's own DataSource, which the test WARs define in their {@code web.xml}. */
  public static final String APP_DATASOURCE = "java:app/jdbc/app";

  private OrderTransactions() {}

  /**
   * Runs {@code transactions} transactions, each inserting the row {@code prefix + i} and pushing
   * its job, a third of them rolled back at random, and waits until exactly the committed orders'
   * jobs have run.
   *
   * @param orders the queue {@code orders}, as the test injects it
   * @param prefix the start of every order's id
   * @param transactions how many transactions
   * @param seed the seed of the rollbacks
   * @return the committed orders' ids
   * @throws Exception if a transaction or a statement fails
   * @throws AssertionError if the jobs that ran don't match the committed rows in time
   */
  public static Set<String> commitAndRollBackAtRandom(
      JobQueue<PlacedOrder> orders, String prefix, int transactions, long seed) throws Exception {
    createTables();
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

  /**
   * Pushes the order {@code prefix + "held"}, a job of group {@code g}, in a transaction that stays
   * open while another thread pushes, outside any transaction, two orders of {@code g}, one of
   * group {@code h} and one of no group: those must run and complete (none left in the queue) while
   * the transaction is open. Then the transaction commits, and its order must run. Before kvmq
   * wrote such a push's job delayed, without its group's record, the record's lock held the other
   * thread's pushes of {@code g}, and the completions of {@code g}'s jobs, until the commit (a new
   * user's test saw jobs run twice behind a transaction held open 9 s).
   *
   * @param orders the queue {@code orders}, as the test injects it, with a group limit
   * @param prefix the start of every order's id
   * @throws Exception if a transaction, a statement or the other thread fails
   * @throws AssertionError if the other thread's pushes take over 30 s, its jobs don't complete
   *     within 30 s with the transaction open, or the committed order's job does not run
   */
  public static void aGroupsJobsCompleteBesideAnOpenTransaction(
      JobQueue<PlacedOrder> orders, String prefix) throws Exception {
    createTables();
    UserTransaction ut = userTransaction();
    String held = prefix + "held";
    Map<String, String> beside = new TreeMap<>();
    beside.put(prefix + "g-1", "g");
    beside.put(prefix + "g-2", "g");
    beside.put(prefix + "h-1", "h");
    beside.put(prefix + "plain-1", null);
    ExecutorService other =
        (ExecutorService) new InitialContext().lookup("java:comp/DefaultManagedExecutorService");
    ut.begin();
    try {
      insertOrder(held);
      orders.push(new PlacedOrder(held), JobOptions.defaults().group("g"));
      other
          .submit(
              () -> {
                beside.forEach(
                    (id, group) ->
                        orders.push(new PlacedOrder(id), JobOptions.defaults().group(group)));
                return null;
              })
          .get(30, TimeUnit.SECONDS);
      Wait.until(
          "the orders pushed beside the open transaction ran, and no job is left in the queue",
          () -> handled(prefix).containsAll(beside.keySet()) && orders.counts().equals(NONE));
      assertThat(handled(prefix)).as("not before the commit").doesNotContain(held);
      ut.commit();
    } finally {
      if (ut.getStatus() != Status.STATUS_NO_TRANSACTION) {
        ut.rollback();
      }
    }
    Wait.until("the committed order's job ran", () -> handled(prefix).contains(held));
  }

  private static final QueueCounts NONE = new QueueCounts(0, 0, 0, 0);

  private static void insertOrder(String id) throws NamingException, SQLException {
    try (Connection c = app().getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO orders (id) VALUES (?)")) {
      ps.setString(1, id);
      ps.executeUpdate();
    }
  }

  /**
   * Creates the application's tables {@code orders} and {@code handled} (where {@link OrderHandler}
   * writes), if they are not there.
   *
   * @throws NamingException if the application's DataSource is not bound
   * @throws SQLException if the statements fail
   */
  public static void createTables() throws NamingException, SQLException {
    execute(
        "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY);"
            + " CREATE TABLE IF NOT EXISTS handled (id text PRIMARY KEY)");
  }

  /**
   * The ids in {@code handled} that start with {@code prefix}: the orders whose job ran.
   *
   * @param prefix the start of the ids
   * @return the ids, sorted
   * @throws IllegalStateException if the query fails
   */
  public static Set<String> handled(String prefix) {
    return ids("SELECT id FROM handled WHERE id LIKE '" + prefix + "%'");
  }

  /**
   * Pushes in a transaction marked for rollback: the push must be refused, saying why, and write
   * nothing.
   *
   * @param orders the queue {@code orders}, as the test injects it
   * @param id the order's id
   * @throws Exception if the transaction can't be begun or rolled back
   * @throws AssertionError if the push was not refused so, or the queue's count changed
   */
  public static void aPushMarkedForRollbackIsRefused(JobQueue<PlacedOrder> orders, String id)
      throws Exception {
    UserTransaction ut = userTransaction();
    long before = orders.counts().queued();
    ut.begin();
    try {
      ut.setRollbackOnly();
      assertThatThrownBy(() -> orders.push(new PlacedOrder(id)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("marked for rollback")
          .hasMessageContaining("nothing was pushed");
    } finally {
      ut.rollback();
    }
    assertThat(orders.counts().queued()).isEqualTo(before);
  }

  /**
   * A query: the count of orders of {@code prefix} with no job that ran, or jobs with no order.
   *
   * @param prefix the start of the orders' ids
   * @return the SQL
   */
  public static String unmatched(String prefix) {
    return "SELECT count(*) FROM orders o FULL JOIN handled h ON o.id = h.id"
        + " WHERE (o.id IS NULL OR h.id IS NULL) AND coalesce(o.id, h.id) LIKE '"
        + prefix
        + "%'";
  }

  /**
   * @return the server's {@code UserTransaction}
   * @throws NamingException if it has none in {@code java:comp}
   */
  public static UserTransaction userTransaction() throws NamingException {
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
