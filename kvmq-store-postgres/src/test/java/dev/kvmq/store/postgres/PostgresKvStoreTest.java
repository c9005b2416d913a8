package dev.kvmq.store.postgres;

import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreContract;

/**
 * {@link PostgresKvStore} passes the store contract, against the test JVM's PostgreSQL; every test
 * gets its own fresh schema.
 */
@PostgresTest
class PostgresKvStoreTest extends KvStoreContract {

  private final TestDatabase db;
  private String schema;

  PostgresKvStoreTest(TestDatabase db) {
    this.db = db;
  }

  @Override
  protected KvStore openStore() {
    schema = TestDatabase.freshSchemaName();
    return PostgresKvStore.builder(db.pool()).schema(schema).build();
  }

  @Override
  protected void cleanUp() {
    db.dropSchema(schema);
  }

  @Override
  protected boolean firstEntriesAtOneState() {
    return true;
  }
}
