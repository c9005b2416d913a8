package dev.kvmq.it.support.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds {@code hold} handlers until a test opens it. */
public final class Gate {

  private static final CountDownLatch OPEN = new CountDownLatch(1);

  private Gate() {}

  /** Lets every waiting and future {@code hold} handler go on. */
  public static void open() {
    OPEN.countDown();
  }

  /**
   * Waits until the gate is open, at most 60 s.
   *
   * @return true if it opened in time
   * @throws InterruptedException if interrupted
   */
  static boolean await() throws InterruptedException {
    return OPEN.await(60, TimeUnit.SECONDS);
  }
}
