package dev.kvmq.it.runtime;

import dev.kvmq.jakarta.JobCompleted;
import dev.kvmq.jakarta.JobFailed;
import dev.kvmq.jakarta.OnQueue;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/** Reads the events' jobs with their state type, as docs/jakarta.md shows. */
@ApplicationScoped
public class TypedObserver {

  @Inject Ledger ledger;

  void completed(@Observes @OnQueue("unscoped") JobCompleted event) {
    Bill bill = event.job(Bill.class).state();
    ledger.add("completed " + bill.customer() + " " + bill.cents());
  }

  void failed(@Observes @OnQueue("retrying") JobFailed event) {
    try {
      event.job(String.class);
      ledger.add("wrong type accepted");
    } catch (ClassCastException e) {
      ledger.add("refused: " + e.getMessage());
    }
  }
}
