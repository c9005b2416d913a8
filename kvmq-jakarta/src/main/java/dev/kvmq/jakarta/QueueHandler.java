package dev.kvmq.jakarta;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a CDI bean that implements {@link dev.kvmq.JobHandler} as the handler of a queue.
 * The kvmq extension finds it at deployment, checks it, and runs a worker for it on the
 * container's {@code ManagedScheduledExecutorService} once the application has started.
 *
 * <pre>{@code
 * @ApplicationScoped
 * @QueueHandler(value = "emails", concurrency = 4)
 * public class EmailHandler implements JobHandler<Email> {
 *   public void handle(Job<Email> job, JobContext<Email> context) { ... }
 * }
 * }</pre>
 *
 * <p>Each setting can be overridden by configuration: {@code kvmq.queue.<name>.concurrency},
 * {@code .prefetch}, {@code .lease}, {@code .renew-every}, {@code .poll-every}. Durations are ISO-8601
 * ({@code PT30S}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface QueueHandler {

  /**
   * The queue's name.
   *
   * @return 1 to 200 characters; one handler per queue per application
   */
  String value();

  /**
   * How many jobs run at once; 0 starts the worker paused.
   *
   * @return 0 to 10,000 (default 1)
   */
  int concurrency() default 1;

  /**
   * How many jobs the worker claims ahead, beyond the running ones: they wait under a
   * renewed lease for a free handler slot, so a finishing handler takes its next job without
   * waiting for a claim. Raise it for many short jobs; a job claimed ahead waits on this node
   * even when another is idle. See {@link dev.kvmq.WorkerOptions#prefetch()}.
   *
   * @return 0 to 10,000 (default 0: claim only for free slots)
   */
  int prefetch() default 0;

  /**
   * How long a claim holds a job without renewal.
   *
   * @return an ISO-8601 duration (default {@code PT5S})
   */
  String lease() default "PT5S";

  /**
   * How often the leases of running jobs are renewed; shorter than {@link #lease()}.
   *
   * @return an ISO-8601 duration (default {@code PT2S})
   */
  String renewEvery() default "PT2S";

  /**
   * How often an idle worker looks for work if the store can't notify it (and the longest
   * it waits if it can).
   *
   * @return an ISO-8601 duration (default {@code PT3S})
   */
  String pollEvery() default "PT3S";
}
