package dev.kvmq.store.eclipsestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real process that is writing to the store (SIGKILL: {@link Process#destroyForcibly()} on
 * Linux) at random moments, at least 20 times, and checks after each kill that the store opens and
 * holds every acknowledged write, with every job's keys all there or all gone.
 *
 * <p>The child ({@link CrashChild}) commits job-like atomic operations through the store SPI
 * ({@code kvmq.crash.kills} sets the number of kills, {@code kvmq.seed} the seed).
 */
class EclipseStoreCrashTest {

  private static final Duration CHILD_DEADLINE = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void killedProcessesLoseNoAcknowledgedCommitAndTheStoreAlwaysOpens() throws Exception {
    int kills = Integer.getInteger("kvmq.crash.kills", 20);
    long seed = Long.getLong("kvmq.seed", 20261129L);
    SplittableRandom random = new SplittableRandom(seed);
    Path store = dir.resolve("store");
    Set<Long> pushed = new HashSet<>();
    Set<Long> completed = new HashSet<>();
    int totalAcks = 0;
    for (int run = 0; run < kills; run++) {
      Path ackFile = dir.resolve("acks-" + run + ".txt");
      Files.createFile(ackFile);
      // 1 in 5 runs is killed while the JVM and the store start; the rest after some acks
      int waitForAcks = random.nextInt(5) == 0 ? 0 : 1 + random.nextInt(400);
      Process child = startChild(store, ackFile, 1_000_000_000L * (run + 1), seed + run);
      try {
        if (waitForAcks > 0) {
          awaitLines(child, ackFile, waitForAcks + 1); // + the OPEN line
          if (run == 0) {
            assertThatThrownBy(() -> EclipseStoreKvStore.open(store))
                .isInstanceOf(KvStoreException.class)
                .hasMessageContaining("in use by another process");
          }
        }
      } finally {
        child.destroyForcibly();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child ended").isTrue();
      }
      List<String> acks = completeLines(ackFile);
      for (String line : acks) {
        if (line.startsWith("P ")) {
          pushed.add(Long.parseLong(line.substring(2)));
        } else if (line.startsWith("C ")) {
          completed.add(Long.parseLong(line.substring(2)));
        }
      }
      totalAcks += acks.size();
      verify(store, pushed, completed, run);
    }
    assertThat(totalAcks).as("acknowledgements seen over all runs").isGreaterThan(kills * 10);
  }

  private static void verify(Path storeDir, Set<Long> pushed, Set<Long> completed, int run) {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(storeDir)) {
      Set<Long> jobs = ids(store.list(KeyRange.prefix(Key.of("job"))));
      Set<Long> ready = ids(store.list(KeyRange.prefix(Key.of("ready"))));
      Set<Long> done = ids(store.list(KeyRange.prefix(Key.of("done"))));
      String where = "after kill " + (run + 1);
      assertThat(ready)
          .as("%s: every job has its index key and no index key is orphaned", where)
          .isEqualTo(jobs);
      Set<Long> both = new HashSet<>(jobs);
      both.retainAll(done);
      assertThat(both).as("%s: no job is both waiting and done", where).isEmpty();
      for (long id : pushed) {
        if (!jobs.contains(id) && !done.contains(id)) {
          throw new AssertionError(where + ": acknowledged push of job " + id + " is lost");
        }
      }
      assertThat(done)
          .as("%s: every acknowledged completion is there", where)
          .containsAll(completed);
      for (long id : completed) {
        assertThat(jobs).as("%s: completed job %d is gone", where, id).doesNotContain(id);
      }
    }
  }

  private static Set<Long> ids(List<KvEntry> entries) {
    return entries.stream().map(e -> e.key().getLong(1)).collect(Collectors.toSet());
  }

  private static Process startChild(Path store, Path ackFile, long firstId, long seed)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                java,
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                CrashChild.class.getName(),
                store.toString(),
                ackFile.toString(),
                Long.toString(firstId),
                Long.toString(seed)));
    return new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ackFile.resolveSibling(ackFile.getFileName() + ".log").toFile())
        .start();
  }

  /** Polls the ack file until it has {@code lines} lines; fails if the child dies or stalls. */
  private static void awaitLines(Process child, Path ackFile, int lines) throws Exception {
    long deadline = System.nanoTime() + CHILD_DEADLINE.toNanos();
    Object monitor = new Object();
    while (completeLines(ackFile).size() < lines) {
      if (!child.isAlive()) {
        throw new AssertionError(
            "the child died by itself (exit "
                + child.exitValue()
                + "): "
                + Files.readString(ackFile.resolveSibling(ackFile.getFileName() + ".log")));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the child wrote fewer than " + lines + " acknowledgements in " + CHILD_DEADLINE);
      }
      synchronized (monitor) {
        monitor.wait(2);
      }
    }
  }

  /** The lines that end with a newline: a line cut by the kill was never acknowledged. */
  private static List<String> completeLines(Path file) throws IOException {
    String s = Files.readString(file, StandardCharsets.US_ASCII);
    int end = s.lastIndexOf('\n');
    if (end < 0) {
      return List.of();
    }
    return List.of(s.substring(0, end).split("\n"));
  }
}
