package dev.kvmq.bench.queue;

/** The no-op job JobRunr runs: it must be a public static method that JobRunr can call. */
public final class JobRunrWork {

  private JobRunrWork() {}

  /**
   * Runs job {@code id}: reports its start and end to the benchmark.
   *
   * @param id the job id
   */
  public static void run(int id) {
    Probe.started(id);
    Probe.finished(id);
  }
}
