package dev.kvmq.jakarta;

import dev.kvmq.JobHandler;
import dev.kvmq.WorkerOptions;
import java.lang.reflect.Type;

/** A validated handler: its queue, bean class, payload type and worker options. */
record HandlerSpec(String queue, Class<? extends JobHandler<?>> beanClass, Type payloadType, WorkerOptions options) {}
