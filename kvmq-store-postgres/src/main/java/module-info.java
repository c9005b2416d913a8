/**
 * The shared store: {@link dev.kvmq.store.postgres.PostgresKvStore}, the kernel's store SPI on
 * PostgreSQL over JDBC.
 *
 * <p>The driver's module is {@code org.postgresql.jdbc}, the name its jar declares ({@code
 * Automatic-Module-Name}). On the class path (a WAR's {@code WEB-INF/lib}) this descriptor is
 * ignored and the jar works the same.
 */
module dev.kvmq.store.postgres {
  requires transitive dev.kvmq;
  requires transitive java.sql;
  requires org.postgresql.jdbc;

  exports dev.kvmq.store.postgres;
}
