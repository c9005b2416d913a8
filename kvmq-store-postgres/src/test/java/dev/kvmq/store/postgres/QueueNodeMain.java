package dev.kvmq.store.postgres;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Retention;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A worker node for {@link PostgresTenThousandJobsKillTest}: a {@link PostgresKvStore} wrapped in a
 * {@link JournalingStore}, a worker on the queue {@value JournalingStore#QUEUE} whose handler
 * simulates {@value #WORK_MICROS} µs of work, and pushes of its share of the jobs while the worker
 * runs. Prints {@code READY} once its worker runs and {@code PUSHED <n>} once its pushes have
 * committed; runs until it is killed (or exits by itself after {@value #MAX_MINUTES} minutes, in
 * case the test that started it died first).
 *
 * <p>Once the stall file exists, the handler never returns from the jobs it starts: the node then
 * holds their leases (renewing them) until it is killed, so that the test knows it kills a node
 * that holds leases.
 *
 * <p>Arguments: the JDBC URL, the schema, the node's name, how many jobs to push, the stall file
 * ({@code -} for none).
 */
final class QueueNodeMain {

  static final int CONCURRENCY = 8;
  static final Duration LEASE = Duration.ofSeconds(3);
  static final long WORK_MICROS = 2_000;
  private static final int PUSH_BATCH = 100;
  private static final int MAX_MINUTES = 4;

  private QueueNodeMain() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String schema = args[1];
    String node = args[2];
    int jobs = Integer.parseInt(args[3]);
    Path stall = args[4].equals("-") ? null : Path.of(args[4]);
    CountDownLatch never = new CountDownLatch(1);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    TestPool pool = new TestPool(ds);
    JournalingStore store =
        new JournalingStore(PostgresKvStore.builder(pool).schema(schema).build(), node);
    // no completed jobs kept: the journal sees a completion as the job record's checked delete
    Queue<String> queue =
        Queue.builder(store, JournalingStore.QUEUE, Codecs.utf8())
            .retention(Retention.none())
            .build();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(CONCURRENCY + 3);
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(WORK_MICROS)); // simulated work
              if (stall != null && Files.exists(stall)) {
                never.await(); // holds the lease until the node is killed
              }
            },
            WorkerOptions.defaults()
                .concurrency(CONCURRENCY)
                .lease(LEASE, LEASE.dividedBy(3))
                .pollInterval(Duration.ofMillis(500)),
            executor);
    worker.start();
    System.out.println("READY");
    System.out.flush();

    for (int from = 0; from < jobs; from += PUSH_BATCH) {
      List<String> batch = new ArrayList<>(PUSH_BATCH);
      for (int i = from; i < Math.min(jobs, from + PUSH_BATCH); i++) {
        batch.add(node + "-" + i);
      }
      queue.pushAll(batch, JobOptions.defaults());
    }
    System.out.println("PUSHED " + jobs);
    System.out.flush();

    never.await(MAX_MINUTES, TimeUnit.MINUTES); // killed long before
    System.exit(3);
  }
}
