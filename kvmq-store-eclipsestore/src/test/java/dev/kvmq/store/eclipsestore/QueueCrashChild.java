package dev.kvmq.store.eclipsestore;

import dev.kvmq.Backoff;
import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobEvent;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;

/**
 * The process that {@link EclipseStoreQueueCrashTest} kills: a {@link Queue} and a {@link Worker}
 * on the store, pushing and processing jobs until killed. Jobs whose state is {@code "c"} complete;
 * jobs whose state is {@code "f"} fail every attempt, with {@value #RETRIES} immediate retries, and
 * end as dead letters: they are never deleted, so the parent can check every acknowledged
 * transition of theirs exactly.
 *
 * <p>Acknowledgements, each appended with one unbuffered write after the commit that made it true:
 * {@code P id c|f} when {@code push} returned; {@code C id} and {@code F id retriesLeft dead} when
 * the worker reported the event (which it does after the commit).
 *
 * <p>Arguments: storage directory, acknowledgement file, seed.
 */
public final class QueueCrashChild {

  static final String QUEUE = "crash";
  static final int RETRIES = 3;

  private QueueCrashChild() {}

  /**
   * Runs until killed.
   *
   * @param args directory, ack file, seed
   * @throws Exception never expected: any failure ends the process with a stack trace
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    SplittableRandom random = new SplittableRandom(Long.parseLong(args[2]));
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(4);
    try (OutputStream acks = new FileOutputStream(args[1], true);
        EclipseStoreKvStore store = EclipseStoreKvStore.open(dir)) {
      Queue<String> queue = Queue.builder(store, QUEUE, Codecs.utf8()).build();
      Semaphore backlog = new Semaphore(200);
      Worker<String> worker =
          queue.worker(
              (job, ctx) -> {
                if (job.state().equals("f")) {
                  throw new IllegalStateException("fails on purpose");
                }
              },
              WorkerOptions.defaults()
                  .concurrency(4)
                  .lease(Duration.ofSeconds(2), Duration.ofMillis(500)),
              executor);
      worker.addListener(
          event -> {
            if (event instanceof JobEvent.Completed<String> c) {
              write(acks, "C " + c.job().id() + "\n");
              backlog.release();
            } else if (event instanceof JobEvent.Failed<String> f) {
              write(
                  acks, "F " + f.job().id() + " " + f.job().retriesLeft() + " " + f.dead() + "\n");
              if (f.dead()) {
                backlog.release();
              }
            }
          });
      worker.start();
      write(acks, "OPEN\n");
      JobOptions options = JobOptions.defaults().retry(RETRIES, Backoff.NONE);
      while (true) {
        if (random.nextInt(4) == 0) {
          int n = 2 + random.nextInt(10);
          backlog.acquire(n);
          List<String> states = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            states.add(random.nextInt(3) == 0 ? "f" : "c");
          }
          List<Job<String>> jobs = queue.pushAll(states, options);
          StringBuilder sb = new StringBuilder();
          for (Job<String> j : jobs) {
            sb.append("P ").append(j.id()).append(' ').append(j.state()).append('\n');
          }
          write(acks, sb.toString());
        } else {
          backlog.acquire();
          Job<String> j = queue.push(random.nextInt(3) == 0 ? "f" : "c", options);
          write(acks, "P " + j.id() + " " + j.state() + "\n");
        }
      }
    } finally {
      executor.shutdownNow();
    }
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
