package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.XAConnection;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.xa.PGXADataSource;

/**
 * A push in an XA branch of pgjdbc's {@link PGXADataSource}, driven here as a transaction manager
 * drives it ({@code start}, {@code end}, {@code prepare}, {@code commit} or {@code rollback}). Such
 * a connection opens its branch with {@code BEGIN} and keeps saying it is in auto-commit mode, so
 * {@link ConnectionStore} can't go by {@code getAutoCommit()}: the job and the branch's row exist
 * exactly when the branch commits, in one phase or two, and outside a branch the same connection is
 * refused and writes nothing. The shared test database allows prepared transactions.
 */
@PostgresTest
class PostgresXaBranchTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final AtomicInteger BRANCHES = new AtomicInteger();

  private TestDatabase db;
  private String schema;
  private PostgresKvStore store;
  private Queue<String> queue;
  private XAConnection xa;
  private final List<Xid> open = new ArrayList<>();
  private ScheduledExecutorService executor;
  private Worker<String> worker;

  @BeforeEach
  void open(TestSchema fresh) throws SQLException {
    db = fresh.db();
    schema = fresh.name();
    store = fresh.store().build();
    queue = Queue.builder(store, "jobs", Codecs.utf8()).build();
    queue.counts(); // creates the schema
    db.execute("CREATE TABLE " + schema + ".orders (id text PRIMARY KEY)");
    PGXADataSource source = new PGXADataSource();
    source.setUrl(db.jdbcUrl());
    xa = source.getXAConnection();
  }

  @AfterEach
  void close() throws SQLException, InterruptedException {
    if (worker != null) {
      worker.stop(Duration.ofSeconds(10));
      executor.shutdownNow();
    }
    for (Xid xid : open) {
      try {
        xa.getXAResource().rollback(xid); // a branch a failed test left prepared or active
      } catch (XAException ignored) {
        // already ended
      }
    }
    xa.close();
    store.close();
  }

  @Test
  void aBranchPreparedAndCommittedInTwoPhasesCommitsTheRowAndTheJobTogether()
      throws SQLException, XAException {
    XAResource resource = xa.getXAResource();
    Connection c = xa.getConnection();
    Xid xid = begin(resource);
    assertThat(c.getAutoCommit())
        .as("pgjdbc's premise: an XA branch still says auto-commit")
        .isTrue();

    insertOrder(c, "order-1");
    ConnectionStore view = store.inTransaction(c, false); // a prepared branch must not NOTIFY
    Job<String> job = queue.withStore(view).push("confirm order-1");
    resource.end(xid, XAResource.TMSUCCESS);
    assertThat(resource.prepare(xid)).isEqualTo(XAResource.XA_OK);

    assertThat(queue.job(job.id())).as("prepared, not committed").isEmpty();
    assertThat(orders()).isEmpty();
    resource.commit(xid, false);
    open.remove(xid);
    view.afterCommit();

    assertThat(queue.job(job.id())).isPresent();
    assertThat(orders()).containsExactly("order-1");
  }

  @Test
  void aBranchCommittedInOnePhaseCommitsAndWakesTheWorker() throws SQLException, XAException {
    Set<String> ran = ConcurrentHashMap.newKeySet();
    startWorker(ran);
    TestDatabase.await("the store listens", WAIT, store::isListening);
    XAResource resource = xa.getXAResource();
    Connection c = xa.getConnection();
    Xid xid = begin(resource);

    insertOrder(c, "order-2");
    ConnectionStore view = store.inTransaction(c, false);
    queue.withStore(view).push("confirm order-2");
    resource.end(xid, XAResource.TMSUCCESS);
    resource.commit(xid, true);
    open.remove(xid);
    view.afterCommit();

    assertThat(orders()).containsExactly("order-2");
    TestDatabase.await(
        "the worker (poll interval 10 min) ran the job",
        Duration.ofSeconds(20),
        () -> ran.contains("confirm order-2"));
  }

  @Test
  void aBranchRolledBackBeforeOrAfterItsPrepareLeavesNoJob() throws SQLException, XAException {
    XAResource resource = xa.getXAResource();
    Connection c = xa.getConnection();
    Xid first = begin(resource);
    insertOrder(c, "order-3");
    queue.withStore(store.inTransaction(c, false)).push("rolled back before prepare");
    resource.end(first, XAResource.TMSUCCESS);
    resource.rollback(first);
    open.remove(first);

    Xid second = begin(resource);
    insertOrder(c, "order-4");
    queue.withStore(store.inTransaction(c, false)).push("rolled back after prepare");
    resource.end(second, XAResource.TMSUCCESS);
    assertThat(resource.prepare(second)).isEqualTo(XAResource.XA_OK);
    resource.rollback(second);
    open.remove(second);

    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(orders()).isEmpty();
  }

  @Test
  void theSameConnectionOutsideABranchIsRefusedAndWritesNothing() throws SQLException {
    Connection c = xa.getConnection(); // idle: a plain auto-commit connection, no BEGIN

    assertThatThrownBy(() -> queue.withStore(store.inTransaction(c, false)).push("alone"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("auto-commit mode with no transaction open")
        .hasMessageContaining("nothing was written");
    assertThatThrownBy(() -> queue.withStore(store.inTransaction(c, false)).counts())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no transaction open");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1")) {
      assertThat(rs.next()).as("the connection is still usable").isTrue();
    }
  }

  // ---- helpers

  private Xid begin(XAResource resource) throws XAException {
    Xid xid = new TestXid(BRANCHES.incrementAndGet());
    resource.start(xid, XAResource.TMNOFLAGS);
    open.add(xid);
    return xid;
  }

  private void insertOrder(Connection c, String id) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.executeUpdate("INSERT INTO " + schema + ".orders VALUES ('" + id + "')");
    }
  }

  private List<String> orders() {
    return db.texts("SELECT id FROM " + schema + ".orders ORDER BY id");
  }

  private void startWorker(Set<String> ran) {
    executor = Executors.newScheduledThreadPool(3);
    worker =
        queue.worker(
            (job, ctx) -> ran.add(job.state()),
            WorkerOptions.defaults().concurrency(2).pollInterval(Duration.ofMinutes(10)),
            executor);
    worker.start();
  }

  /** A transaction id as a transaction manager would make one: unique per branch and run. */
  private record TestXid(int branch) implements Xid {
    private static final long RUN = System.nanoTime();

    @Override
    public int getFormatId() {
      return 0x6b766d71; // "kvmq"
    }

    @Override
    public byte[] getGlobalTransactionId() {
      return ("kvmq-test-" + RUN + "-" + branch).getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public byte[] getBranchQualifier() {
      return new byte[] {1};
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Xid x
          && x.getFormatId() == getFormatId()
          && Arrays.equals(x.getGlobalTransactionId(), getGlobalTransactionId())
          && Arrays.equals(x.getBranchQualifier(), getBranchQualifier());
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(getGlobalTransactionId());
    }
  }
}
