package dev.kvmq.store.eclipsestore;

import dev.kvmq.Codecs;
import dev.kvmq.JobOptions;
import dev.kvmq.Queue;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The process that {@link EclipseStoreHeldCrashTest} kills: it plays an application whose
 * transactions push jobs on the store, as kvmq-jakarta does on a store that can't join them. Each
 * transaction holds its job, then commits (release) or rolls back (drop); the last one holds its
 * job and never ends: the process is killed between the held write and the commit.
 *
 * <p>Acknowledgements, each appended with one unbuffered write after the commit that made it true:
 * {@code R id} released, {@code D id} dropped, {@code OPEN id} held in the transaction that is
 * still open when the process waits to be killed.
 *
 * <p>Arguments: storage directory, acknowledgement file, number of ended transactions.
 */
public final class HeldCrashChild {

  static final String QUEUE = "held";

  private HeldCrashChild() {}

  /**
   * Runs until killed.
   *
   * @param args directory, ack file, transactions
   * @throws Exception never expected: any failure ends the process with a stack trace
   */
  public static void main(String[] args) throws Exception {
    int transactions = Integer.parseInt(args[2]);
    try (OutputStream acks = new FileOutputStream(args[1], true);
        EclipseStoreKvStore store = EclipseStoreKvStore.open(Path.of(args[0]))) {
      Queue<String> queue = Queue.builder(store, QUEUE, Codecs.utf8()).build();
      for (int i = 0; i < transactions; i++) {
        String id = queue.holdAll(List.of("t" + i), JobOptions.defaults()).get(0).id();
        if (i % 3 == 2) {
          queue.dropHeld(List.of(id));
          ack(acks, "D " + id);
        } else {
          queue.releaseHeld(List.of(id));
          ack(acks, "R " + id);
        }
      }
      String open = queue.holdAll(List.of("open"), JobOptions.defaults()).get(0).id();
      ack(acks, "OPEN " + open);
      new CountDownLatch(1).await(); // inside the transaction, until SIGKILL
    }
  }

  private static void ack(OutputStream acks, String line) throws java.io.IOException {
    acks.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
  }
}
