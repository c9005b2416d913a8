package dev.kvmq.it.runtime;

import dev.kvmq.jakarta.JobCompleted;
import dev.kvmq.jakarta.JobLeaseLost;
import dev.kvmq.jakarta.OnQueue;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * A synchronous observer that takes 6 s over one event (an application's slow audit call), three
 * times the queue's lease, and calls a request-scoped bean.
 */
@ApplicationScoped
public class SlowObserver {

  @Inject Ledger ledger;

  @Inject PerEvent perEvent;

  void completed(@Observes @OnQueue("observed") JobCompleted event) throws InterruptedException {
    String customer = event.job(Bill.class).state().customer();
    if (customer.equals("slow")) {
      ledger.add("observing slow");
      Thread.sleep(6_000);
    }
    ledger.add("observed " + customer);
    ledger.add("request " + perEvent.id() + " for " + customer);
  }

  void leaseLost(@Observes @OnQueue("observed") JobLeaseLost event) {
    ledger.add("lease lost " + event.job(Bill.class).state().customer());
  }
}
