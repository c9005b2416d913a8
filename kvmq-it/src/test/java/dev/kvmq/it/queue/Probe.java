package dev.kvmq.it.queue;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import jakarta.enterprise.concurrent.ManageableThread;
import java.time.Instant;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/** Runs a test job and records what the handler's thread could see. */
final class Probe {

  private Probe() {}

  static void handle(String queue, Recorder recorder, Job<Task> job, JobContext<Task> ctx)
      throws Exception {
    Task task = job.state();
    Thread thread = Thread.currentThread();
    boolean jndi;
    try {
      jndi = new InitialContext().lookup("java:comp/DefaultManagedExecutorService") != null;
    } catch (NamingException e) {
      jndi = false;
    }
    Instant started = Instant.now();
    boolean alone = task.label().startsWith("together-") && !recorder.meet();
    boolean fail =
        alone || (ctx.attempt() <= task.failAttempts() && !recorder.isHealed(task.label()));
    if (task.workMs() > 0) {
      Thread.sleep(task.workMs()); // the job's simulated work
    }
    recorder.run(
        new Recorder.Run(
            queue,
            task.label(),
            job.id(),
            ctx.attempt(),
            started,
            thread.getName(),
            thread instanceof ManageableThread,
            jndi,
            recorder != null,
            !fail));
    if (fail) {
      throw new IllegalStateException(
          alone
              ? task.label() + " ran alone: the other job did not start within 20 s"
              : "attempt " + ctx.attempt() + " of " + task.label() + " fails on purpose");
    }
  }
}
