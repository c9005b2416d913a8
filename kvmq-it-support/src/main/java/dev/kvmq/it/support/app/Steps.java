package dev.kvmq.it.support.app;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import jakarta.enterprise.concurrent.ManageableThread;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** What the test handlers do, by the job's {@link Task#mode()}. */
final class Steps {

  private Steps() {}

  static void run(Job<Task> job, JobContext<Task> ctx, Greeter greeter) throws Exception {
    boolean managed = Thread.currentThread() instanceof ManageableThread;
    Journal.add(
        "start",
        job,
        ctx.attempt(),
        ctx.token(),
        "managed="
            + managed
            + ",cdi="
            + "hello".equals(greeter.greet())
            + ",thread="
            + Thread.currentThread().getName().replace('|', '/'));
    ctx.onCancel(
        () ->
            Journal.add(
                "cancel",
                job,
                ctx.attempt(),
                ctx.token(),
                ctx.cancelReason().map(Enum::name).orElse("?")));
    Task task = job.state();
    switch (task.mode()) {
      case "quick" -> {}
      case "cooperative" -> ctx.awaitCancellation(Duration.ofSeconds(60));
      case "stubborn" -> {
        if (ctx.attempt() == 1) {
          // Works on past the signal, however late it comes, so it always outlasts a shutdown
          // timeout shorter than workMs (a CI run's reload came late enough that a fixed 10 s of
          // work ended inside the timeout).
          ctx.awaitCancellation(Duration.ofMinutes(2));
          work(job, ctx, task.workMs());
        }
      }
      case "hold" -> Gate.await();
      default -> throw new IllegalArgumentException("unknown mode " + task.mode());
    }
    Journal.add(
        "end", job, ctx.attempt(), ctx.token(), ctx.cancelReason().map(Enum::name).orElse("-"));
  }

  /** Works for {@code ms} whether or not the handler is told to stop (but not if interrupted). */
  private static void work(Job<Task> job, JobContext<Task> ctx, int ms)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    while (System.nanoTime() - end < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      if (Thread.interrupted()) {
        Journal.add("interrupted", job, ctx.attempt(), ctx.token(), "-");
        throw new InterruptedException("interrupted while working");
      }
    }
  }
}
