package dev.kvmq.it.held;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The handler of {@code receipts}: records in memory which receipts ran in this process. */
@ApplicationScoped
@QueueHandler("receipts")
public class ReceiptHandler implements JobHandler<Receipt> {

  /** The ids of the receipts that ran since the application started. */
  static final Set<String> RAN = ConcurrentHashMap.newKeySet();

  @Override
  public void handle(Job<Receipt> job, JobContext<Receipt> ctx) {
    RAN.add(job.state().id());
  }
}
