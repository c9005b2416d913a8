package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A push in a transaction the caller holds ({@link PostgresKvStore#inTransaction}): the job and a
 * business row commit together or not at all, workers wake up only for a committed job (the NOTIFY
 * is the transaction's), they neither see nor wait for an uncommitted one, nor do their claims and
 * completions of jobs of its group, and a push on a closed connection, an auto-commit connection or
 * a failed transaction is refused and writes nothing.
 */
@PostgresTest
class PostgresCallersTransactionTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** So long that only a notification can wake an idle worker within the test. */
  private static final Duration NO_POLLING = Duration.ofMinutes(10);

  private TestDatabase db;
  private String schema;
  private PostgresKvStore a;
  private PostgresKvStore b;
  private Queue<String> queue;
  private final List<ScheduledExecutorService> executors = new ArrayList<>();
  private final List<Worker<String>> workers = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();

  @BeforeEach
  void open(TestSchema fresh) {
    db = fresh.db();
    schema = fresh.name();
    a = PostgresKvStore.builder(db.pool()).schema(schema).build();
    b = PostgresKvStore.builder(db.pool()).schema(schema).build();
    queue = Queue.builder(a, "jobs", Codecs.utf8()).build();
    queue.counts(); // creates the schema
    db.execute("CREATE TABLE " + schema + ".orders (id text PRIMARY KEY)");
  }

  @AfterEach
  void close() throws InterruptedException, SQLException {
    // the callers' transactions first: a commit that waits for one of their locks then goes on
    for (Connection c : connections) {
      if (!c.isClosed()) {
        if (!c.getAutoCommit()) {
          c.rollback();
        }
        c.close();
      }
    }
    for (Worker<String> w : workers) {
      w.stop(Duration.ofSeconds(10));
    }
    executors.forEach(ScheduledExecutorService::shutdownNow);
    a.close();
    b.close();
  }

  @Test
  void aCommitMakesTheRowAndTheJobExistTogetherAndWakesAWorkerOnThisNode() throws SQLException {
    Set<String> ran = ConcurrentHashMap.newKeySet();
    start(queue, ran);
    TestDatabase.await("a listens", WAIT, a::isListening);
    Connection c = transaction();

    insertOrder(c, "order-1");
    Job<String> job = queue.withStore(a.inTransaction(c)).push("confirm order-1");

    assertThat(job.id()).isNotBlank();
    assertThat(queue.job(job.id())).as("not visible before the commit").isEmpty();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(orders()).isEmpty();
    c.commit();
    assertThat(orders()).containsExactly("order-1");
    TestDatabase.await(
        "the worker (poll interval 10 min) ran the job",
        Duration.ofSeconds(20),
        () -> ran.contains("confirm order-1"));
  }

  @Test
  void theCommitsNotifyWakesAWorkerOnAnotherNode() throws SQLException {
    Queue<String> onB = Queue.builder(b, "jobs", Codecs.utf8()).build();
    Set<String> ran = ConcurrentHashMap.newKeySet();
    start(onB, ran);
    TestDatabase.await("b listens", WAIT, b::isListening);
    Connection c = transaction();

    queue.withStore(a.inTransaction(c)).push("from a's transaction");
    c.commit();

    TestDatabase.await(
        "b's worker (poll interval 10 min) ran the job",
        Duration.ofSeconds(20),
        () -> ran.contains("from a's transaction"));
  }

  @Test
  void aRollbackLeavesNoJobAndWakesNoOne() throws SQLException {
    AtomicInteger jobsWakeUps = new AtomicInteger();
    AtomicInteger otherWakeUps = new AtomicInteger();
    b.subscribe(Key.of("kvmq", "jobs"), jobsWakeUps::incrementAndGet);
    b.subscribe(Key.of("kvmq", "other"), otherWakeUps::incrementAndGet);
    TestDatabase.await("b listens", WAIT, b::isListening);
    jobsWakeUps.set(0); // the listener wakes everyone once when it connects
    otherWakeUps.set(0);
    Connection c = transaction();

    insertOrder(c, "order-2");
    Job<String> job = queue.withStore(a.inTransaction(c)).push("confirm order-2");
    c.rollback();
    // a later committed push on another queue: notifications arrive in commit order, so once it
    // is heard, a notification of the rolled-back push would have been heard before it
    Queue<String> other = Queue.builder(a, "other", Codecs.utf8()).build();
    other.withStore(a.inTransaction(c)).push("marker");
    c.commit();
    TestDatabase.await("b heard the marker", WAIT, () -> otherWakeUps.get() > 0);

    assertThat(jobsWakeUps.get()).as("wake-ups for the rolled-back push").isZero();
    assertThat(queue.job(job.id())).isEmpty();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(orders()).isEmpty();
  }

  @Test
  void workersNeitherSeeNorWaitForAJobWhoseTransactionIsOpen() throws SQLException {
    Set<String> ran = ConcurrentHashMap.newKeySet();
    start(queue, ran);
    Queue<String> onB = Queue.builder(b, "jobs", Codecs.utf8()).build();
    start(onB, ran);
    Connection c = transaction();
    insertOrder(c, "order-3");
    Job<String> held = queue.withStore(a.inTransaction(c)).push("pending", JobOptions.defaults());

    List<String> others = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      others.add("other-" + i);
    }
    queue.pushAll(others.subList(0, 15), JobOptions.defaults());
    onB.pushAll(others.subList(15, 30), JobOptions.defaults());
    TestDatabase.await(
        "the workers ran the 30 committed jobs while the transaction is open",
        WAIT,
        () -> ran.containsAll(others));
    assertThat(ran).doesNotContain("pending");
    assertThat(onB.job(held.id())).isEmpty();

    c.commit();
    TestDatabase.await("the committed job ran", WAIT, () -> ran.contains("pending"));
    TestDatabase.await(
        "the queue is empty", WAIT, () -> queue.counts().equals(new QueueCounts(0, 0, 0, 0)));
  }

  @Test
  void workersStartAGroupsJobsWhileATransactionThatPushedOneOfTheGroupIsOpen() throws SQLException {
    Queue<String> grouped = Queue.builder(a, "grouped", Codecs.utf8()).groupLimit(2).build();
    grouped.push("g-ready", JobOptions.defaults().group("g"));
    grouped.push("plain-ready");
    Connection c = transaction();
    // its locks last until the commit: the job's own keys, none of the group's (next test)
    grouped.withStore(a.inTransaction(c)).push("g-pending", JobOptions.defaults().group("g"));
    Set<String> started = ConcurrentHashMap.newKeySet();

    start(grouped, started);

    // a claim checks the group's pause of starts, which must not share the record's lock
    TestDatabase.await(
        "the worker started the group's ready job and the plain one, the transaction open",
        Duration.ofSeconds(20),
        () -> started.containsAll(List.of("g-ready", "plain-ready")));
    assertThat(started).doesNotContain("g-pending");
    c.commit();
    TestDatabase.await("the committed job ran", WAIT, () -> started.contains("g-pending"));
    TestDatabase.await(
        "the queue is empty", WAIT, () -> grouped.counts().equals(new QueueCounts(0, 0, 0, 0)));
  }

  /**
   * A new user's test saw jobs run twice: an application transaction held open after pushing a job
   * of group {@code g} held the lock of the group's record, so the completions of {@code g}'s
   * running jobs, and of every job committed in the same batch, waited for it past their leases.
   * The push now writes the job delayed, due at once, and no key of the group: while the
   * transaction stays open, jobs of {@code g}, of another group and of none complete, and another
   * thread's push of {@code g} returns; the job runs once the transaction commits.
   */
  @Test
  void aGroupsCompletionsAndPushesDoNotWaitForATransactionThatPushedAJobOfIt() throws Exception {
    Queue<String> grouped = Queue.builder(a, "grouped", Codecs.utf8()).groupLimit(2).build();
    grouped.push("g-ready", JobOptions.defaults().group("g"));
    grouped.push("h-ready", JobOptions.defaults().group("h"));
    grouped.push("plain-ready");
    Connection c = transaction();
    Job<String> pending =
        grouped.withStore(a.inTransaction(c)).push("g-pending", JobOptions.defaults().group("g"));
    assertThat(pending.delayUntil()).as("due at once").isBeforeOrEqualTo(java.time.Instant.now());
    Set<String> ran = ConcurrentHashMap.newKeySet();

    start(grouped, ran);

    TestDatabase.await(
        "the three committed jobs completed (their outcomes committed), the transaction open",
        Duration.ofSeconds(20),
        () -> grouped.counts().equals(new QueueCounts(0, 0, 0, 0)));
    assertThat(ran).containsExactlyInAnyOrder("g-ready", "h-ready", "plain-ready");
    java.util.concurrent.CompletableFuture.supplyAsync(
            () -> grouped.push("g-later", JobOptions.defaults().group("g")))
        .get(20, java.util.concurrent.TimeUnit.SECONDS);
    TestDatabase.await(
        "the job of g pushed beside the transaction ran", WAIT, () -> ran.contains("g-later"));
    assertThat(grouped.job(pending.id())).as("not visible before the commit").isEmpty();

    c.commit();
    TestDatabase.await("the committed job ran", WAIT, () -> ran.contains("g-pending"));
    TestDatabase.await(
        "the queue is empty", WAIT, () -> grouped.counts().equals(new QueueCounts(0, 0, 0, 0)));
  }

  @Test
  void manyPushesInOneTransactionCommitTogether() throws SQLException {
    Connection c = transaction();
    Queue<String> inTx = queue.withStore(a.inTransaction(c));
    List<String> states = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      states.add("s" + i);
    }
    List<Job<String>> first = inTx.pushAll(states, JobOptions.defaults());
    Job<String> second = inTx.push("one more");
    assertThat(inTx.job(second.id())).as("the transaction reads its own push").isPresent();
    assertThat(queue.counts().waiting()).isZero();

    c.commit();

    assertThat(queue.counts().waiting()).isEqualTo(25);
    assertThat(queue.job(first.get(23).id())).isPresent();
  }

  @Test
  void anOperationTooBigForKeyLocksIsRefusedBeforeAnythingIsWritten() throws SQLException {
    Connection c = transaction();
    Queue<String> inTx = queue.withStore(a.inTransaction(c));
    List<String> states = Collections.nCopies(49, "x");

    assertThatThrownBy(() -> inTx.pushAll(states, JobOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("more than 48 key locks")
        .hasMessageContaining("at most 48 jobs");
    inTx.pushAll(Collections.nCopies(48, "fits"), JobOptions.defaults()); // one lock per job
    inTx.push("still usable");
    c.commit();
    assertThat(queue.counts().waiting()).isEqualTo(49);
  }

  @Test
  void theViewsFirstEntriesSeeTheTransactionsOwnWritesAndNoOneElseDoes() throws SQLException {
    Key committed = Key.of("kvmq", "firsts", "b", 1L);
    a.commit(AtomicOperation.builder().set(committed, new byte[] {1}).build());
    Connection c = transaction();
    KvStore view = a.inTransaction(c);
    Key own = Key.of("kvmq", "firsts", "a", 1L);
    view.commit(AtomicOperation.builder().set(own, new byte[] {2}).build());
    List<KeyRange> ranges =
        List.of(
            KeyRange.prefix(Key.of("kvmq", "firsts", "a")),
            KeyRange.prefix(Key.of("kvmq", "firsts", "none")),
            KeyRange.prefix(Key.of("kvmq", "firsts")));

    List<Optional<KvEntry>> inside = view.firstEntries(ranges);
    assertThat(inside.get(0).map(KvEntry::key)).contains(own);
    assertThat(inside.get(1)).isEmpty();
    assertThat(inside.get(2).map(KvEntry::key)).as("own write first in key order").contains(own);
    List<Optional<KvEntry>> outside = a.firstEntries(ranges);
    assertThat(outside.get(0)).as("not committed yet").isEmpty();
    assertThat(outside.get(2).map(KvEntry::key)).contains(committed);

    c.rollback();
    assertThat(a.firstEntries(ranges).get(2).map(KvEntry::key)).contains(committed);
    c.close();
    assertThatThrownBy(() -> view.firstEntries(ranges))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the connection is closed");
  }

  @Test
  void aClosedConnectionIsRefusedAndNothingIsWritten() throws SQLException {
    Connection c = transaction();
    KvStore view = a.inTransaction(c);
    c.close();

    assertThatThrownBy(() -> queue.withStore(view).push("lost?"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the connection is closed")
        .hasMessageContaining("nothing was written");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void anAutoCommitConnectionIsRefusedAndNothingIsWritten() throws SQLException {
    Connection c = db.pool().getConnection();
    connections.add(c);

    assertThatThrownBy(() -> queue.withStore(a.inTransaction(c)).push("alone"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("auto-commit mode")
        .hasMessageContaining("nothing was written");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void aFailedTransactionIsRefusedAndNothingIsWritten() throws SQLException {
    Connection c = transaction();
    insertOrder(c, "order-4");
    try (Statement s = c.createStatement()) {
      assertThatThrownBy(() -> s.execute("SELECT 1/0")).isInstanceOf(SQLException.class);
    }

    assertThatThrownBy(() -> queue.withStore(a.inTransaction(c)).push("after a failure"))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining("has already failed")
        .hasMessageContaining("roll it back")
        .hasMessageContaining("Nothing was written");
    c.rollback();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(orders()).isEmpty();
  }

  @Test
  void aRefusedCommitIsUndoneToItsSavepointAndTheTransactionGoesOn() throws SQLException {
    Connection c = transaction();
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    insertOrder(c, "order-5");

    assertThatThrownBy(() -> queue.withStore(a.inTransaction(c)).push("in repeatable read"))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining("READ COMMITTED")
        .hasMessageContaining("the caller's transaction can go on");
    insertOrder(c, "order-6");
    c.commit();

    assertThat(orders()).containsExactlyInAnyOrder("order-5", "order-6");
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
  }

  @Test
  void withoutNotifyInTheTransactionAfterCommitWakesTheWorkers() throws SQLException {
    Queue<String> onB = Queue.builder(b, "jobs", Codecs.utf8()).build();
    Set<String> ran = ConcurrentHashMap.newKeySet();
    start(onB, ran);
    start(queue, ran);
    TestDatabase.await("both listen", WAIT, () -> a.isListening() && b.isListening());
    Connection c = transaction();
    ConnectionStore view = a.inTransaction(c, false);

    Job<String> job = queue.withStore(view).push("announced after the commit");
    assertThat(queue.job(job.id())).as("not visible before the commit").isEmpty();
    c.commit();
    view.afterCommit();

    TestDatabase.await(
        "a worker (poll interval 10 min) ran the job",
        Duration.ofSeconds(20),
        () -> ran.contains("announced after the commit"));
  }

  // ---- helpers

  private Connection transaction() throws SQLException {
    Connection c = db.pool().getConnection();
    connections.add(c);
    c.setAutoCommit(false);
    return c;
  }

  private void insertOrder(Connection c, String id) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.executeUpdate("INSERT INTO " + schema + ".orders VALUES ('" + id + "')");
    }
  }

  private List<String> orders() {
    return db.texts("SELECT id FROM " + schema + ".orders ORDER BY id");
  }

  private void start(Queue<String> q, Set<String> ran) {
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    executors.add(executor);
    Worker<String> worker =
        q.worker(
            (job, ctx) -> ran.add(job.state()),
            WorkerOptions.defaults().concurrency(2).pollInterval(NO_POLLING),
            executor);
    workers.add(worker);
    worker.start();
  }
}
