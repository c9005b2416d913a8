package dev.kvmq;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;

/** The flow simulation on the in-memory store. */
class InMemoryFlowSimulationTest extends FlowSimulationContract {
  @Override
  protected KvStore newStore() {
    return new InMemoryKvStore();
  }
}
