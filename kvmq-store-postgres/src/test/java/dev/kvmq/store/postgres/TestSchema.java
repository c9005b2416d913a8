package dev.kvmq.store.postgres;

/**
 * A fresh, unused schema name on the shared {@link TestDatabase}, given by {@link
 * PostgresExtension}; the schema (created by the first store that uses it) is dropped when the
 * scope it was given for ends.
 *
 * @param db the database it lives in
 * @param name the schema's name
 */
record TestSchema(TestDatabase db, String name) {

  /** A store builder on the shared pool and this schema. */
  PostgresKvStore.Builder store() {
    return PostgresKvStore.builder(db.pool()).schema(name);
  }

  @Override
  public String toString() {
    return name;
  }
}
