package dev.kvmq;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;

/** The deterministic simulation on {@link InMemoryKvStore}. */
class InMemorySimulationTest extends SimulationContract {
  @Override
  protected KvStore newStore() {
    return new InMemoryKvStore();
  }
}
