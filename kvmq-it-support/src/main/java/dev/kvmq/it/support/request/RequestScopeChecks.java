package dev.kvmq.it.support.request;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Job;
import dev.kvmq.JobStatus;
import dev.kvmq.it.support.Wait;
import dev.kvmq.jakarta.JobQueue;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The checks of request scope in handler calls, run inside the server by {@code
 * RequestScopeOnPayaraIT} and {@code RequestScopeOnWildFlyIT}: two jobs, one failing its first
 * attempt, complete; every call had request-scoped instances of its own, each destroyed after it.
 */
public final class RequestScopeChecks {

  private final Tally tally;

  /**
   * @param tally what the handlers recorded
   */
  public RequestScopeChecks(Tally tally) {
    this.tally = tally;
  }

  /**
   * The {@code @RequestScoped} handler ({@link ScopedHandler}): an instance per call.
   *
   * @param scoped its queue
   */
  public void aRequestScopedHandlerCompletesItsJobsWithAnInstancePerAttempt(
      JobQueue<Visit> scoped) {
    List<Tally.Call> calls = runTwoJobs(scoped);
    assertFreshAndDestroyed(calls, true);
  }

  /**
   * The {@code @ApplicationScoped} handler that calls a {@code @RequestScoped} bean ({@link
   * WiredHandler}): one handler, a bean per call.
   *
   * @param wired its queue
   */
  public void anApplicationScopedHandlerCallsARequestScopedBeanWithAnInstancePerAttempt(
      JobQueue<Visit> wired) {
    List<Tally.Call> calls = runTwoJobs(wired);
    assertThat(calls.stream().map(Tally.Call::handler).distinct())
        .as("one @ApplicationScoped handler instance")
        .hasSize(1);
    assertFreshAndDestroyed(calls, false);
  }

  /** Pushes a job that completes at once and one that fails its first attempt; their calls. */
  private List<Tally.Call> runTwoJobs(JobQueue<Visit> queue) {
    Job<Visit> once = queue.push(new Visit("once", 0)).orElseThrow();
    Job<Visit> twice = queue.push(new Visit("twice", 1)).orElseThrow();

    assertCompleted(ended(queue, once));
    assertCompleted(ended(queue, twice));

    List<Tally.Call> calls = tally.calls(queue.name());
    assertThat(calls)
        .extracting(c -> c.label() + " " + c.attempt())
        .containsExactlyInAnyOrder("once 1", "twice 1", "twice 2");
    return calls;
  }

  /** Waits until the job is completed or a dead letter; returns it then. */
  private static Job<Visit> ended(JobQueue<Visit> queue, Job<Visit> job) {
    return Wait.until(
        "job " + job.state().label() + " of " + queue.name() + " to end",
        () -> queue.job(job.id()).orElseThrow(),
        j -> j.status() == JobStatus.COMPLETED || j.status() == JobStatus.DEAD);
  }

  private static void assertCompleted(Job<Visit> job) {
    assertThat(job.status())
        .as("job %s, attempts %s", job.state().label(), job.attempts())
        .isEqualTo(JobStatus.COMPLETED);
  }

  /**
   * Every call had a {@link Scratch} of its own (and, for a request-scoped handler, a handler
   * instance of its own), each destroyed after its call: as many destroyed as calls.
   */
  private void assertFreshAndDestroyed(List<Tally.Call> calls, boolean handlerPerCall) {
    Set<String> scratches = calls.stream().map(Tally.Call::scratch).collect(Collectors.toSet());
    assertThat(scratches).as("a Scratch per call").hasSize(calls.size());
    Set<String> destroyed = tally.destroyed();
    assertThat(destroyed.stream().filter(scratches::contains).count())
        .as("Scratches destroyed")
        .isEqualTo(calls.size());
    if (handlerPerCall) {
      Set<String> handlers = calls.stream().map(Tally.Call::handler).collect(Collectors.toSet());
      assertThat(handlers).as("a handler instance per call").hasSize(calls.size());
      assertThat(destroyed.stream().filter(handlers::contains).count())
          .as("handler instances destroyed")
          .isEqualTo(calls.size());
    }
  }
}
