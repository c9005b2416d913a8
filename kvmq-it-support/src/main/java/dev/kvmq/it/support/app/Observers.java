package dev.kvmq.it.support.app;

import dev.kvmq.jakarta.JobCompleted;
import dev.kvmq.jakarta.JobFailed;
import dev.kvmq.jakarta.JobLeaseLost;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/** Writes kvmq's CDI events to the {@link Journal}. */
@ApplicationScoped
public class Observers {

  void completed(@Observes JobCompleted e) {
    Journal.add("completed", e.job(), e.job().attempt(), e.job().token(), e.queue());
  }

  void failed(@Observes JobFailed e) {
    Journal.add("failed", e.job(), e.job().attempt(), e.job().token(), e.queue());
  }

  void leaseLost(@Observes JobLeaseLost e) {
    Journal.add("lease-lost", e.job(), e.job().attempt(), e.job().token(), e.refusedOutcome());
  }
}
