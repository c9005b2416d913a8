package dev.kvmq.store.postgres;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against the one embedded PostgreSQL of this test JVM (see {@link
 * PostgresExtension}): its constructor, lifecycle and test methods may take a {@link TestDatabase}
 * (the server, shared) and a {@link TestSchema} (a fresh schema, dropped when the test, or the
 * class for a {@code @BeforeAll} parameter, is done).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(PostgresExtension.class)
@interface PostgresTest {}
