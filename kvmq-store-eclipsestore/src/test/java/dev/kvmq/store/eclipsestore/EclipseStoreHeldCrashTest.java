package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.Job;
import dev.kvmq.JobStatus;
import dev.kvmq.Queue;
import dev.kvmq.QueueCounts;
import dev.kvmq.WorkerOptions;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The held-job policy after a crash, on EclipseStore: a child JVM ({@link HeldCrashChild}) holds,
 * releases and drops jobs as transactions that commit or roll back, then holds one more and is
 * killed with SIGKILL ({@link Process#destroyForcibly()} on Linux) before that transaction ends.
 * After reopening the store: the released jobs wait, the dropped ones are gone, the last one is
 * held; the default policy (keep) runs no held job however long the worker works; with a held
 * timeout a worker releases it once the timeout has passed, and it runs.
 */
class EclipseStoreHeldCrashTest {

  private static final Duration CHILD_DEADLINE = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void aKillBetweenTheHeldWriteAndTheCommitLeavesAHeldJobThePolicyResolves() throws Exception {
    Path storeDir = dir.resolve("store");
    Path ackFile = dir.resolve("acks.txt");
    Files.createFile(ackFile);
    Process child = startChild(storeDir, ackFile, 12);
    String open;
    try {
      open = awaitOpen(child, ackFile);
    } finally {
      child.destroyForcibly();
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child ended").isTrue();
    }
    List<String> released = new ArrayList<>();
    List<String> dropped = new ArrayList<>();
    for (String line : Files.readAllLines(ackFile, StandardCharsets.US_ASCII)) {
      String[] f = line.split(" ");
      if (f[0].equals("R")) {
        released.add(f[1]);
      } else if (f[0].equals("D")) {
        dropped.add(f[1]);
      }
    }
    assertThat(released).hasSize(8);
    assertThat(dropped).hasSize(4);

    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(storeDir)) {
      Queue<String> kept = Queue.builder(store, HeldCrashChild.QUEUE, Codecs.utf8()).build();
      Job<String> held = kept.job(open).orElseThrow(() -> new AssertionError("held job lost"));
      assertThat(held.status()).isEqualTo(JobStatus.HELD);
      assertThat(kept.counts()).isEqualTo(new QueueCounts(8, 0, 0, 0, 1));
      for (String id : dropped) {
        assertThat(kept.job(id)).as("dropped job %s", id).isEmpty();
      }
      Instant heldAt = held.createdAt();

      // keep (the default): a worker runs every released job and never the held one
      FakeClock clock = new FakeClock(heldAt.plus(Duration.ofSeconds(1)));
      List<String> ran = new ArrayList<>();
      Queue<String> keep =
          Queue.builder(store, HeldCrashChild.QUEUE, Codecs.utf8()).clock(clock).build();
      ManualScheduler s1 = new ManualScheduler(clock);
      keep.worker((job, ctx) -> ran.add(job.id()), WorkerOptions.defaults(), s1).start();
      s1.runUntilIdle();
      clock.advance(Duration.ofHours(1));
      s1.runUntilIdle();
      assertThat(ran).containsExactlyInAnyOrderElementsOf(released);
      assertThat(keep.job(open).orElseThrow().status()).isEqualTo(JobStatus.HELD);
      s1.shutdownNow();

      // a held timeout of 10 minutes: released, with a warning, once it has passed, and run
      FakeClock later = new FakeClock(heldAt.plus(Duration.ofMinutes(10)).minusMillis(1));
      Queue<String> timed =
          Queue.builder(store, HeldCrashChild.QUEUE, Codecs.utf8())
              .clock(later)
              .heldTimeout(Duration.ofMinutes(10))
              .build();
      ManualScheduler s2 = new ManualScheduler(later);
      timed.worker((job, ctx) -> ran.add(job.id()), WorkerOptions.defaults(), s2).start();
      s2.runUntilIdle();
      assertThat(ran).doesNotContain(open);
      later.advance(Duration.ofMillis(1));
      s2.runUntilIdle();
      assertThat(ran).contains(open);
      assertThat(timed.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0, 0));
      s2.shutdownNow();
    }
  }

  private static Process startChild(Path store, Path ackFile, int transactions)
      throws java.io.IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-Xmx256m",
            "-cp",
            System.getProperty("java.class.path"),
            HeldCrashChild.class.getName(),
            store.toString(),
            ackFile.toString(),
            Integer.toString(transactions))
        .redirectErrorStream(true)
        .redirectOutput(ackFile.resolveSibling("child.log").toFile())
        .start();
  }

  /** Waits for the child's {@code OPEN id} line and returns the id. */
  private static String awaitOpen(Process child, Path ackFile) throws Exception {
    long deadline = System.nanoTime() + CHILD_DEADLINE.toNanos();
    Object monitor = new Object();
    while (true) {
      for (String line : Files.readAllLines(ackFile, StandardCharsets.US_ASCII)) {
        if (line.startsWith("OPEN ") && line.length() == 5 + 26) {
          return line.substring(5).trim();
        }
      }
      if (!child.isAlive()) {
        throw new AssertionError(
            "the child died by itself (exit "
                + child.exitValue()
                + "): "
                + Files.readString(ackFile.resolveSibling("child.log")));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the child did not hold its open job in "
                + CHILD_DEADLINE
                + ": "
                + Files.readString(ackFile.resolveSibling("child.log")));
      }
      synchronized (monitor) {
        monitor.wait(2);
      }
    }
  }
}
