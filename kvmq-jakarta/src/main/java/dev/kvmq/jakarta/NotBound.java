package dev.kvmq.jakarta;

/**
 * A JNDI name that kvmq needs is not bound, perhaps not yet: Payara binds the resources that an
 * application defines itself (a {@code <data-source>}, a {@code @ManagedThreadFactoryDefinition})
 * only after CDI has started, so the runtime tries again for a while (see {@code
 * KvmqRuntime.onStart}).
 */
class NotBound extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The setting to check if the name is never bound. */
  private final String check;

  NotBound(String message, String check, Throwable cause) {
    super(message, cause);
    this.check = check;
  }

  /** The setting (or settings) to check if the name is never bound. */
  String check() {
    return check;
  }
}
