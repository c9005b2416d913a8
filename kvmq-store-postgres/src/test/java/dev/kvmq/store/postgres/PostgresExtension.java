package dev.kvmq.store.postgres;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts one embedded PostgreSQL for the whole test JVM, on first use, and stops it when the JVM's
 * tests are done (it lives in the root context's store, which closes it). Resolves two parameter
 * types:
 *
 * <ul>
 *   <li>{@link TestDatabase}: the shared server, with its pool;
 *   <li>{@link TestSchema}: a fresh schema name, dropped when the context that asked for it ends:
 *       after the test for a test or {@code @BeforeEach} parameter, after the class for a
 *       {@code @BeforeAll} or constructor parameter.
 * </ul>
 *
 * <p>Test classes do not share schemas, so they need no server of their own; tests that stop or
 * restart PostgreSQL start their own ({@link TestDatabase#startOn}). Use it through {@link
 * PostgresTest}.
 */
final class PostgresExtension implements ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(PostgresExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == TestDatabase.class || type == TestSchema.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    TestDatabase db = database(context);
    if (parameter.getParameter().getType() == TestDatabase.class) {
      return db;
    }
    TestSchema schema = new TestSchema(db, TestDatabase.freshSchemaName());
    context.getStore(NAMESPACE).put(schema.name(), new Dropped(schema));
    return schema;
  }

  /** The JVM's database, started on first use. */
  static TestDatabase database(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(TestDatabase.class, k -> TestDatabase.start(), TestDatabase.class);
  }

  /** Drops its schema when the context's store is closed. */
  private record Dropped(TestSchema schema) implements AutoCloseable {
    @Override
    public void close() {
      schema.db().dropSchema(schema.name());
    }
  }
}
