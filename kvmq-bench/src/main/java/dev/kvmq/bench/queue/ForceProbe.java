package dev.kvmq.bench.queue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * What a forced write ({@link FileChannel#force(boolean) FileChannel.force(false)}, an {@code
 * fdatasync} on Linux) costs on the disk the benchmark writes to, in the two shapes the durable
 * systems use: a block appended to a growing file and forced (EclipseStore's data file, then its
 * transactions log: two per group commit in kvmq's FSYNC mode), and a block overwritten in a
 * preallocated file and forced (PostgreSQL's WAL segments: one per flushed commit group, with
 * {@code wal_sync_method=fdatasync}). Only the force is timed.
 *
 * <p>Back to back, forces show a tail far shorter than the same forces spread over time: on the
 * virtual disk of docs/performance.md, 3,000 appended forces had a p99 of 0.32-0.36 ms back to back
 * and 1.5-2.6 ms one every 5 ms. So a third shape appends and forces one block every {@value
 * #PACE_MICROS} µs, the pace of the pickup scenario's forces (100 pushes a second, each a group
 * commit of two forces on EclipseStore FSYNC), and reports its p99.9 and maximum too: a pickup's
 * p99 is made of such forces.
 *
 * <pre>
 * java -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*' \
 *   dev.kvmq.bench.queue.ForceProbe [--dir DIR] [--forces N]
 * </pre>
 *
 * (or {@code bench/run.sh --scenarios fsync}, which runs it as the system {@code disk}).
 */
public final class ForceProbe {

  /** Forces per shape, by default. */
  static final int FORCES = 1_000;

  /** The paced shape's interval between two forces. */
  static final long PACE_MICROS = 5_000;

  private static final int APPEND_BLOCK = 4_096;
  private static final int WAL_BLOCK = 8_192;

  private ForceProbe() {}

  /**
   * Measures and prints the results.
   *
   * @param args {@code --dir DIR} (default {@code java.io.tmpdir}), {@code --forces N} (default
   *     1000)
   * @throws IOException if the files cannot be written
   */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(System.getProperty("java.io.tmpdir"));
    int forces = FORCES;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--dir" -> dir = Path.of(args[i + 1]);
        case "--forces" -> forces = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    System.out.println(
        "# java -cp 'kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*'"
            + " dev.kvmq.bench.queue.ForceProbe --dir "
            + dir
            + " --forces "
            + forces);
    measure(dir, forces).forEach((k, v) -> System.out.printf(Locale.ROOT, "%s = %.4f%n", k, v));
  }

  /**
   * Forces {@code n} appended blocks, then {@code n} overwritten ones, in temporary files of {@code
   * dir} (deleted after).
   *
   * <p>Then forces {@code n} appended blocks one every {@value #PACE_MICROS} µs.
   *
   * @return {@code force_append_*_ms} and {@code force_overwrite_*_ms} (p50, p90, p99, mean), and
   *     {@code force_paced_*_ms} (the same and p999, max)
   */
  static Map<String, Double> measure(Path dir, int n) throws IOException {
    Map<String, Double> out = new LinkedHashMap<>();
    Path append = Files.createTempFile(dir, "kvmq-bench-force-", ".bin");
    Path wal = Files.createTempFile(dir, "kvmq-bench-force-", ".bin");
    try {
      ByteBuffer block = filled(APPEND_BLOCK);
      long[] t0 = new long[n];
      long[] t1 = new long[n];
      try (FileChannel ch = FileChannel.open(append, StandardOpenOption.WRITE)) {
        for (int i = 0; i < n; i++) {
          block.rewind();
          ch.write(block, (long) i * APPEND_BLOCK); // the file grows: size changes are flushed too
          t0[i] = System.nanoTime();
          ch.force(false);
          t1[i] = System.nanoTime();
        }
      }
      put(out, "force_append", Latencies.sortedMs(t0, t1));

      ByteBuffer page = filled(WAL_BLOCK);
      try (FileChannel ch = FileChannel.open(wal, StandardOpenOption.WRITE)) {
        ByteBuffer zeros = ByteBuffer.allocate(WAL_BLOCK);
        for (int i = 0; i < n; i++) { // preallocate, as PostgreSQL fills a WAL segment first
          zeros.rewind();
          ch.write(zeros, (long) i * WAL_BLOCK);
        }
        ch.force(true);
        for (int i = 0; i < n; i++) {
          page.rewind();
          ch.write(page, (long) i * WAL_BLOCK);
          t0[i] = System.nanoTime();
          ch.force(false);
          t1[i] = System.nanoTime();
        }
      }
      put(out, "force_overwrite", Latencies.sortedMs(t0, t1));

      Files.write(append, new byte[0]); // empty again: the paced forces append from 0
      try (FileChannel ch = FileChannel.open(append, StandardOpenOption.WRITE)) {
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
          long due = start + i * PACE_MICROS * 1_000L;
          long wait;
          while ((wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
          }
          block.rewind();
          ch.write(block, (long) i * APPEND_BLOCK);
          t0[i] = System.nanoTime();
          ch.force(false);
          t1[i] = System.nanoTime();
        }
      }
      double[] paced = Latencies.sortedMs(t0, t1);
      put(out, "force_paced", paced);
      out.put("force_paced_p999_ms", Latencies.quantile(paced, 0.999));
      out.put("force_paced_max_ms", paced[paced.length - 1]);
    } finally {
      Files.deleteIfExists(append);
      Files.deleteIfExists(wal);
    }
    return out;
  }

  private static ByteBuffer filled(int size) {
    ByteBuffer b = ByteBuffer.allocate(size);
    for (int i = 0; i < size; i++) {
      b.put((byte) (i * 31));
    }
    return b.flip();
  }

  private static void put(Map<String, Double> out, String name, double[] sortedMs) {
    out.put(name + "_p50_ms", Latencies.quantile(sortedMs, 0.50));
    out.put(name + "_p90_ms", Latencies.quantile(sortedMs, 0.90));
    out.put(name + "_p99_ms", Latencies.quantile(sortedMs, 0.99));
    double sum = 0;
    for (double d : sortedMs) {
      sum += d;
    }
    out.put(name + "_mean_ms", sum / sortedMs.length);
  }
}
