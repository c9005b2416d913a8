package dev.kvmq.jakarta;

import dev.kvmq.JobHandler;
import dev.kvmq.WorkerOptions;
import java.lang.reflect.Type;

/** A validated handler: its queue, bean class, payload type and the queue's settings. */
record HandlerSpec(
    String queue,
    Class<? extends JobHandler<?>> beanClass,
    Type payloadType,
    QueueSettings settings) {

  /** The worker's options. */
  WorkerOptions options() {
    return settings.worker();
  }
}
