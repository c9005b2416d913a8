package dev.kvmq.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Stereotype;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a class that implements {@link dev.kvmq.JobHandler} as the handler of a queue. The kvmq
 * extension finds it at deployment, checks it, and runs a worker for it once the application has
 * started (see {@code docs/jakarta.md} for the threads).
 *
 * <pre>{@code
 * @QueueHandler(value = "emails", concurrency = 4, retries = 5, retryDelay = "PT2S", retryMultiplier = 2,
 *     retryMaxDelay = "PT5M")
 * public class EmailHandler implements JobHandler<Email> {
 *   public void handle(Job<Email> job, JobContext<Email> context) { ... }
 * }
 * }</pre>
 *
 * <p>It is a CDI stereotype with the default scope {@link ApplicationScoped}, so it makes its class
 * a bean on its own (a bean-defining annotation, also in an archive with {@code
 * bean-discovery-mode="annotated"}); a scope on the class takes precedence.
 *
 * <p>The worker's settings ({@link #concurrency()} to {@link #pollEvery()}) and the queue's default
 * job options ({@link #priority()}, {@link #retries()} to {@link #retryJitter()}) can be overridden
 * by configuration: {@code kvmq.queue.<name>.concurrency}, {@code .prefetch}, {@code .handoff},
 * {@code .lease}, {@code .renew-every}, {@code .poll-every}, {@code .priority}, {@code .retries},
 * {@code .retry-delay}, {@code .retry-multiplier}, {@code .retry-max-delay}, {@code .retry-jitter},
 * {@code .ignore-unknown-properties}, {@code .thread-factory}, and the queue's job control and
 * history ({@link #timeout()} to {@link #keepDead()}) by {@code .timeout}, {@code .non-retryable},
 * {@code .keep-completed}, {@code .keep-cancelled}, {@code .keep-dead}. Durations are ISO-8601
 * ({@code PT30S}). The default job options apply to pushes that give no options of their own
 * ({@link JobQueue#push(Object)}); {@link JobQueue#defaultOptions()} returns them to start from.
 */
@Stereotype
@ApplicationScoped
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
   * How many jobs the worker claims ahead, beyond the running ones: they wait under a renewed lease
   * for a free handler slot, so a finishing handler takes its next job without waiting for a claim.
   * Raise it for many short jobs; a job claimed ahead waits on this node even when another is idle.
   * See {@link dev.kvmq.WorkerOptions#prefetch()}.
   *
   * @return 0 to 10,000 (default 0: claim only for free slots)
   */
  int prefetch() default 0;

  /**
   * Whether a job pushed on this node (outside a JTA transaction, or after its commit) while the
   * worker has an idle handler slot is leased to the worker in the push's own commit and started at
   * once, instead of waiting for a claim: one commit less per job (kvmq-bench's pickup p50 on
   * PostgreSQL: 2.45 ms without, 1.42 ms with it; docs/performance.md). Only for jobs due now, of
   * no group and with no unique key, in a queue without a rate limit, while the queue and its
   * starts are not paused; the push then returns the job already processing. See {@link
   * dev.kvmq.WorkerOptions#handoff()}.
   *
   * @return true to take handoffs (default false)
   */
  boolean handoff() default false;

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
   * How often an idle worker looks for work if the store can't notify it (and the longest it waits
   * if it can).
   *
   * @return an ISO-8601 duration (default {@code PT3S})
   */
  String pollEvery() default "PT3S";

  /**
   * The priority of a job pushed without options of its own; higher runs first.
   *
   * @return any finite number (default 0)
   */
  double priority() default 0;

  /**
   * How many times a failed attempt of a job pushed without options of its own is retried before it
   * becomes a dead letter.
   *
   * @return 0 or more (default 0: no retries)
   */
  int retries() default 0;

  /**
   * The wait before the first retry.
   *
   * @return an ISO-8601 duration (default {@code PT0S})
   */
  String retryDelay() default "PT0S";

  /**
   * The factor by which the wait grows per further retry; 1 waits {@link #retryDelay()} before
   * every retry.
   *
   * @return a finite number of at least 1 (default 1)
   */
  double retryMultiplier() default 1;

  /**
   * The longest wait before a retry; empty for no cap.
   *
   * @return an ISO-8601 duration, at least {@link #retryDelay()}, or empty (default)
   */
  String retryMaxDelay() default "";

  /**
   * The random fraction of each wait, from 0 to 1 (the wait is drawn from {@code [d * (1 - jitter),
   * d]}).
   *
   * @return 0 to 1 (default 0)
   */
  double retryJitter() default 0;

  /**
   * Whether a state whose JSON has properties that its type does not have is read anyway, those
   * properties dropped. By default such a state is refused with an error that names the property (a
   * misspelt field must not become a default value).
   *
   * @return true to ignore unknown properties (default false)
   */
  boolean ignoreUnknownProperties() default false;

  /**
   * The JNDI name of a {@code ManagedThreadFactory} whose threads run this queue's handlers, on a
   * pool of the queue's own ({@link #concurrency()} threads and one for the worker's passes and
   * lease renewals). On Jakarta EE 11 the application declares one that makes virtual threads:
   *
   * <pre>{@code
   * @ManagedThreadFactoryDefinition(name = "java:app/concurrent/virtual", virtual = true)
   * @QueueHandler(value = "fetches", concurrency = 1000, threadFactory = "java:app/concurrent/virtual")
   * public class FetchHandler implements JobHandler<Fetch> { ... }
   * }</pre>
   *
   * <p>kvmq logs at start whether the threads it got are virtual: a server may ignore {@code
   * virtual = true}. A name that is not bound to a {@code ManagedThreadFactory} fails the start,
   * naming the queue and the setting.
   *
   * @return a JNDI name, or empty (default) for kvmq's pool of {@code
   *     java:comp/DefaultManagedThreadFactory} threads (or {@code kvmq.executor})
   */
  String threadFactory() default "";

  /**
   * The queue's default timeout: a run of a job whose options give no timeout of their own that
   * takes longer is told to stop ({@link dev.kvmq.JobContext.CancelReason#TIMED_OUT}), and its
   * attempt counts as failed with a {@link dev.kvmq.JobTimeoutException}: retries and backoff
   * apply, then the dead letters. See {@link dev.kvmq.Queue.Builder#defaultTimeout}.
   *
   * @return an ISO-8601 duration of at least 1 ms, or empty (default) for no timeout
   */
  String timeout() default "";

  /**
   * The exception types that fail a job for good: a handler that throws one of them (or a subclass)
   * makes its job a dead letter at once, whatever retries it has left. Configuration ({@code
   * kvmq.queue.NAME.non-retryable}, fully qualified class names separated by commas) replaces this
   * list. See {@link dev.kvmq.Queue.Builder#nonRetryable}.
   *
   * @return the types (default none)
   */
  Class<? extends Throwable>[] nonRetryable() default {};

  /**
   * How long completed jobs are kept, with their results and attempts: {@code none}, {@code
   * unlimited}, an ISO-8601 age ({@code P7D}), a count ({@code 10000}: the newest), or both ({@code
   * P7D,10000}: a job past either limit is pruned). See {@link dev.kvmq.Retention}.
   *
   * @return the retention, or empty (default) for kvmq's: 1 day and 10,000 at most
   */
  String keepCompleted() default "";

  /**
   * How long cancelled jobs are kept, written as for {@link #keepCompleted()}.
   *
   * @return the retention, or empty (default) for kvmq's: 7 days and 10,000 at most
   */
  String keepCancelled() default "";

  /**
   * How long dead letters are kept, written as for {@link #keepCompleted()}; {@code none} drops a
   * job in the commit that would make it a dead letter.
   *
   * @return the retention, or empty (default) for kvmq's: until replayed or deleted
   */
  String keepDead() default "";
}
