package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.Key;
import dev.kvmq.store.KvStoreException;
import java.nio.file.Path;

/**
 * A process that tries to open a storage directory and prints {@code OPENED} or {@code REFUSED:
 * message}. Used by {@link DirectoryLockRegressionTest}.
 */
public final class OpenProbe {

  private OpenProbe() {}

  /**
   * Tries to open {@code args[0]}.
   *
   * @param args the storage directory
   */
  public static void main(String[] args) {
    try (EclipseStoreKvStore store = EclipseStoreKvStore.open(Path.of(args[0]))) {
      store.get(Key.of("probe")); // the store works, not only its lock
      System.out.println("OPENED");
    } catch (KvStoreException e) {
      System.out.println("REFUSED: " + e.getMessage());
    }
  }
}
