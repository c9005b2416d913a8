package dev.kvmq.store.postgres;

import dev.kvmq.FlowSimulationContract;
import dev.kvmq.GroupModelContract;
import dev.kvmq.QueueModelContract;
import dev.kvmq.SimulationContract;
import dev.kvmq.store.KvStore;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;

/**
 * The kernel's queue-level suites on {@link PostgresKvStore}: the model-based test and the
 * deterministic simulation against a real PostgreSQL, each run in a fresh schema. Fewer seeds than
 * on the in-memory store: every commit is a database round trip.
 */
@PostgresTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresQueueContractsTest {

  private final TestDatabase db;

  PostgresQueueContractsTest(TestDatabase db) {
    this.db = db;
  }

  KvStore fresh() {
    return PostgresKvStore.builder(db.pool()).schema(TestDatabase.freshSchemaName()).build();
  }

  @Nested
  class Model extends QueueModelContract {
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
  class Simulation extends SimulationContract {
    @Override
    protected KvStore newStore() {
      return fresh();
    }

    @Override
    protected int runs() {
      return 20;
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
      return 10;
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
      return 20;
    }
  }
}
