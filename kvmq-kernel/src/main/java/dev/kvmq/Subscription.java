package dev.kvmq;

/**
 * A handle on something that calls back until it is closed: the listening of {@link Queue#listen}
 * or {@link Queue#onChange}. Closing it twice is harmless.
 */
@FunctionalInterface
public interface Subscription extends AutoCloseable {

  /** Stops the calls; one already under way may still finish. Throws nothing. */
  @Override
  void close();
}
