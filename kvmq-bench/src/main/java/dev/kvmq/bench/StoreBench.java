package dev.kvmq.bench;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.eclipsestore.Durability;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Benchmarks of the EclipseStore store, run by hand (never by {@code mvn verify}).
 *
 * <pre>
 * mvn -pl kvmq-bench -am package -DskipTests
 * java -Xmx4g -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' \
 *     dev.kvmq.bench.StoreBench COMMAND ARGS
 *
 *   commits DIR FSYNC|PROCESS_CRASH_SAFE THREADS SECONDS   commits/s and latency
 *   bytes DIR N1 N2 ... [page=BYTES]                      bytes written per commit at N keys
 *                                                         (page size: the store's default if not given)
 *   reopen DIR                                            open time and heap per key of DIR
 *   churn DIR JOBS THREADS [FSYNC|PROCESS_CRASH_SAFE [HK_INTERVAL_MS HK_BUDGET_MS]] [live=N] [page=BYTES]
 *                                                         directory size and commit latency under
 *                                                         push+complete, with N keys kept live
 *                                                         beside the churn (default 0)
 * </pre>
 *
 * DIR must not exist (or be empty) except for {@code reopen}, which reads what {@code bytes} left.
 * Every command prints one line per figure, prefixed with its name.
 */
public final class StoreBench {

  private static final int VALUE_BYTES = 100;

  private StoreBench() {}

  /**
   * Runs one benchmark command.
   *
   * @param args the command and its arguments (see the class documentation)
   * @throws Exception if the benchmark fails
   */
  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      usage();
      return;
    }
    Path dir = Path.of(args[1]);
    switch (args[0]) {
      case "commits" ->
          commits(
              fresh(dir),
              Durability.valueOf(args[2]),
              Integer.parseInt(args[3]),
              Integer.parseInt(args[4]));
      case "bytes" ->
          bytes(
              fresh(dir),
              Arrays.stream(args, 2, args.length)
                  .filter(a -> !a.startsWith("page="))
                  .mapToInt(Integer::parseInt)
                  .toArray(),
              pageOption(args));
      case "reopen" -> reopen(dir);
      case "churn" -> {
        // live=N may follow the positional arguments
        int live = 0;
        List<String> pos = new ArrayList<>();
        for (String a : args) {
          if (a.startsWith("live=")) {
            live = Integer.parseInt(a.substring(5));
          } else {
            pos.add(a);
          }
        }
        pos.removeIf(a -> a.startsWith("page="));
        churn(
            fresh(dir),
            pageOption(args),
            Integer.parseInt(pos.get(2)),
            Integer.parseInt(pos.get(3)),
            pos.size() > 4 ? Durability.valueOf(pos.get(4)) : Durability.PROCESS_CRASH_SAFE,
            pos.size() > 6 ? Duration.ofMillis(Long.parseLong(pos.get(5))) : null,
            pos.size() > 6 ? Duration.ofMillis(Long.parseLong(pos.get(6))) : null,
            live);
      }
      default -> usage();
    }
  }

  /** The value of a {@code page=BYTES} argument, or 0 for the store's default. */
  private static int pageOption(String[] args) {
    return Arrays.stream(args)
        .filter(a -> a.startsWith("page="))
        .mapToInt(a -> Integer.parseInt(a.substring(5)))
        .findFirst()
        .orElse(0);
  }

  private static void usage() {
    System.out.println("usage: StoreBench commits DIR FSYNC|PROCESS_CRASH_SAFE THREADS SECONDS");
    System.out.println("       StoreBench bytes DIR N1 N2 ... [page=BYTES]");
    System.out.println("       StoreBench reopen DIR");
    System.out.println(
        "       StoreBench churn DIR JOBS THREADS [FSYNC|PROCESS_CRASH_SAFE [HK_INTERVAL_MS HK_BUDGET_MS]] [live=N] [page=BYTES]");
  }

  private static Path fresh(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      try (Stream<Path> s = Files.list(dir)) {
        if (s.findAny().isPresent()) {
          throw new IllegalArgumentException(
              "benchmark directory " + dir + " is not empty: remove it first");
        }
      }
    }
    return dir;
  }

  // ---- commits/s

  /** Each thread commits push-like operations (job key with 100 bytes + index key) one by one. */
  private static void commits(Path dir, Durability mode, int threads, int seconds)
      throws Exception {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.builder(dir).durability(mode).open()) {
      runCommitters(store, threads, 3, null); // warm-up
      long flushes = store.deviceFlushes();
      long[][] latencies = new long[threads][];
      long count = runCommitters(store, threads, seconds, latencies);
      flushes = store.deviceFlushes() - flushes;
      long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
      print(
          "commits mode=%s threads=%d seconds=%d: %,.0f commits/s, p50 %.2f ms, p99 %.2f ms, %.2f device flushes per commit",
          mode,
          threads,
          seconds,
          count / (double) seconds,
          all[all.length / 2] / 1e6,
          all[(int) (all.length * 0.99)] / 1e6,
          flushes / (double) count);
    }
    deleteTree(dir);
  }

  private static final AtomicLong IDS = new AtomicLong();

  private static long runCommitters(
      EclipseStoreKvStore store, int threads, int seconds, long[][] latencies)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong total = new AtomicLong();
    CountDownLatch done = new CountDownLatch(threads);
    byte[] value = new byte[VALUE_BYTES];
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread th =
          new Thread(
              () -> {
                long[] lat = new long[1 << 20];
                int n = 0;
                while (!stop.get()) {
                  long id = IDS.incrementAndGet();
                  long t0 = System.nanoTime();
                  CommitResult r =
                      store.commit(
                          AtomicOperation.builder()
                              .checkAbsent(Key.of("job", id))
                              .set(Key.of("job", id), value)
                              .set(Key.of("ready", 0L, id), new byte[0])
                              .build());
                  long t1 = System.nanoTime();
                  if (!r.ok()) {
                    throw new IllegalStateException("push failed its check");
                  }
                  if (n < lat.length) {
                    lat[n] = t1 - t0;
                  }
                  n++;
                }
                total.addAndGet(n);
                if (latencies != null) {
                  latencies[thread] = Arrays.copyOf(lat, Math.min(n, lat.length));
                }
                done.countDown();
              },
              "committer-" + t);
      th.start();
    }
    waitFor(Duration.ofSeconds(seconds));
    stop.set(true);
    done.await();
    return total.get();
  }

  // ---- bytes per commit

  /** Fills the store to each N, then measures 1,000 adds, changes and deletes of single keys. */
  private static void bytes(Path dir, int[] sizes, int pageBytes) {
    // no housekeeping while measuring: its copies would be counted as commit bytes
    EclipseStoreKvStore.Builder builder =
        EclipseStoreKvStore.builder(dir)
            .durability(Durability.PROCESS_CRASH_SAFE)
            .housekeeping(Duration.ofSeconds(1), Duration.ZERO)
            .compactEvery(0);
    if (pageBytes > 0) {
      builder.pageBytes(pageBytes);
    }
    print("bytes page size: %s", pageBytes > 0 ? pageBytes + " bytes" : "store default");
    try (EclipseStoreKvStore store = builder.open()) {
      long have = 0;
      byte[] value = new byte[VALUE_BYTES];
      for (int n : sizes) {
        List<AtomicOperation> batch = new ArrayList<>();
        for (long i = have; i < n; i++) {
          batch.add(AtomicOperation.builder().set(Key.of("job", i), value).build());
          if (batch.size() == 10_000) {
            store.commitAll(batch);
            batch.clear();
          }
        }
        store.commitAll(batch);
        have = n;
        int reps = 1_000;
        long before = store.bytesWritten();
        for (int j = 0; j < reps; j++) {
          store.commit(AtomicOperation.builder().set(Key.of("probe", j), value).build());
        }
        long add = store.bytesWritten() - before;
        before = store.bytesWritten();
        for (int j = 0; j < reps; j++) {
          store.commit(
              AtomicOperation.builder().set(Key.of("probe", j), new byte[VALUE_BYTES]).build());
        }
        long change = store.bytesWritten() - before;
        before = store.bytesWritten();
        for (int j = 0; j < reps; j++) {
          store.commit(AtomicOperation.builder().delete(Key.of("probe", j)).build());
        }
        long delete = store.bytesWritten() - before;
        print(
            "bytes keys=%,d value=%d B: add %d B/commit, change %d B/commit, delete %d B/commit (data + transactions log)",
            n, VALUE_BYTES, add / reps, change / reps, delete / reps);
      }
    }
    print("bytes directory %s: %,d bytes after the fill (no housekeeping ran)", dir, sizeOf(dir));
  }

  // ---- reopen time and heap per key

  private static void reopen(Path dir) {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long heapBefore = usedHeapAfterGc(memory);
    long cpu0 = processCpuNanos();
    long t0 = System.nanoTime();
    EclipseStoreKvStore store =
        EclipseStoreKvStore.builder(dir).durability(Durability.FSYNC).open();
    try {
      long t1 = System.nanoTime();
      long cpu1 = processCpuNanos();
      long keys = store.count(KeyRange.all());
      long heapAfter = usedHeapAfterGc(memory);
      // a read, so that the open is not just lazily deferred work
      List<KvEntry> first = store.list(KeyRange.all(), 1, false);
      print(
          "reopen keys=%,d: open %.2f s; heap %,d bytes for the open store = %.0f bytes per key (first key %s)",
          keys,
          (t1 - t0) / 1e9,
          heapAfter - heapBefore,
          (heapAfter - heapBefore) / (double) keys,
          first.isEmpty() ? "-" : first.get(0).key());
      // CPU time is less sensitive than wall time to other work on a shared machine
      print(
          "reopen keys=%,d: the open used %.2f s of CPU (all threads of this process, GC included)",
          keys, (cpu1 - cpu0) / 1e9);
      long c0 = System.nanoTime();
      store.compact();
      print(
          "reopen keys=%,d: a full compact() (GC + file check) takes %.2f s",
          keys, (System.nanoTime() - c0) / 1e9);
    } finally {
      store.close();
    }
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static long usedHeapAfterGc(MemoryMXBean memory) {
    for (int i = 0; i < 4; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }

  // ---- directory size under a steady flow

  /**
   * THREADS threads each keep a window of 100 waiting jobs: push a job (a 200-byte record and an
   * index key, one commit), and once 100 wait, complete the oldest (check its versionstamp and
   * delete both keys, one commit). With {@code live > 0}, that many 100-byte keys are committed
   * first (in batches of 10,000) and stay, so that housekeeping has a large live set to go through.
   * Prints the commit latency (p50, p99, p99.9, worst) and the worst seconds.
   */
  private static void churn(
      Path dir,
      int pageBytes,
      int jobs,
      int threads,
      Durability mode,
      Duration hkInterval,
      Duration hkBudget,
      int live)
      throws Exception {
    EclipseStoreKvStore.Builder builder = EclipseStoreKvStore.builder(dir).durability(mode);
    if (pageBytes > 0) {
      builder.pageBytes(pageBytes);
    }
    if (hkInterval != null) {
      builder.housekeeping(hkInterval, hkBudget);
    }
    print(
        "churn housekeeping: %s",
        hkInterval == null ? "store defaults" : "every " + hkInterval + " for " + hkBudget);
    try (EclipseStoreKvStore store = builder.open()) {
      if (live > 0) {
        long p0 = System.nanoTime();
        byte[] value = new byte[VALUE_BYTES];
        List<AtomicOperation> batch = new ArrayList<>();
        for (long i = 0; i < live; i++) {
          batch.add(AtomicOperation.builder().set(Key.of("live", i), value).build());
          if (batch.size() == 10_000 || i == live - 1) {
            store.commitAll(batch);
            batch.clear();
          }
        }
        print(
            "churn live keys=%,d committed in %.1f s; directory %,d bytes",
            live, (System.nanoTime() - p0) / 1e9, sizeOf(dir));
      }
      long[][] latencies = new long[threads][];
      long[][] latencyAt = new long[threads][];
      AtomicLong pushed = new AtomicLong();
      AtomicLong completed = new AtomicLong();
      long t0 = System.nanoTime();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        Thread th =
            new Thread(
                () -> {
                  ArrayDeque<Long> window = new ArrayDeque<>();
                  byte[] record = new byte[200];
                  long[] lat = new long[(int) Math.min(2L * jobs + 256, 4_000_000)];
                  long[] at = new long[lat.length];
                  int n = 0;
                  while (true) {
                    long c0 = System.nanoTime();
                    if (window.size() >= 100 || (pushed.get() >= jobs && !window.isEmpty())) {
                      long id = window.poll();
                      KvEntry job = store.get(Key.of("job", id)).orElseThrow();
                      if (!store
                          .commit(
                              AtomicOperation.builder()
                                  .check(job)
                                  .delete(Key.of("job", id))
                                  .delete(Key.of("ready", 0L, id))
                                  .build())
                          .ok()) {
                        throw new IllegalStateException("complete failed its check");
                      }
                      completed.incrementAndGet();
                    } else if (pushed.getAndIncrement() < jobs) {
                      long id = IDS.incrementAndGet();
                      store.commit(
                          AtomicOperation.builder()
                              .checkAbsent(Key.of("job", id))
                              .set(Key.of("job", id), record)
                              .set(Key.of("ready", 0L, id), new byte[0])
                              .build());
                      window.add(id);
                    } else {
                      latencies[thread] = Arrays.copyOf(lat, n);
                      latencyAt[thread] = Arrays.copyOf(at, n);
                      return;
                    }
                    long c1 = System.nanoTime();
                    if (n < lat.length) {
                      lat[n] = c1 - c0;
                      at[n] = c1 - t0;
                      n++;
                    }
                  }
                },
                "churn-" + t);
        workers.add(th);
        th.start();
      }
      long nextReport = jobs / 10;
      while (workers.stream().anyMatch(Thread::isAlive)) {
        if (completed.get() >= nextReport) {
          print(
              "churn completed=%,d: directory %,d bytes, %.0f s",
              completed.get(), sizeOf(dir), (System.nanoTime() - t0) / 1e9);
          nextReport += jobs / 10;
        }
        waitFor(Duration.ofMillis(100));
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      print(
          "churn mode=%s jobs=%,d threads=%d: %.0f s, %,.0f jobs/s (2 commits each); keys left %d; directory %,d bytes",
          mode, jobs, threads, secs, jobs / secs, store.count(KeyRange.all()), sizeOf(dir));
      printLatency(latencies, latencyAt);
      waitFor(Duration.ofSeconds(30));
      print("churn after 30 s idle (background housekeeping): directory %,d bytes", sizeOf(dir));
      long c0 = System.nanoTime();
      store.compact();
      print(
          "churn after compact() (%.1f s): directory %,d bytes",
          (System.nanoTime() - c0) / 1e9, sizeOf(dir));
      printFiles(dir);
    }
  }

  /** Commit latency percentiles, the worst commits and when they happened. */
  private static void printLatency(long[][] latencies, long[][] latencyAt) {
    int total = Arrays.stream(latencies).mapToInt(a -> a.length).sum();
    long[][] pairs = new long[total][];
    int k = 0;
    for (int t = 0; t < latencies.length; t++) {
      for (int i = 0; i < latencies[t].length; i++) {
        pairs[k++] = new long[] {latencies[t][i], latencyAt[t][i]};
      }
    }
    Arrays.sort(pairs, Comparator.comparingLong(p -> p[0]));
    print(
        "churn commit latency over %,d commits: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, worst %.1f ms",
        total,
        pairs[total / 2][0] / 1e6,
        pairs[(int) (total * 0.99)][0] / 1e6,
        pairs[(int) (total * 0.999)][0] / 1e6,
        pairs[total - 1][0] / 1e6);
    long over100 = Arrays.stream(pairs).filter(p -> p[0] > 100_000_000L).count();
    print(
        "churn commits over 100 ms: %,d; the 5 worst: %s",
        over100,
        String.join(
            ", ",
            Arrays.stream(pairs, Math.max(0, total - 5), total)
                .map(p -> String.format(Locale.ROOT, "%.0f ms at %.1f s", p[0] / 1e6, p[1] / 1e9))
                .toList()));
  }

  // ---- helpers

  private static long sizeOf(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile)
          .mapToLong(
              p -> {
                try {
                  return Files.size(p);
                } catch (IOException e) {
                  return 0; // deleted by housekeeping while walking
                }
              })
          .sum();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void printFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      s.filter(Files::isRegularFile)
          .sorted()
          .forEach(
              p -> {
                try {
                  print("  file %s %,d bytes", dir.relativize(p), Files.size(p));
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private static void waitFor(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }

  private static void print(String format, Object... args) {
    System.out.println(String.format(Locale.ROOT, format, args));
  }
}
