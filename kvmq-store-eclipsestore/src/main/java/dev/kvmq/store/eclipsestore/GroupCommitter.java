package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.KvStoreException;
import dev.kvmq.store.SubscriberRegistry;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.eclipse.serializer.persistence.types.Storer;

/**
 * The group committer: the store's one committer thread takes every commit waiting at a moment,
 * applies them in arrival order to the {@link PageMap} (each with its own checks and versionstamp),
 * writes them with one EclipseStore commit and one flush, calls the change listeners, and then
 * releases all their callers. Between group commits it runs {@link Housekeeping} slices.
 *
 * <p><b>Locking.</b> The queue of waiting requests is guarded by its own monitor, as are {@code
 * closed} and {@code closeDone}; callers wait on their request's future, never on a lock the
 * committer holds. The committer applies and writes under the write lock of the store's read-write
 * lock (readers take its read lock), and calls listeners, then completes futures, after releasing
 * it. A write failure sets {@code failure} (volatile) under the write lock: from then on the heap
 * is ahead of the disk, and every call is refused.
 */
final class GroupCommitter {

  private final Path directory;
  private final ReentrantReadWriteLock lock;
  private final PageMap map;
  private final StoreRoot root;
  private final Storer storer;
  private final Housekeeping housekeeping;
  private final SubscriberRegistry subscribers;
  private final int maxBatch;

  /** Commits waiting for the committer; guarded by itself, as are the two flags below. */
  private final ArrayDeque<Request> queue = new ArrayDeque<>();

  private volatile boolean closed;
  private boolean closeDone;

  /** Set when a write failed after the heap was changed: the heap no longer matches the disk. */
  private volatile Throwable failure;

  private volatile Thread thread;
  private final String name;

  GroupCommitter(
      String name,
      Path directory,
      ReentrantReadWriteLock lock,
      PageMap map,
      StoreRoot root,
      Storer storer,
      Housekeeping housekeeping,
      SubscriberRegistry subscribers,
      int maxBatch) {
    this.name = name;
    this.directory = directory;
    this.lock = lock;
    this.map = map;
    this.root = root;
    this.storer = storer;
    this.housekeeping = housekeeping;
    this.subscribers = subscribers;
    this.maxBatch = maxBatch;
  }

  /**
   * Makes the committer thread and starts it.
   *
   * @param threads the builder's factory, or null for a daemon thread named after the directory
   * @throws IllegalStateException if the factory makes no thread
   */
  void start(ThreadFactory threads) {
    Thread t =
        threads != null
            ? threads.newThread(this::run)
            : daemonThread(this::run, "kvmq-eclipsestore-committer " + directory.getFileName());
    if (t == null) {
      throw new IllegalStateException(
          "the thread factory made no committer thread for " + directory);
    }
    thread = t;
    t.start();
  }

