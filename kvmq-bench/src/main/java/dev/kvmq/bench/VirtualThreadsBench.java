package dev.kvmq.bench;

import dev.kvmq.Codecs;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.store.InMemoryKvStore;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * IO-bound handlers on platform threads and on virtual threads: the kernel's {@link Queue} and
 * {@link Worker} on the in-memory store, N jobs (default 10,000) whose handler blocks for W ms
 * (default 50, {@code Thread.sleep}, as a handler waiting for an HTTP answer), at concurrency C
 * (default 1,000). The worker runs on a pool as kvmq-jakarta makes it for a queue with a thread
 * factory of its own ({@code @QueueHandler(threadFactory)}): C + 1 threads of a factory, here
 * {@link Executors#defaultThreadFactory()} (platform) or {@code Thread.ofVirtual().factory()}
 * (virtual, called reflectively: this class compiles for Java 17).
 *
 * <p>Each kind runs in a JVM of its own (a child of this one, with the same {@code java} and class
 * path), so that one's threads, heap and RSS do not count for the other. It reports, from the
 * worker's start to the last completion: jobs/s, the peak number of platform threads in the JVM
 * ({@link ThreadMXBean#getPeakThreadCount()}, which counts no virtual thread), and the peak RSS
 * ({@code /proc/self/status} {@code VmRSS}, sampled every 20 ms). The ideal is C / W jobs/s
 * (20,000/s by default).
 *
 * <pre>
 * mvn -pl kvmq-bench -am package -DskipTests
 * JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 $JAVA_HOME/bin/java \
 *   -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' \
 *   dev.kvmq.bench.VirtualThreadsBench [N] [C] [W]
 * </pre>
 *
 * <p>A fourth argument, {@code platform} or {@code virtual}, runs that kind alone in this JVM. On
 * Java 17 the virtual run is reported as not possible.
 */
public final class VirtualThreadsBench {

  private VirtualThreadsBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args N jobs, concurrency C, wait W in ms, and optionally {@code platform} or {@code
   *     virtual} to run one kind in this JVM
   * @throws Exception if a run fails
   */
  public static void main(String[] args) throws Exception {
    int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int concurrency = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
    int waitMs = args.length > 2 ? Integer.parseInt(args[2]) : 50;
    if (args.length > 3) {
      System.out.println(run(args[3], jobs, concurrency, waitMs));
      return;
    }
    System.out.printf(
        "%d jobs, each blocking %d ms, concurrency %d, in-memory store, Java %s (ideal: %d jobs/s)%n",
        jobs, waitMs, concurrency, Runtime.version(), concurrency * 1000L / waitMs);
    for (String kind : List.of("platform", "virtual")) {
      System.out.println(child(kind, jobs, concurrency, waitMs));
    }
  }

  /** Runs one kind in a new JVM and returns its report line. */
  private static String child(String kind, int jobs, int concurrency, int waitMs)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(VirtualThreadsBench.class.getName());
    command.add(Integer.toString(jobs));
    command.add(Integer.toString(concurrency));
    command.add(Integer.toString(waitMs));
    command.add(kind);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    int rc = p.waitFor();
    return rc == 0 ? out.strip() : kind + ": the child JVM failed (exit " + rc + "):\n" + out;
  }

  /** Runs one kind in this JVM. */
  private static String run(String kind, int jobs, int concurrency, int waitMs)
      throws InterruptedException {
    ThreadFactory factory;
    if (kind.equals("platform")) {
      factory = Executors.defaultThreadFactory();
    } else if (kind.equals("virtual")) {
      factory = virtualThreadFactory();
      if (factory == null) {
        return "virtual: not possible on Java " + Runtime.version() + " (virtual threads: 21+)";
      }
    } else {
      throw new IllegalArgumentException("platform or virtual, not " + kind);
    }
    InMemoryKvStore store = new InMemoryKvStore();
    Queue<String> queue = Queue.builder(store, "io", Codecs.utf8()).build();
    List<String> batch = new ArrayList<>();
    for (int i = 0; i < jobs; i++) {
      batch.add("job-" + i);
      if (batch.size() == 1_000 || i == jobs - 1) {
        queue.pushAll(batch, JobOptions.defaults());
        batch.clear();
      }
    }
    CountDownLatch done = new CountDownLatch(jobs);
    AtomicInteger failed = new AtomicInteger();
    ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(concurrency + 1, factory);
    pool.setRemoveOnCancelPolicy(true);
    Worker<String> worker =
        queue.worker(
            (job, context) -> Thread.sleep(waitMs),
            WorkerOptions.defaults()
                .concurrency(concurrency)
                .lease(Duration.ofSeconds(30), Duration.ofSeconds(10)),
            pool);
    worker.addListener(
        e -> {
          if (e instanceof JobEvent.Completed<?>) {
            done.countDown();
          } else if (e instanceof JobEvent.Failed<?>) {
            failed.incrementAndGet();
            done.countDown();
          }
        });
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    RssSampler rss = new RssSampler();
    rss.start();
    threads.resetPeakThreadCount();
    long start = System.nanoTime();
    worker.start();
    boolean finished = done.await(10, TimeUnit.MINUTES);
    long took = System.nanoTime() - start;
    int peakThreads = threads.getPeakThreadCount();
    rss.interrupt();
    rss.join();
    worker.stop(Duration.ofSeconds(30));
    pool.shutdownNow();
    store.close();
    if (!finished) {
      return kind + ": did not finish in 10 minutes (" + done.getCount() + " jobs left)";
    }
    return String.format(
        "%-8s %,9.0f jobs/s  %6.2f s  peak platform threads %5d  peak RSS %5d MB%s",
        kind,
        jobs / (took / 1e9),
        took / 1e9,
        peakThreads,
        rss.peakKb.get() / 1024,
        failed.get() > 0 ? "  (" + failed.get() + " failed)" : "");
  }

  /** {@code Thread.ofVirtual().factory()}, or null on a JVM before 21. */
  private static ThreadFactory virtualThreadFactory() {
    try {
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      return (ThreadFactory)
          Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
    } catch (NoSuchMethodException | ClassNotFoundException e) {
      return null;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Thread.ofVirtual().factory() failed", e);
    }
  }

  /** Samples this process's resident set size until interrupted. */
  private static final class RssSampler extends Thread {
    final AtomicLong peakKb = new AtomicLong();

    RssSampler() {
      super("rss-sampler");
      setDaemon(true);
    }

    @Override
    public void run() {
      Path status = Path.of("/proc/self/status");
      try {
        while (!isInterrupted()) {
          for (String line : Files.readAllLines(status)) {
            if (line.startsWith("VmRSS:")) {
              long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
              peakKb.accumulateAndGet(kb, Math::max);
            }
          }
          Thread.sleep(20);
        }
      } catch (InterruptedException e) {
        // asked to stop
      } catch (IOException e) {
        peakKb.set(-1024); // no /proc: reported as -1 MB
      }
    }
  }
}
