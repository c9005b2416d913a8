package dev.kvmq.bench.queue;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerBuilder;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * db-scheduler on PostgreSQL: one-time tasks whose instance id is the job id. Its README for more
 * than 1,000 executions/s: the lock-and-fetch polling strategy ({@code select for update skip
 * locked}), "for high throughput set to for example 1.0, 4.0"; optionally immediate execution (a
 * task scheduled to run now by this scheduler runs without waiting for a poll).
 */
final class DbSchedulerSut implements Sut {

  /**
   * What a throughput-minded user picks (the default is 10 s): a poll every 100 ms, for both
   * variants, so that the polling variant's pickup is not a long interval's.
   */
  private static final Duration POLLING_INTERVAL = Duration.ofMillis(100);

  private static final double LOWER = 1.0;

  private final DataSource dataSource;
  private final boolean immediate;

  /**
   * The lock-and-fetch upper limit: at most {@code upper × threads} executions fetched and not
   * finished; 4.0 (its README's example) unless the bench's {@code --prefetch} sets kvmq's claim
   * limit to something else, so that both hold as many jobs.
   */
  private final double upper;

  private final OneTimeTask<Void> task =
      Tasks.oneTime("noop")
          .execute(
              (instance, context) -> {
                int id = Integer.parseInt(instance.getId());
                Probe.started(id);
                Probe.finished(id);
              });
  private final SchedulerClient client;
  private volatile Scheduler running;
  private int threads = 8;

  DbSchedulerSut(DataSource dataSource, boolean immediate, double upper) throws Exception {
    this.dataSource = dataSource;
    this.immediate = immediate;
    this.upper = upper;
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      // db-scheduler's table for PostgreSQL, from its repository (postgresql_tables.sql)
      s.execute(
          """
          create table scheduled_tasks (
            task_name text not null,
            task_instance text not null,
            task_data bytea,
            execution_time timestamp with time zone not null,
            picked boolean not null,
            picked_by text,
            last_success timestamp with time zone,
            last_failure timestamp with time zone,
            consecutive_failures int,
            last_heartbeat timestamp with time zone,
            version bigint not null,
            priority smallint,
            primary key (task_name, task_instance))""");
      s.execute("create index execution_time_idx on scheduled_tasks (execution_time)");
      s.execute("create index last_heartbeat_idx on scheduled_tasks (last_heartbeat)");
      s.execute(
          "create index priority_execution_time_idx on scheduled_tasks (priority desc, execution_time asc)");
    }
    this.client = SchedulerClient.Builder.create(dataSource, task).build();
  }

  @Override
  public String settings() {
    return "db-scheduler "
        + Versions.of("db-scheduler")
        + " threads="
        + threads
        + " pollUsingLockAndFetch("
        + LOWER
        + ", "
        + upper
        + ") pollingInterval="
        + POLLING_INTERVAL.toMillis()
        + "ms"
        + (immediate ? " enableImmediateExecution" : "");
  }

  @Override
  public void pushOne(int id) {
    Scheduler s = running;
    // with immediate execution, only the scheduler itself can start a task it schedules at once
    SchedulerClient target = s != null ? s : client;
    // what the deprecated schedule(TaskInstance, Instant) calls in db-scheduler 16
    target.scheduleIfNotExists(task.instance(Integer.toString(id)), Instant.now());
  }

  @Override
  public void pushBatch(List<Integer> ids) {
    List<TaskInstance<?>> instances = new ArrayList<>(ids.size());
    for (int id : ids) {
      instances.add(task.instance(Integer.toString(id)));
    }
    client.scheduleBatch(instances, Instant.now());
  }

  @Override
  public AutoCloseable start(int threads) {
    this.threads = threads;
    SchedulerBuilder b =
        Scheduler.create(dataSource, task)
            .threads(threads)
            .pollingInterval(POLLING_INTERVAL)
            .pollUsingLockAndFetch(LOWER, upper);
    if (immediate) {
      b.enableImmediateExecution();
    }
    Scheduler s = b.build();
    s.start();
    running = s;
    return () -> {
      running = null;
      s.stop();
    };
  }

  @Override
  public void close() {}
}
