/**
 * The embedded durable store: {@link dev.kvmq.store.eclipsestore.EclipseStoreKvStore}, the kernel's
 * store SPI on EclipseStore.
 *
 * <p>The package opens nothing: EclipseStore reads and writes the fields of the store's
 * (package-private) page and entry classes through {@code sun.misc.Unsafe}, which needs no
 * reflective access (kvmq-jakarta's ModuleDescriptorsTest stores and reads them back on a module
 * path). On the class path (a WAR's {@code WEB-INF/lib}) this descriptor is ignored and the jar
 * works the same.
 */
module dev.kvmq.store.eclipsestore {
  requires transitive dev.kvmq;
  requires org.eclipse.store.storage.embedded;

  exports dev.kvmq.store.eclipsestore;
}
