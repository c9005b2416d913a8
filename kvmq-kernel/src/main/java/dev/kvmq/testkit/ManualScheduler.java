package dev.kvmq.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ScheduledExecutorService} with no threads: tasks run on the test's own thread when it
 * calls {@link #runUntilIdle()} or {@link #advance(Duration)}, in time order on a {@link
 * FakeClock}. Give it to a worker and every step of the worker (claims, handler calls, lease
 * renewals, completions, events) happens inside those calls, deterministically, without sleeping.
 * In the spirit of db-scheduler's {@code ManualScheduler}.
 *
 * <pre>{@code
 * FakeClock clock = new FakeClock();
 * ManualScheduler scheduler = new ManualScheduler(clock);
 * Queue<String> queue = Queue.builder(new InMemoryKvStore(), "mail", Codecs.utf8()).clock(clock).build();
 * List<String> sent = new ArrayList<>();
 * queue.worker((job, ctx) -> sent.add(job.state()), WorkerOptions.defaults(), scheduler).start();
 *
 * queue.push("later", JobOptions.defaults().delay(Duration.ofMinutes(5)));
 * scheduler.runUntilIdle();                 // nothing is due yet
 * assertEquals(List.of(), sent);
 * scheduler.advance(Duration.ofMinutes(5)); // time passes; the job runs
 * assertEquals(List.of("later"), sent);
 * }</pre>
 *
 * <p>One test thread drives it; other threads (a store's own threads, say) may submit tasks at any
 * time, and tasks run without holding the scheduler's lock. Tasks may submit more tasks; those run
 * in the same call if due.
 *
 * <p>A run is bounded, so that a handler that fails or repeats forever fails the test instead of
 * hanging it: one call of {@link #runUntilIdle()} or {@link #advance(Duration)} (with the calls
 * nested in its tasks) runs at most {@link #DEFAULT_MAX_TASKS} tasks, and its tasks may move the
 * clock at most {@link #DEFAULT_MAX_SPAN} past where the call meant to end (now for {@code
 * runUntilIdle}, now plus the duration for {@code advance}). {@link #ManualScheduler(FakeClock,
 * int, Duration)} sets other limits. A run past either limit throws {@link RunawayException}, whose
 * message says what ran last and what is still scheduled.
 */
