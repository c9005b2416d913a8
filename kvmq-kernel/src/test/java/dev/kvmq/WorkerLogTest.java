package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.testing.FaultyStore;
import dev.kvmq.testing.LogCapture;
import dev.kvmq.testkit.FakeClock;
import dev.kvmq.testkit.ManualScheduler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a worker writes to the log (docs/observability.md, "Logs"): one line when an outage begins
 * and one when it ends, never one per job above DEBUG, and the queue and job id in every line about
 * a job. The log is read through a handler on the worker's logger.
 */
class WorkerLogTest {

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final FaultyStore store = new FaultyStore(new InMemoryKvStore());
  final Queue<String> queue = Queue.builder(store, "logged", Codecs.utf8()).clock(clock).build();
  final LogCapture log = new LogCapture(Worker.class.getName());
  final List<LogRecord> logged = log.records();

  @AfterEach
  void close() {
    log.close();
    store.close();
  }

  List<String> above(Level threshold) {
    return log.above(threshold);
  }

  void everyLineAboutAJobNamesItAndItsQueue(List<Job<String>> jobs) {
    for (LogRecord r : logged) {
      String m = r.getMessage();
      if (m.contains("job ")) {
        assertThat(m).contains("of queue logged");
        assertThat(jobs).as(m).anyMatch(j -> m.contains(j.id()));
      }
    }
  }

  @Test
  void aStoreOutageWhileOutcomesAreRecordedIsOneLineWhenItBeginsAndOneWhenItEnds() {
    List<Job<String>> jobs = queue.pushAll(List.of("a", "b", "c"), JobOptions.defaults());
    queue
        .worker(
            (job, ctx) -> {
              if (ctx.attempt() == 1) {
                store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY);
              }
            },
            WorkerOptions.defaults().concurrency(3),
            scheduler)
        .start();
    scheduler.runUntilIdle();
    assertThat(queue.counts().processing()).as("claimed, outcomes not recorded").isEqualTo(3);
    store.failCommits(null, FaultyStore.Mode.BEFORE_APPLY);
    scheduler.advance(Duration.ofMinutes(1)); // the leases expire; the jobs run again
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));

    assertThat(above(Level.WARNING))
        .singleElement()
        .satisfies(m -> assertThat(m).contains("the store of queue logged is failing"));
    assertThat(above(Level.INFO))
        .filteredOn(m -> !m.contains("is failing"))
        .containsExactly("the store of queue logged works again");
    assertThat(logged)
        .as("each job that could not be recorded, at DEBUG")
        .filteredOn(r -> r.getMessage().startsWith("could not record the outcome of job"))
        .hasSizeGreaterThanOrEqualTo(3)
        .allMatch(r -> r.getLevel() == Level.FINE);
    everyLineAboutAJobNamesItAndItsQueue(jobs);
  }

  @Test
  void aStoreClosedUnderAStoppingWorkersOutcomeIsAnInfoNotAnOutageWarning() {
    // an application stopping: it stops the worker, a handler outlives the wait, the store is
    // closed, then the handler returns and its outcome can't be recorded
    Job<String> job = queue.push("a");
    java.util.concurrent.atomic.AtomicReference<Worker<String>> worker =
        new java.util.concurrent.atomic.AtomicReference<>();
    worker.set(
        queue.worker(
            (j, ctx) -> {
              worker.get().stop();
              store.failCommits(op -> true, FaultyStore.Mode.BEFORE_APPLY);
            },
            WorkerOptions.defaults(),
            scheduler));
    worker.get().start();
    scheduler.runUntilIdle();

    assertThat(above(Level.WARNING)).isEmpty();
    assertThat(above(Level.INFO))
        .singleElement()
        .satisfies(
            m ->
                assertThat(m)
                    .contains("the store of queue logged failed while its worker was stopping")
                    .contains("run again when their leases expire"));
    everyLineAboutAJobNamesItAndItsQueue(List.of(job));
  }

  @Test
  void anExecutorThatRefusesClaimedJobsIsOneLineNotOnePerJob() {
    List<Job<String>> jobs = queue.pushAll(List.of("a", "b", "c"), JobOptions.defaults());
    // the scheduler, except that it refuses to run handlers (as one being shut down would)
    ScheduledExecutorService refusing =
        (ScheduledExecutorService)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {ScheduledExecutorService.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("execute")
                      && args[0].toString().startsWith("a handler slot")) {
                    throw new RejectedExecutionException("shut down");
                  }
                  try {
                    return method.invoke(scheduler, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    queue.worker((job, ctx) -> {}, WorkerOptions.defaults().concurrency(3), refusing).start();
    scheduler.runUntilIdle();

    assertThat(above(Level.WARNING))
        .singleElement()
        .satisfies(m -> assertThat(m).contains("the executor refuses the worker of queue logged"));
    assertThat(logged)
        .filteredOn(r -> r.getMessage().startsWith("executor refused job"))
        .isNotEmpty()
        .allMatch(r -> r.getLevel() == Level.FINE);
    everyLineAboutAJobNamesItAndItsQueue(jobs);
  }

  @Test
  void successfulJobsLogNothingAboveDebug() {
    queue.pushAll(List.of("a", "b", "c"), JobOptions.defaults());
    queue.worker((job, ctx) -> {}, WorkerOptions.defaults(), scheduler).start();
    scheduler.runUntilIdle();
    assertThat(queue.counts()).isEqualTo(new QueueCounts(0, 0, 0, 0));
    assertThat(above(Level.CONFIG)).isEmpty();
  }
}
