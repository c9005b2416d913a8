/**
 * kvmq for Jakarta EE: {@link dev.kvmq.jakarta.JobQueue}, {@link dev.kvmq.jakarta.QueueHandler},
 * the job events, and the CDI extension that finds the handlers.
 *
 * <p>Servers deploy this jar on the class path (a WAR's {@code WEB-INF/lib}), where this descriptor
 * is ignored. On a module path: the package is open because CDI, JAX-RS and JSON-B reach kvmq's
 * beans, resources and problem documents reflectively; the PostgreSQL store and the MicroProfile
 * APIs are optional ({@code requires static}), used only where present.
 *
 * <p>The MicroProfile Config, Health and Metrics API jars kvmq compiles against declare no module
 * name; their names here are the ones Java derives from their file names. The OpenTelemetry API
 * jars name themselves ({@code Automatic-Module-Name}). They are static requirements: nothing fails
 * to resolve without them.
 */
module dev.kvmq.jakarta {
  requires transitive dev.kvmq;
  requires dev.kvmq.store.eclipsestore;
  requires static dev.kvmq.store.postgres;

  // Public classes of the exported package name types of these in their signatures (the
  // qualifiers, the JSON-B codec, the REST resources JAX-RS needs public): a reader gets them.
  requires transitive jakarta.cdi;
  requires transitive jakarta.json.bind;
  requires transitive jakarta.ws.rs;
  requires jakarta.annotation;
  requires jakarta.concurrency;
  requires jakarta.inject;
  requires jakarta.json;
  // KvmqBasicAuthentication is a public Jakarta Security mechanism over servlet requests.
  requires transitive jakarta.security;
  requires transitive jakarta.servlet;
  requires jakarta.transaction;
  requires java.naming;
  requires java.sql;
  requires static microprofile.config.api;
  requires static microprofile.health.api;
  requires static microprofile.metrics.api;
  requires static io.opentelemetry.api;
  requires static io.opentelemetry.context;

  exports dev.kvmq.jakarta;

  opens dev.kvmq.jakarta;

  provides jakarta.enterprise.inject.spi.Extension with
      dev.kvmq.jakarta.KvmqExtension;
  provides jakarta.servlet.ServletContainerInitializer with
      dev.kvmq.jakarta.KvmqPathCheck;
}
