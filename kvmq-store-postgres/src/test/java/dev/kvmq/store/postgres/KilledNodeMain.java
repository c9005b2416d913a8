package dev.kvmq.store.postgres;

import dev.kvmq.Codecs;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The node that {@link PostgresKilledNodeTest} kills: a worker whose handler never returns (it
 * prints {@code RUNNING <job> <token>} and blocks, while the worker renews its lease), and a thread
 * that commits as fast as it can, so that the kill likely lands inside a transaction that holds the
 * versionstamp row. Exits by itself after a minute, in case the test that started it died first.
 *
 * <p>Arguments: the JDBC URL, the schema.
 */
final class KilledNodeMain {

  private KilledNodeMain() {}

  public static void main(String[] args) throws Exception {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(args[0]);
    TestPool pool = new TestPool(ds);
    PostgresKvStore store = PostgresKvStore.builder(pool).schema(args[1]).build();
    Queue<String> queue = Queue.builder(store, "jobs", Codecs.utf8()).build();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    CountDownLatch never = new CountDownLatch(1);
    Worker<String> worker =
        queue.worker(
            (job, ctx) -> {
              System.out.println("RUNNING " + job.state() + " " + ctx.token());
              System.out.flush();
              never.await();
            },
            WorkerOptions.defaults()
                .lease(Duration.ofSeconds(2), Duration.ofMillis(300))
                .pollInterval(Duration.ofMillis(200)),
            executor);
    worker.start();

    Thread busy =
        new Thread(
            () -> {
              for (long i = 0; ; i++) {
                store.commit(
                    AtomicOperation.builder().set(Key.of("busy", i % 100), new byte[64]).build());
              }
            });
    busy.setDaemon(true);
    busy.start();

    System.out.println("READY");
    System.out.flush();
    never.await(1, TimeUnit.MINUTES); // the test kills us long before
    System.exit(3);
  }
}
