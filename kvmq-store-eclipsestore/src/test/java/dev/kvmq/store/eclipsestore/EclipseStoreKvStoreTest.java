package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EclipseStoreKvStore} in its default {@link Durability#FSYNC} mode passes the store
 * contract.
 */
class EclipseStoreKvStoreTest extends KvStoreContract {

  @TempDir Path dir;

  @Override
  protected KvStore openStore() {
    return EclipseStoreKvStore.open(dir.resolve("store"));
  }

  @Override
  protected boolean firstEntriesAtOneState() {
    return true;
  }

  @Override
  protected boolean commitsOneAtATime() {
    return true;
  }
}