  private static Thread daemonThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Queues operations for the next group commit and waits for their results. */
  List<CommitResult> submit(List<AtomicOperation> ops) {
    refuseOnCommitterThread("commit");
    Request request = new Request(ops);
    synchronized (queue) {
      ensureUsable();
      queue.add(request);
      queue.notifyAll();
    }
    try {
      return request.done.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof KvStoreException k) {
        throw new KvStoreException(k.getMessage(), k);
      }
      if (cause instanceof IllegalStateException ise) {
        throw new IllegalStateException(ise.getMessage(), ise);
      }
      throw new KvStoreException("commit failed in " + name, cause);
    }
  }

  private void run() {
    List<Request> batch = new ArrayList<>();
    while (true) {
      synchronized (queue) {
        // while a housekeeping cycle is under way, an idle committer runs its slices
        while (queue.isEmpty() && !closed && !housekeeping.cycleRunning()) {
          try {
            queue.wait();
          } catch (InterruptedException e) {
            // only close() stops this thread, after the queue is empty
          }
        }
        if (queue.isEmpty() && closed) {
          return;
        }
        int ops = 0;
        while (!queue.isEmpty() && (ops == 0 || ops + queue.peek().ops.size() <= maxBatch)) {
          Request r = queue.poll();
          ops += r.ops.size();
          batch.add(r);
        }
      }
      try {
        if (!batch.isEmpty()) {
          commitBatch(batch);
        }
        housekeeping.slice(failure != null);
      } catch (Throwable t) {
        // commitBatch completes its requests; this is a last guard against a hang
        for (Request r : batch) {
          r.done.completeExceptionally(t);
        }
      }
      batch.clear();
    }
  }

  private void commitBatch(List<Request> batch) {
    List<AtomicOperation> applied = new ArrayList<>();
    List<List<CommitResult>> results = new ArrayList<>(batch.size());
    Throwable error = null;
    lock.writeLock().lock();
    try {
      if (failure != null) {
        error = brokenException();
      } else {
        map.startBatch();
        long vs = root.versionstamp;
        for (Request r : batch) {
          List<CommitResult> rs = new ArrayList<>(r.ops.size());
          for (AtomicOperation op : r.ops) {
            if (!map.checksHold(op)) {
              rs.add(CommitResult.checkFailed());
            } else if (op.isReadOnly()) {
              rs.add(CommitResult.committed(Math.max(1, vs)));
            } else {
              vs++;
              map.apply(op, vs);
              applied.add(op);
              rs.add(CommitResult.committed(vs));
            }
          }
          results.add(Collections.unmodifiableList(rs));
        }
        Set<Object> dirty = map.finishBatch();
        if (!dirty.isEmpty() || vs != root.versionstamp) {
          root.versionstamp = vs;
          try {
            for (Object o : dirty) {
              storer.store(o);
            }
            storer.store(root);
            storer.commit();
          } catch (RuntimeException | Error e) {
            // The heap is ahead of the disk now; refuse everything until reopened.
            failure = e;
            try {
              storer.clear();
            } catch (RuntimeException ignored) {
              // the store is broken either way
            }
            error = brokenException();
          }
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
    if (error == null) {
      // before the commits return: a caller that saw its commit return knows this JVM's
      // listeners have heard of it (a worker never starts a job whose cancel has returned)
      subscribers.notifyCommitted(applied);
    }
    for (int i = 0; i < batch.size(); i++) {
      if (error != null) {
        batch.get(i).done.completeExceptionally(error);
      } else {
        batch.get(i).done.complete(results.get(i));
      }
    }
  }

  /** A change listener that commits or closes would wait for itself: refuse instead. */
  void refuseOnCommitterThread(String what) {
    if (Thread.currentThread() == thread) {
      throw new IllegalStateException(
          "a change listener must not "
              + what
              + " the store: it runs on the store's committer thread; schedule the work elsewhere");
    }
  }

  /**
   * Refuses calls on a closed or broken store.
   *
   * @throws IllegalStateException if closed
   * @throws KvStoreException if a write failed
   */
  void ensureUsable() {
    if (closed) {
      throw new IllegalStateException("the store is closed: " + directory);
    }
    if (failure != null) {
      throw brokenException();
    }
  }

  private KvStoreException brokenException() {
    return new KvStoreException(
        "a write to "
            + directory
            + " failed; the store refuses further calls: close it and open it again",
        failure);
  }

  /**
   * Refuses new commits and wakes the committer, which finishes the submitted ones and ends.
   *
   * @return false if it was closed before
   */
  boolean stopAccepting() {
    refuseOnCommitterThread("close");
    synchronized (queue) {
      if (closeDone) {
        return false;
      }
      closeDone = true;
      closed = true;
      queue.notifyAll();
    }
    return true;
  }

  /**
   * Waits for the committer thread to end, through interrupts.
   *
   * @return true if the calling thread was interrupted meanwhile (its status is left clear)
   */
  boolean awaitEnd() {
    boolean interrupted = false;
    while (thread.isAlive()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    return interrupted;
  }

  private static final class Request {
    final List<AtomicOperation> ops;
    final CompletableFuture<List<CommitResult>> done = new CompletableFuture<>();

    Request(List<AtomicOperation> ops) {
      this.ops = ops;
    }
  }
}
