package dev.kvmq.it.lifecycle;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;

/**
 * The handler of the queue {@code work}: one at a time (Payara Micro's default managed
 * scheduled executor runs one thread, so a second would not run anyway), a short lease.
 */
@ApplicationScoped
@QueueHandler(value = "work", concurrency = 1, lease = "PT2S", renewEvery = "PT0.5S", pollEvery = "PT1S")
public class WorkHandler implements JobHandler<Task> {

    @Inject
    Greeter greeter;

    @Override
    public void handle(Job<Task> job, JobContext<Task> ctx) throws Exception {
        Steps.run(job, ctx, greeter);
    }
}
