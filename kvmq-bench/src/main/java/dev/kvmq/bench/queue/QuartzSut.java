package dev.kvmq.bench.queue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import javax.sql.DataSource;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.utils.ConnectionProvider;

/**
 * Quartz: one job (named by the job id, with a trigger that fires now and ignores misfires) per job
 * id, a thread pool of the run's handler threads. Its configuration guide for many triggers firing
 * at once: {@code batchTriggerAcquisitionMaxCount} above 1 (here: the thread count), which on a
 * JDBC store needs {@code acquireTriggersWithinLock=true}. JDBC: JobStoreTX with the PostgreSQL
 * delegate on the benchmark's pool.
 */
@SuppressWarnings("try") // close() may be interrupted while the system stops; callers pass it on
final class QuartzSut implements Sut {

  /** The pool Quartz's JDBC store uses (Quartz instantiates the provider by class name). */
  static volatile DataSource pool;

  private final boolean jdbc;
  private final Properties props = new Properties();
  private Scheduler scheduler;

  QuartzSut(DataSource dataSource, int threads) throws Exception {
    this.jdbc = dataSource != null;
    props.setProperty("org.quartz.scheduler.instanceName", "bench");
    props.setProperty("org.quartz.threadPool.threadCount", Integer.toString(threads));
    props.setProperty(
        "org.quartz.scheduler.batchTriggerAcquisitionMaxCount", Integer.toString(threads));
    props.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
    if (jdbc) {
      pool = dataSource;
      createTables(dataSource);
      props.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
      props.setProperty(
          "org.quartz.jobStore.driverDelegateClass",
          "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate");
      props.setProperty("org.quartz.jobStore.acquireTriggersWithinLock", "true");
      props.setProperty("org.quartz.jobStore.dataSource", "bench");
      props.setProperty(
          "org.quartz.dataSource.bench.connectionProvider.class", PoolProvider.class.getName());
    } else {
      props.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
    }
    StdSchedulerFactory factory = new StdSchedulerFactory(props);
    scheduler = factory.getScheduler(); // in standby until start()
  }

  private static void createTables(DataSource ds) throws SQLException, IOException {
    String sql;
    try (InputStream in =
        Scheduler.class.getResourceAsStream("/org/quartz/impl/jdbcjobstore/tables_postgres.sql")) {
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    StringBuilder noComments = new StringBuilder();
    for (String line : sql.split("\n")) {
      if (!line.trim().startsWith("--")) {
        noComments.append(line).append('\n');
      }
    }
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String statement : noComments.toString().split(";")) {
        String st = statement.trim();
        if (!st.isEmpty() && !st.equalsIgnoreCase("commit")) {
          s.execute(st);
        }
      }
    }
  }

  @Override
  public String settings() {
    return "Quartz "
        + Versions.of("quartz")
        + " threadCount="
        + props.getProperty("org.quartz.threadPool.threadCount")
        + " batchTriggerAcquisitionMaxCount="
        + props.getProperty("org.quartz.scheduler.batchTriggerAcquisitionMaxCount")
        + " misfire=IGNORE_MISFIRE_POLICY payload=job name"
        + (jdbc ? " JobStoreTX PostgreSQLDelegate acquireTriggersWithinLock=true" : " RAMJobStore");
  }

  /** The job's payload is its name (the job id): no JobDataMap to store, load and merge. */
  private static JobDetail job(int id) {
    return JobBuilder.newJob(NoopJob.class).withIdentity(Integer.toString(id)).build();
  }

  /**
   * Fires once, now, and never misfires: Quartz's {@code MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY}
   * (its Javadoc: the trigger "will never be evaluated for a misfire situation", the scheduler
   * fires it as soon as it can), which is what a queue does with a job that waited. With the
   * default (smart) policy a trigger more than the store's misfireThreshold (60 s) late during a
   * long drain is left out of trigger acquisition and rescheduled by the misfire handler, one
   * update per trigger; on the JDBC store the acquisition query takes ignore-misfire triggers
   * whatever their age.
   */
  private static Trigger trigger(int id) {
    return TriggerBuilder.newTrigger()
        .withIdentity(Integer.toString(id))
        .startNow()
        .withSchedule(
            SimpleScheduleBuilder.simpleSchedule().withMisfireHandlingInstructionIgnoreMisfires())
        .build();
  }

  @Override
  public void pushOne(int id) throws Exception {
    scheduler.scheduleJob(job(id), trigger(id));
  }

  @Override
  public void pushBatch(List<Integer> ids) throws Exception {
    Map<JobDetail, Set<? extends Trigger>> batch = new LinkedHashMap<>();
    for (int id : ids) {
      Set<Trigger> t = new HashSet<>();
      t.add(trigger(id));
      batch.put(job(id), t);
    }
    scheduler.scheduleJobs(batch, false);
  }

  @Override
  public AutoCloseable start(int threads) throws Exception {
    scheduler.start();
    if (!jdbc) {
      return () -> scheduler.standby();
    }
    // JDBC: standby() then start() again left triggers unfired here (2 of 500, never fired in
    // 600 s); a new scheduler instance recovers triggers left in the ACQUIRED state on start.
    // So each processing phase ends with a shutdown, and the next pushes go to a new instance.
    return () -> {
      scheduler.shutdown(true);
      scheduler = new StdSchedulerFactory(props).getScheduler();
    };
  }

  @Override
  public void close() throws Exception {
    scheduler.shutdown(true);
  }

  /** The no-op job. */
  public static final class NoopJob implements Job {
    /** Made by Quartz. */
    public NoopJob() {}

    @Override
    public void execute(JobExecutionContext context) {
      int id = Integer.parseInt(context.getJobDetail().getKey().getName());
      Probe.started(id);
      Probe.finished(id);
    }
  }

  /** Hands Quartz the benchmark's pool. */
  public static final class PoolProvider implements ConnectionProvider {
    /** Made by Quartz. */
    public PoolProvider() {}

    @Override
    public Connection getConnection() throws SQLException {
      return pool.getConnection();
    }

    @Override
    public void shutdown() {}

    @Override
    public void initialize() {}
  }
}