public final class ManualScheduler extends AbstractExecutorService
    implements ScheduledExecutorService {

  /** The most tasks one run (a call and the calls nested in its tasks) runs by default: 100,000. */
  public static final int DEFAULT_MAX_TASKS = 100_000;

  /** How far a run's tasks may move the clock past the run's end by default: 30 days. */
  public static final Duration DEFAULT_MAX_SPAN = Duration.ofDays(30);

  private static final int RECENT = 5;

  private final FakeClock clock;
  private final int maxTasks;
  private final Duration maxSpan;
  private final PriorityQueue<Task<?>> tasks = new PriorityQueue<>();
  private long sequence;
  private boolean shutdown;
  // the run under way; touched by the driving thread only
  private int depth;
  private long ranInRun;
  private Instant runStart;
  private Instant runLimit;
  private final Deque<String> recent = new ArrayDeque<>();

  /**
   * Makes a scheduler on {@code clock} with the default limits ({@link #DEFAULT_MAX_TASKS}, {@link
   * #DEFAULT_MAX_SPAN}).
   *
   * @param clock the time tasks are due by; {@link #advance} moves it
   * @throws NullPointerException if {@code clock} is null
   */
  public ManualScheduler(FakeClock clock) {
    this(clock, DEFAULT_MAX_TASKS, DEFAULT_MAX_SPAN);
  }

  /**
   * Makes a scheduler on {@code clock} whose runs stop with a {@link RunawayException} after {@code
   * maxTasks} tasks, or once their tasks move the clock more than {@code maxSpan} past the run's
   * end.
   *
   * @param clock the time tasks are due by; {@link #advance} moves it
   * @param maxTasks the most tasks one run may run, 1 or more
   * @param maxSpan how far one run's tasks may move the clock past its end, zero or more
   * @throws NullPointerException if {@code clock} or {@code maxSpan} is null
   * @throws IllegalArgumentException if {@code maxTasks} is less than 1 or {@code maxSpan} is
   *     negative
   */
  public ManualScheduler(FakeClock clock, int maxTasks, Duration maxSpan) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.maxSpan = Objects.requireNonNull(maxSpan, "maxSpan");
    if (maxTasks < 1) {
      throw new IllegalArgumentException("maxTasks must be at least 1: " + maxTasks);
    }
    if (maxSpan.isNegative()) {
      throw new IllegalArgumentException("maxSpan must not be negative: " + maxSpan);
    }
    this.maxTasks = maxTasks;
  }

  /**
   * A run went past its limits: a task that keeps scheduling work due at once (a handler that fails
   * or repeats forever with no delay), or one that keeps moving the clock.
   */
  public static final class RunawayException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    RunawayException(String message) {
      super(message);
    }
  }

  /**
   * Returns the clock.
   *
   * @return the clock this scheduler moves
   */
  public FakeClock clock() {
    return clock;
  }

  /**
   * Runs every task that is due now, including tasks they add that are due now, until none is left.
   *
   * <p>May be called from inside a task, for example by a handler that simulates work that takes
   * time with {@code scheduler.advance(...)}: the tasks due meanwhile (lease renewals, other jobs)
   * run nested in that call.
   *
   * @return how many tasks ran
   * @throws RunawayException if the run went past the scheduler's limits (see the class comment);
   *     the tasks that ran stay done, the rest stay scheduled
   */
  public int runUntilIdle() {
    begin(clock.instant());
    try {
      return drain();
    } finally {
      depth--;
    }
  }

  private int drain() {
    int ran = 0;
    Task<?> t;
    while ((t = nextDue(clock.instant())) != null) {
      t.run(); // outside the lock: a store thread may submit work meanwhile
      ran++;
      ranInRun++;
      if (recent.size() == RECENT) {
        recent.removeFirst();
      }
      recent.addLast(t.toString());
      checkLimits();
    }
    return ran;
  }

  /** Starts a run meant to end at {@code end}, or joins the run under way (a nested call). */
  private void begin(Instant end) {
    if (depth++ == 0) {
      ranInRun = 0;
      runStart = clock.instant();
      runLimit = end.plus(maxSpan);
      recent.clear();
    }
  }

  private void checkLimits() {
    boolean tooMany = ranInRun >= maxTasks;
    boolean tooFar = clock.instant().isAfter(runLimit);
    if (!tooMany && !tooFar) {
      return;
    }
    List<Task<?>> pending;
    synchronized (this) {
      pending = new ArrayList<>(tasks);
    }
    pending.sort(null);
    StringBuilder b = new StringBuilder("ManualScheduler stopped a runaway run: ");
    b.append(
        tooMany
            ? "it ran " + ranInRun + " tasks (limit " + maxTasks + ")"
            : "its tasks moved the clock to "
                + clock.instant()
                + ", past the limit "
                + runLimit
                + " ("
                + maxSpan
                + " after the run's end)");
    b.append(", from ")
        .append(runStart)
        .append(" to ")
        .append(clock.instant())
        .append(". Last run: ")
        .append(String.join("; ", recent))
        .append(". Still scheduled: ")
        .append(pending.size())
        .append(" task(s)");
    for (int i = 0; i < Math.min(RECENT, pending.size()); i++) {
      Task<?> p = pending.get(i);
      b.append(i == 0 ? ", next: " : "; ").append(p).append(" due ").append(p.due);
    }
    if (tooMany && clock.instant().isAfter(runStart)) {
      b.append(
          ". The clock moved during the run, so these may be a worker's periodic tasks over a long"
              + " advance, not a runaway: an idle worker with the default options runs about"
              + " 100,000 tasks in a simulated day (a lease renewal every 2 s, a poll and its pass"
              + " every 3 s). Advance in smaller steps (each call has its own limit), give the"
              + " worker longer intervals (WorkerOptions.lease, pollInterval), or make the"
              + " scheduler with new ManualScheduler(clock, maxTasks, maxSpan)");
    } else {
      b.append(
          ". A handler that fails or repeats forever with no delay keeps a worker busy at one"
              + " instant; if the test needs a longer run, make the scheduler with new"
              + " ManualScheduler(clock, maxTasks, maxSpan)");
    }
    throw new RunawayException(b.toString());
  }

  /**
   * Moves the clock forward by {@code duration}, stopping at each task's due time to run what is
   * due then (so a lease renewal due in the middle runs in the middle), and runs everything due at
   * the end.
   *
   * @param duration how far, zero or more
   * @return how many tasks ran
   * @throws NullPointerException if {@code duration} is null
   * @throws IllegalArgumentException if {@code duration} is negative
   * @throws RunawayException if the run went past the scheduler's limits (see the class comment);
   *     the tasks that ran stay done, the rest stay scheduled
   */
  public int advance(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.isNegative()) {
      throw new IllegalArgumentException("time moves forward only: " + duration);
    }
    Instant end = clock.instant().plus(duration);
    begin(end);
    try {
      return advanceTo(end);
    } finally {
      depth--;
    }
  }

  private int advanceTo(Instant end) {
    int ran = drain();
    while (true) {
      Task<?> next;
      synchronized (this) {
        next = tasks.peek();
      }
      if (next == null || next.due.isAfter(end)) {
        break;
      }
      if (next.due.isAfter(clock.instant())) {
        clock.set(next.due);
      }
      ran += drain();
    }
    if (end.isAfter(clock.instant())) {
      clock.set(end);
    }
    return ran + drain();
  }

  /**
   * Returns how many tasks wait (due or not).
   *
   * @return the number of pending tasks
   */
  public synchronized int pendingTasks() {
    return tasks.size();
  }

  private synchronized Task<?> nextDue(Instant now) {
    Task<?> t = tasks.peek();
    if (t == null || t.due.isAfter(now)) {
      return null;
    }
    return tasks.poll();
  }

  private synchronized <V> Task<V> add(Task<V> t) {
    if (shutdown) {
      throw new RejectedExecutionException("the scheduler is shut down");
    }
    tasks.add(t);
    return t;
  }

  @Override
  public void execute(Runnable command) {
    Objects.requireNonNull(command, "command");
    add(new Task<>(command, null, clock.instant(), 0));
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    Objects.requireNonNull(command, "command");
    return add(new Task<>(command, null, dueIn(delay, unit), 0));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    Objects.requireNonNull(callable, "callable");
    return add(new Task<>(null, callable, dueIn(delay, unit), 0));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return repeating(command, initialDelay, period, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return repeating(command, initialDelay, delay, unit);
  }

  private ScheduledFuture<?> repeating(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    Objects.requireNonNull(command, "command");
    if (period <= 0) {
      throw new IllegalArgumentException("period must be positive: " + period);
    }
    return add(new Task<>(command, null, dueIn(initialDelay, unit), unit.toNanos(period)));
  }

  private Instant dueIn(long delay, TimeUnit unit) {
    return clock.instant().plusNanos(Math.max(0, unit.toNanos(delay)));
  }

  @Override
  public synchronized void shutdown() {
    shutdown = true;
  }

  @Override
  public synchronized List<Runnable> shutdownNow() {
    shutdown = true;
    List<Runnable> left = new ArrayList<>(tasks);
    tasks.clear();
    return left;
  }

  @Override
  public synchronized boolean isShutdown() {
    return shutdown;
  }

  @Override
  public synchronized boolean isTerminated() {
    return shutdown && tasks.isEmpty();
  }

  /**
   * Returns at once: nothing runs unless the test thread drives it.
   *
   * @param timeout ignored
   * @param unit ignored
   * @return whether the scheduler is terminated
   */
  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return isTerminated();
  }

  private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
    private final long seq = sequence++;
    private final long periodNanos;
    private final Object source;
    private Instant due;

    Task(Runnable runnable, Callable<V> callable, Instant due, long periodNanos) {
      super(callable != null ? callable : java.util.concurrent.Executors.callable(runnable, null));
      this.due = due;
      this.periodNanos = periodNanos;
      this.source = callable != null ? callable : runnable;
    }

    @Override
    public String toString() {
      return source.toString();
    }

    @Override
    public void run() {
      if (periodNanos == 0) {
        super.run();
      } else if (runAndReset()) {
        synchronized (ManualScheduler.this) {
          if (!shutdown) {
            due = due.plusNanos(periodNanos);
            tasks.add(this);
          }
        }
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      synchronized (ManualScheduler.this) {
        tasks.remove(this);
      }
      return cancelled;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(Duration.between(clock.instant(), due));
    }

    @Override
    public int compareTo(Delayed other) {
      Task<?> o = (Task<?>) other;
      int c = due.compareTo(o.due);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }
}
