/**
 * kvmq's kernel: the queue ({@link dev.kvmq.Queue}, {@link dev.kvmq.Worker}), the store SPI with
 * its in-memory store ({@link dev.kvmq.store}) and the test kit for users' handler tests ({@link
 * dev.kvmq.testkit}). It reads {@code java.base} only.
 *
 * <p>Only these three packages are API. On the class path (a WAR's {@code WEB-INF/lib}) this
 * descriptor is ignored and the jar works the same.
 */
module dev.kvmq {
  exports dev.kvmq;
  exports dev.kvmq.store;
  exports dev.kvmq.testkit;
}
