package dev.kvmq;

import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;

/** The group model test on the in-memory store. */
class InMemoryGroupModelTest extends GroupModelContract {
  @Override
  protected KvStore newStore() {
    return new InMemoryKvStore();
  }
}
