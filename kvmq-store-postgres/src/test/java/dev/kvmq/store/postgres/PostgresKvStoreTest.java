package dev.kvmq.store.postgres;

import dev.kvmq.store.KvStore;
import dev.kvmq.store.KvStoreContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link PostgresKvStore} passes the store contract, against a real PostgreSQL started once
 * for this class; every test gets its own fresh schema.
 */
class PostgresKvStoreTest extends KvStoreContract {

  private static TestDatabase db;
  private String schema;

  @BeforeAll
  static void startDatabase() {
    db = TestDatabase.start();
  }

  @AfterAll
  static void stopDatabase() throws Exception {
    if (db != null) {
      db.close();
    }
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
}
