package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The process that {@link EclipseStoreCrashTest} kills. It opens the store and, from several
 * threads, pushes and completes job-like records until it is killed. A push sets {@code [job, id]}
 * and {@code [ready, id]} in one atomic operation; a completion checks the job's versionstamp,
 * deletes both and sets {@code [done, id]}. After a commit returns, and only then, it appends
 * {@code P id} or {@code C id} to the acknowledgement file with one unbuffered write, which the OS
 * keeps when the process is killed. It uses 512-byte pages and a housekeeping cycle every MiB
 * written, so that kills also land in page moves, merges and housekeeping slices.
 *
 * <p>Arguments: storage directory, acknowledgement file, first job id, seed.
 */
public final class CrashChild {

  static final int THREADS = 4;

  private CrashChild() {}

  /**
   * Runs until killed.
   *
   * @param args directory, ack file, first id, seed
   * @throws Exception never expected: any failure ends the process with a stack trace
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long firstId = Long.parseLong(args[2]);
    long seed = Long.parseLong(args[3]);
    try (OutputStream acks = new FileOutputStream(args[1], true);
        // small pages and frequent housekeeping cycles: kills land in page moves, merges and
        // housekeeping slices, not only in plain page rewrites
        EclipseStoreKvStore store =
            EclipseStoreKvStore.builder(dir).pageBytes(512).compactEvery(1L << 20).open()) {
      write(acks, "OPEN\n");
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        long base = firstId + t * 10_000_000L;
        SplittableRandom random = new SplittableRandom(seed + t);
        Thread th = new Thread(() -> work(store, acks, base, random), "crash-child-" + t);
        threads.add(th);
        th.start();
      }
      for (Thread th : threads) {
        th.join();
      }
    }
  }

  private static void work(
      EclipseStoreKvStore store, OutputStream acks, long base, SplittableRandom random) {
    ArrayDeque<Long> pending = new ArrayDeque<>();
    long next = base;
    while (true) {
      if (!pending.isEmpty() && random.nextInt(3) == 0) {
        long id = pending.poll();
        KvEntry job =
            store
                .get(Key.of("job", id))
                .orElseThrow(() -> new IllegalStateException("job " + id + " vanished"));
        CommitResult r =
            store.commit(
                AtomicOperation.builder()
                    .check(job)
                    .delete(Key.of("job", id))
                    .delete(Key.of("ready", id))
                    .set(Key.of("done", id), new byte[0])
                    .build());
        if (!r.ok()) {
          throw new IllegalStateException("completion of " + id + " failed its check");
        }
        write(acks, "C " + id + "\n");
      } else if (random.nextInt(5) == 0) {
        // a batch of pushes through commitAll
        List<AtomicOperation> ops = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        int n = 2 + random.nextInt(20);
        for (int i = 0; i < n; i++) {
          long id = next++;
          ids.add(id);
          ops.add(push(id, random));
        }
        for (CommitResult r : store.commitAll(ops)) {
          if (!r.ok()) {
            throw new IllegalStateException("a push failed its absence check");
          }
        }
        StringBuilder sb = new StringBuilder();
        for (long id : ids) {
          sb.append("P ").append(id).append('\n');
          pending.add(id);
        }
        write(acks, sb.toString());
      } else {
        long id = next++;
        if (!store.commit(push(id, random)).ok()) {
          throw new IllegalStateException("push of " + id + " failed its absence check");
        }
        write(acks, "P " + id + "\n");
        pending.add(id);
      }
    }
  }

  private static AtomicOperation push(long id, SplittableRandom random) {
    byte[] payload = new byte[20 + random.nextInt(200)];
    random.nextBytes(payload);
    return AtomicOperation.builder()
        .checkAbsent(Key.of("job", id))
        .set(Key.of("job", id), payload)
        .set(Key.of("ready", id), new byte[0])
        .build();
  }

  private static void write(OutputStream acks, String lines) {
    byte[] b = lines.getBytes(StandardCharsets.US_ASCII);
    synchronized (acks) {
      try {
        acks.write(b);
        acks.flush();
      } catch (IOException e) {
        throw new IllegalStateException("cannot write acknowledgements", e);
      }
    }
  }
}
