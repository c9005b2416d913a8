package dev.kvmq.store;

/** {@link InMemoryKvStore} passes the store contract. */
class InMemoryKvStoreTest extends KvStoreContract {
  @Override
  protected KvStore openStore() {
    return new InMemoryKvStore();
  }

  @Override
  protected boolean firstEntriesAtOneState() {
    return true;
  }
}
