package dev.kvmq.bench.queue;

import static org.jobrunr.server.BackgroundJobServerConfiguration.usingStandardBackgroundJobServerConfiguration;

import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.jobrunr.configuration.JobRunr;
import org.jobrunr.scheduling.JobScheduler;
import org.jobrunr.server.BackgroundJobServer;
import org.jobrunr.server.JobActivator;
import org.jobrunr.storage.InMemoryStorageProvider;
import org.jobrunr.storage.StorageProvider;
import org.jobrunr.storage.sql.postgres.PostgresStorageProvider;
import org.jobrunr.utils.mapper.JsonMapper;
import org.jobrunr.utils.mapper.jackson.JacksonJsonMapper;

/**
 * JobRunr (open-source edition): jobs are calls of a static method with the job id; a background
 * job server with the run's worker count and the smallest poll interval the storage accepts (in
 * memory 200 ms, SQL 5 s: JobRunr refuses less).
 */
final class JobRunrSut implements Sut {

  private final StorageProvider storage;
  private final JsonMapper json = new JacksonJsonMapper();
  private final JobScheduler scheduler;
  private final Duration pollInterval;
  private int threads = 8;

  JobRunrSut(DataSource dataSource) {
    this.storage =
        dataSource == null
            ? new InMemoryStorageProvider()
            : new PostgresStorageProvider(dataSource);
    this.pollInterval = dataSource == null ? Duration.ofMillis(200) : Duration.ofSeconds(5);
    this.scheduler =
        JobRunr.configure()
            .useJsonMapper(json)
            .useStorageProvider(storage)
            .initialize()
            .getJobScheduler();
  }

  @Override
  public String settings() {
    return "JobRunr "
        + Versions.of("jobrunr")
        + " workerCount="
        + threads
        + " pollInterval="
        + pollInterval.toMillis()
        + "ms"
        + (storage instanceof InMemoryStorageProvider
            ? " InMemoryStorageProvider"
            : " PostgresStorageProvider");
  }

  @Override
  public void pushOne(int id) {
    scheduler.enqueue(() -> JobRunrWork.run(id));
  }

  @Override
  public void pushBatch(List<Integer> ids) {
    scheduler.enqueue(ids.stream(), id -> JobRunrWork.run(id));
  }

  @Override
  public AutoCloseable start(int threads) {
    this.threads = threads;
    JobActivator none =
        new JobActivator() {
          @Override
          public <T> T activateJob(Class<T> type) {
            return null; // static jobs only
          }
        };
    BackgroundJobServer server =
        new BackgroundJobServer(
            storage,
            json,
            none,
            usingStandardBackgroundJobServerConfiguration()
                .andWorkerCount(threads)
                .andPollInterval(pollInterval));
    server.start();
    return server::stop;
  }

  @Override
  public void close() {
    storage.close();
  }
}
