package dev.kvmq.bench;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.store.eclipsestore.Durability;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What one page of a queue's listing costs with many jobs waiting (the admin API's {@code GET
 * /kvmq/queues/{q}/jobs} and the dashboard call {@link Queue#jobs(JobStatus, int, int)}): pushes N
 * jobs to an EclipseStore queue, then times the first page, a page in the middle of the waiting
 * jobs, and the whole listing, five times.
 *
 * <pre>
 * java -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' dev.kvmq.bench.ListingBench [N]
 * </pre>
 */
public final class ListingBench {

  private ListingBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args the number of jobs (default 100,000)
   * @throws Exception if the store fails
   */
  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    Path dir = Files.createTempDirectory("kvmq-listing");
    try (var store =
        EclipseStoreKvStore.builder(dir).durability(Durability.PROCESS_CRASH_SAFE).open()) {
      Queue<String> q = Queue.builder(store, "demo", Codecs.utf8()).build();
      List<String> batch = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        batch.add("{\"label\":\"job-" + i + "\",\"workMs\":10,\"failAttempts\":0}");
        if (batch.size() == 1000 || i == n - 1) {
          q.pushAll(batch, JobOptions.defaults());
          batch.clear();
        }
      }
      System.out.println("jobs: " + q.counts());
      for (int r = 0; r < 5; r++) {
        long t0 = System.nanoTime();
        int first = q.jobs(null, 0, 50).size();
        long t1 = System.nanoTime();
        int middle = q.jobs(JobStatus.WAITING, n / 2, 50).size();
        long t2 = System.nanoTime();
        int all = q.jobs().size();
        long t3 = System.nanoTime();
        System.out.printf(
            "first page (%d): %.0f ms, waiting from %d (%d): %.0f ms, whole listing (%d): %.0f ms%n",
            first, (t1 - t0) / 1e6, n / 2, middle, (t2 - t1) / 1e6, all, (t3 - t2) / 1e6);
      }
    }
  }
}
