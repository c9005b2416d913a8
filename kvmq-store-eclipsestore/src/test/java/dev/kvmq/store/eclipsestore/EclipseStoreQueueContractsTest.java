package dev.kvmq.store.eclipsestore;

import dev.kvmq.FlowSimulationContract;
import dev.kvmq.GroupModelContract;
import dev.kvmq.QueueModelContract;
import dev.kvmq.SimulationContract;
import dev.kvmq.store.KvStore;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel's queue-level suites on {@link EclipseStoreKvStore}: the model-based test and the
 * deterministic simulation, each run opening a fresh store directory. Fewer seeds than on the
 * in-memory store, since every run opens a real store (about 0.1-0.8 s here).
 */
class EclipseStoreQueueContractsTest {

  @TempDir static Path dir;

  private static final AtomicInteger RUNS = new AtomicInteger();

  static KvStore fresh() {
    return EclipseStoreKvStore.builder(dir.resolve("run-" + RUNS.incrementAndGet()))
        .durability(Durability.PROCESS_CRASH_SAFE)
        .open();
  }

  @Nested
  class Model extends QueueModelContract {
    @Override
    protected KvStore newStore() {
      return fresh();
    }

    @Override
    protected int runs() {
      return 100;
    }
  }

  @Nested
  class Simulation extends SimulationContract {
    @Override
    protected KvStore newStore() {
      return fresh();
    }

    @Override
    protected int runs() {
      return 40;
    }
  }

  @Nested
  class FlowSimulation extends FlowSimulationContract {
    @Override
    protected KvStore newStore() {
      return fresh();
    }

    @Override
    protected int runs() {
      return 30;
    }
  }

  @Nested
  class GroupModel extends GroupModelContract {
    @Override
    protected KvStore newStore() {
      return fresh();
    }

    @Override
    protected int runs() {
      return 60;
    }
  }
}
