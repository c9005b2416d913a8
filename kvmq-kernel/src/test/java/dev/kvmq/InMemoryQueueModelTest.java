package dev.kvmq;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;

/** The queue model test on {@link InMemoryKvStore}. */
class InMemoryQueueModelTest extends QueueModelContract {
  @Override
  protected KvStore newStore() {
    return new InMemoryKvStore();
  }
}
