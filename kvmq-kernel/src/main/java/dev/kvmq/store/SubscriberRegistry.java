package dev.kvmq.store;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The change subscribers of one store: a helper for {@link KvStore} implementations, which keep one
 * and forward {@link KvStore#subscribe} to {@link #subscribe}. It matches commits to prefixes,
 * calls the listeners, logs and ignores what they throw, and implements the close contract of
 * {@link KvStore.Subscription#close()} and {@link KvStore#close()}:
 *
 * <ul>
 *   <li>after a subscription's {@code close()} returns, no call of its listener is running or
 *       starts, except on the thread that closes: a listener may close its own subscription from
 *       within its call, and that close does not wait for itself;
 *   <li>a call running on another thread when {@code close()} is called is waited for: close
 *       returns once it has returned. If the closing thread is interrupted while it waits, close
 *       returns at once with the thread's interrupt status set, and that call may still be running;
 *   <li>{@link #close()} (the store's close) closes every subscription that way, and refuses later
 *       subscriptions.
 * </ul>
 *
 * <p>So a store calls {@link #close()} from its own {@code close()} before it returns, and must not
 * hold a lock that a listener could need while it does (the registry waits for running calls). The
 * notify methods run listeners on the calling thread, one after the other; a store calls them after
 * the commit is visible to reads.
 *
 * <p>Thread-safe. Each subscription has its own monitor, taken briefly before and after each call
 * of its listener and by its close; no lock is held while a listener runs.
 */
public final class SubscriberRegistry {

  private final System.Logger log;
  private final List<Registration> registrations = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  /**
   * Makes an empty registry.
   *
   * @param log where a failing listener is reported (one warning per failure); usually the store's
   *     own logger
   * @throws NullPointerException if {@code log} is null
   */
  public SubscriberRegistry(System.Logger log) {
    this.log = Objects.requireNonNull(log, "log");
  }

  /**
   * Registers {@code listener} for commits that write a key under {@code prefix} (that {@code
   * prefix} is a prefix of, or equal to).
   *
   * @param prefix the keys of interest
   * @param listener what to call
   * @return the subscription; closing it follows the contract in this class's comment
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the registry is closed
   */
  public KvStore.Subscription subscribe(Key prefix, Runnable listener) {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(listener, "listener");
    Registration r = new Registration(prefix.encodedInternal(), listener);
    registrations.add(r);
    if (closed) {
      // close() may have run between the check and the add: undo, and refuse
      r.close();
      throw new IllegalStateException("the store is closed");
    }
    return r;
  }

  /**
   * Tells whether no subscription is open, so that a store can skip preparing a notification.
   *
   * @return true if nobody listens
   */
  public boolean isEmpty() {
    return registrations.isEmpty();
  }

  /**
   * Calls, on this thread, every listener whose prefix one of the keys written by {@code applied}
   * is under.
   *
   * @param applied operations that were committed
   * @throws NullPointerException if {@code applied} or an element is null
   */
  public void notifyCommitted(List<AtomicOperation> applied) {
    Objects.requireNonNull(applied, "applied");
    if (applied.isEmpty() || registrations.isEmpty()) {
      return;
    }
    for (Registration r : registrations) {
      if (touches(applied, r.prefix)) {
        r.call();
      }
    }
  }

  /**
   * Calls, on this thread, every listener a key starting with {@code written} could concern: those
   * whose prefix starts with these bytes, or that these bytes start with. For stores that learn of
   * a commit elsewhere by the leading bytes of its keys only.
   *
   * @param written the leading bytes of the encoding of a written key
   * @throws NullPointerException if {@code written} is null
   */
  public void notifyKeysStartingWith(byte[] written) {
    Objects.requireNonNull(written, "written");
    for (Registration r : registrations) {
      // the key is under the prefix if `written` starts with it, and may be if the prefix
      // starts with `written`
      if (startsWith(written, r.prefix) || startsWith(r.prefix, written)) {
        r.call();
      }
    }
  }

  /** Calls, on this thread, every listener: for when a store cannot tell what changed. */
  public void notifyEveryone() {
    for (Registration r : registrations) {
      r.call();
    }
  }

  /**
   * Closes every subscription, waiting for calls running on other threads to return, and refuses
   * later subscriptions. A second call does nothing more.
   */
  public void close() {
    closed = true;
    for (Registration r : registrations) {
      r.close();
    }
  }

  private static boolean touches(List<AtomicOperation> applied, byte[] prefix) {
    int last = prefix.length - 1; // 1 or more: a key has a part, and a part a byte or more
    for (AtomicOperation op : applied) {
      for (AtomicOperation.Mutation m : op.mutations()) {
        byte[] key = m.key().encodedInternal();
        // a queue's keys share their first bytes and its prefixes differ in their last ones:
        // that byte alone rules most keys out
        if (key.length > last && key[last] == prefix[last] && startsWith(key, prefix)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean startsWith(byte[] bytes, byte[] prefix) {
    return bytes.length >= prefix.length
        && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
  }

  /** One subscription; its monitor guards {@code closed} and {@code running}. */
  private final class Registration implements KvStore.Subscription {
    final byte[] prefix;
    final Runnable listener;

    /** Threads inside a call of the listener now, once per call (a thread may nest). */
    private final List<Thread> running = new ArrayList<>(1);

    private boolean closed;

    Registration(byte[] prefix, Runnable listener) {
      this.prefix = prefix;
      this.listener = listener;
    }

    void call() {
      Thread me = Thread.currentThread();
      synchronized (this) {
        if (closed) {
          return;
        }
        running.add(me);
      }
      try {
        listener.run();
      } catch (RuntimeException e) {
        log.log(Level.WARNING, "change listener failed; ignored", e);
      } finally {
        synchronized (this) {
          running.remove(me);
          if (closed) {
            notifyAll();
          }
        }
      }
    }

    @Override
    public void close() {
      registrations.remove(this);
      Thread me = Thread.currentThread();
      synchronized (this) {
        closed = true;
        while (runningElsewhere(me)) {
          try {
            wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }

    private boolean runningElsewhere(Thread me) {
      for (Thread t : running) {
        if (t != me) {
          return true;
        }
      }
      return false;
    }
  }
}
