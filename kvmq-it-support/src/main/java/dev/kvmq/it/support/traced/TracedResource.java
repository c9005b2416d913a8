package dev.kvmq.it.support.traced;

import dev.kvmq.Job;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * {@code POST /api/jobs}: pushes a job on the queue {@code traced} and answers its id. A JAX-RS
 * request, so that MicroProfile Telemetry makes it a server span: the push's context.
 */
@Path("jobs")
@RequestScoped
public class TracedResource {

  @Inject
  @QueueName("traced")
  JobQueue<String> queue;

  /**
   * @param label the job's state
   * @return the job's id
   */
  @POST
  @Produces(MediaType.TEXT_PLAIN)
  public String push(String label) {
    return queue.push(label).map(Job::id).orElseThrow();
  }
}
