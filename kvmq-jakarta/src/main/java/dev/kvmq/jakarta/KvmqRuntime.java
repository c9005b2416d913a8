package dev.kvmq.jakarta;

import dev.kvmq.JobEvent;
import dev.kvmq.JobHandler;
import dev.kvmq.JobTracing;
import dev.kvmq.Queue;
import dev.kvmq.Worker;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.KvStore;
import dev.kvmq.store.eclipsestore.EclipseStoreKvStore;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.context.control.RequestContextController;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import jakarta.json.JsonValue;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/**
 * kvmq inside one application: opens the configured store, runs one worker per {@link QueueHandler}
 * once the application has started, on threads of the container's {@code
 * java:comp/DefaultManagedThreadFactory} (so every handler call has the application's CDI, JNDI and
 * security context), or on the {@link ManagedScheduledExecutorService} that {@code kvmq.executor}
 * names, fires the CDI events, and on undeploy or shutdown stops the workers (telling running
 * handlers, waiting up to {@code kvmq.shutdown-timeout}) and closes the store.
 *
 * <p>Applications do not call it; they inject {@link JobQueue}s and observe events.
 */
@ApplicationScoped
public class KvmqRuntime {

  private static final System.Logger LOG = System.getLogger(KvmqRuntime.class.getName());

  /** How long an undeploy waits at least for the observers of a queue's last events. */
  static final Duration LAST_EVENTS = Duration.ofSeconds(2);

  @Inject KvmqExtension extension;

  @Inject BeanManager beans;

  @Inject Event<Object> events;

  // Looked up when the store opens: @Resource on this bean in WEB-INF/lib fails on Payara.
  private ManagedThreadFactory threads;
  // What the workers run on: by default a pool of threads from the container's
  // ManagedThreadFactory, sized to the handlers, because Payara Micro's default
  // ManagedScheduledExecutorService runs one task at a time (a handler would hold up every
  // other handler and its own lease renewals); or the ManagedScheduledExecutorService that
  // kvmq.executor names.
  private ScheduledExecutorService executor;
  private ScheduledThreadPoolExecutor ownPool; // the default pool, which kvmq shuts down
  // The pools of queues that name a thread factory of their own (QueueThreads), by queue.
  private final Map<String, ScheduledThreadPoolExecutor> queuePools = new ConcurrentHashMap<>();

  private final Map<String, QueueEntry> queues = new ConcurrentHashMap<>();
  // Queues of the store that nothing here opens, as the admin API reads them (unopenedQueues).
  private final Map<String, AdminQueue<?>> unopened = new ConcurrentHashMap<>();
  private final Map<String, QueueActivity> activity = new ConcurrentHashMap<>();
  // Each queue's CDI events, fired in order on a thread of their own (EventLane), by queue;
  // guarded by itself, with lanesClosed: no lane (no thread) is made once undeploy closed them.
  private final Map<String, EventLane> lanes = new HashMap<>();
  private boolean lanesClosed;
  private volatile Instance<RequestContextController> requestContexts;
  // MicroProfile Metrics (Payara), else the OpenTelemetry meter (WildFly with MicroProfile
  // Telemetry), else null
  private volatile QueueMetrics metrics;
  // the server's OpenTelemetry (KvmqTelemetry) where it gives the application one
  private JobTracing tracing = JobTracing.none();
  private final List<Worker<?>> workers = new ArrayList<>();
  private KvmqConfig config;
  private KvStore store;
  private Jsonb jsonb; // refuses unknown properties (JsonbCodec.config())
  private Jsonb lenientJsonb; // for queues that opted out
  private final Set<String> warnedUnhandled = ConcurrentHashMap.newKeySet();
  private TransactionSynchronizationRegistry transactions;
  // How pushes join a JTA transaction on the PostgreSQL store, or null (after-commit only).
  private InTransactionPush inTransaction;
  private boolean started;
  private boolean closed;
  // The admin API's open event streams: ended when the application stops, so that a client
  // (the dashboard) reconnects to the next deployment instead of waiting on a dead stream.
  private final Set<AutoCloseable> streams = ConcurrentHashMap.newKeySet();

  /**
   * A queue and what the runtime keeps beside it: the codec the admin API reads input with, the
   * state type, and the queue's settings.
   */
  private record QueueEntry(AdminQueue<?> admin, Type type, QueueSettings settings) {

    Queue<?> queue() {
      return admin.queue();
    }
  }

  /** Made by CDI. */
  public KvmqRuntime() {}

  void onStart(@Observes @Initialized(ApplicationScoped.class) Object event) {
    try {
      startWorkers();
    } catch (NotBound e) {
      // Payara binds a DataSource that the application defines itself (web.xml <data-source>,
      // @DataSourceDefinition) only after CDI has started, and so a queue's thread factory
      // (@ManagedThreadFactoryDefinition): start once they are there.
      LOG.log(
          System.Logger.Level.INFO,
          "kvmq: " + e.getMessage() + " yet; starting the workers when it is");
      retryStart(System.nanoTime() + DATASOURCE_WAIT.toNanos());
    }
  }

  /** How long kvmq waits for an application-defined DataSource to be bound. */
  private static final Duration DATASOURCE_WAIT = Duration.ofSeconds(60);

  private synchronized void retryStart(long deadline) {
    if (closed || executor == null) {
      return;
    }
    executor.schedule(
        () -> {
          try {
            startWorkers();
            LOG.log(System.Logger.Level.INFO, "kvmq: the names are bound now; workers started");
          } catch (NotBound e) {
            if (System.nanoTime() - deadline < 0) {
              retryStart(deadline);
            } else {
              LOG.log(
                  System.Logger.Level.ERROR,
                  "kvmq: "
                      + e.getMessage()
                      + " after "
                      + DATASOURCE_WAIT
                      + "; no worker runs. Check "
                      + e.check(),
                  e);
            }
          } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "kvmq: the workers could not start", e);
          }
        },
        200,
        TimeUnit.MILLISECONDS);
  }

  /** The configured DataSource's JNDI name is not bound (yet). */
  private static final class DataSourceNotBound extends NotBound {
    private static final long serialVersionUID = 1L;

    DataSourceNotBound(String message, Throwable cause) {
      super(message, "kvmq.postgres.datasource", cause);
    }
  }

  /** Opens the store on first use. */
  synchronized KvStore store() {
    if (closed) {
      // a late call after undeploy must not reopen the store (and hold its directory)
      throw new IllegalStateException("kvmq has stopped: the application is being undeployed");
    }
    if (store == null) {
      if (executor == null) {
        try {
          threads =
              (ManagedThreadFactory)
                  new InitialContext().lookup("java:comp/DefaultManagedThreadFactory");
        } catch (NamingException e) {
          throw new IllegalStateException("kvmq: a container resource is missing", e);
        }
        config = KvmqConfig.load();
        executor = openExecutor();
      }
      if (jsonb == null) {
        jsonb = JsonbBuilder.create(JsonbCodec.config());
        lenientJsonb = JsonbBuilder.create();
      }
      transactions = lookupTransactions();
      store =
          switch (config.store()) {
            case "memory" -> new InMemoryKvStore();
            case "eclipsestore" -> {
              config
                  .chosenTemporaryDataDir(System::getProperty)
                  .ifPresent(w -> LOG.log(System.Logger.Level.WARNING, w));
              yield EclipseStoreKvStore.builder(config.dataDir())
                  .durability(config.durability())
                  .threadFactory(threads)
                  .open();
            }
            case "postgres" -> Postgres.open(config, threads);
            default ->
                throw new IllegalStateException(
                    "kvmq.store is \""
                        + config.store()
                        + "\"; use eclipsestore, memory or postgres");
          };
      inTransaction =
          config.store().equals("postgres") ? Postgres.inTransaction(config, store) : null;
      if (inTransaction == null && config.get(PostgresInTransaction.KEY).isPresent()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "kvmq: "
                + PostgresInTransaction.KEY
                + " is set, but kvmq.store is "
                + config.store()
                + ", which can't join a JTA transaction: pushes inside one are made after it"
                + " commits");
      }
      LOG.log(System.Logger.Level.INFO, "kvmq store: " + store);
      if (KvmqMetrics.available()) {
        metrics = KvmqMetrics.open(beans);
      }
      if (present(KvmqTelemetry.API)) {
        Telemetry.open(this);
      }
    }
    return store;
  }

  synchronized KvmqConfig config() {
    store();
    return config;
  }

  synchronized void startWorkers() {
    if (started || closed) {
      return;
    }
    extension.runtime(this);
    store();
    openQueuePools();
    started = true;
    defineSchedules();
    for (HandlerSpec spec : extension.handlers()) {
      startWorker(spec);
    }
    try {
      unhandledQueues(); // warns about queues left with jobs by a removed or renamed handler
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "kvmq: could not look for queues without a handler", e);
    }
  }

  // ---- recurring schedules: defined at startup by every node

  /**
   * Defines every declared schedule of the queues this application handles (idempotent: the same
   * definition writes nothing), deletes the ones turned off by {@code .enabled=false}, and warns
   * once about stored schedules that nothing here declares (kept: another version of the
   * application may still declare them; docs/scheduling.md).
   */
  private void defineSchedules() {
    for (HandlerSpec spec : extension.handlers()) {
      ScheduleDeclarations.Declared d = extension.schedules().get(spec.queue());
      try {
        defineSchedules(spec, d);
      } catch (RuntimeException e) {
        LOG.log(
            System.Logger.Level.ERROR,
            "kvmq: the schedules of queue \""
                + spec.queue()
                + "\" could not be defined; they fire as stored: "
                + e,
            e);
      }
    }
  }

  private void defineSchedules(HandlerSpec spec, ScheduleDeclarations.Declared d) {
    Queue<?> queue = queue(spec.queue(), spec.payloadType());
    for (ScheduleStartup.Line line : ScheduleStartup.define(queue, d, jsonb::toJson)) {
      if (line.error() != null) {
        LOG.log(line.level(), line.message(), line.error());
      } else {
        LOG.log(line.level(), line.message());
      }
    }
  }

  private <S> void startWorker(HandlerSpec spec) {
    @SuppressWarnings("unchecked")
    Queue<S> queue = (Queue<S>) queue(spec.queue(), spec.payloadType());
    Bean<?> bean = extension.handlerBean(spec.beanClass());
    @SuppressWarnings("unchecked")
    JobHandler<S> handler =
        (JobHandler<S>)
            (bean != null
                ? beans.getReference(bean, spec.beanClass(), beans.createCreationalContext(bean))
                : beans.createInstance().select(spec.beanClass()).get());
    Worker<S> worker =
        queue.worker(
            timed(spec.queue(), inRequestContext(handler)),
            spec.options(),
            queuePools.containsKey(spec.queue()) ? queuePools.get(spec.queue()) : executor);
    worker.addListener(this::fire);
    worker.start();
    workers.add(worker);
    LOG.log(
        System.Logger.Level.INFO,
        "kvmq worker started: queue "
            + spec.queue()
            + ", handler "
            + spec.beanClass().getName()
            + ", "
            + spec.options());
  }

  /** The kernel's tracing hook: nothing where there are neither metrics nor tracing. */
  private JobTracing observation() {
    if (metrics == null && tracing == JobTracing.none()) {
      return JobTracing.none();
    }
    return new JobObservation(tracing, () -> metrics);
  }

  /** True if the application sees the class of this name. Loads nothing. */
  private static boolean present(String className) {
    try {
      Class.forName(className, false, KvmqRuntime.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Touches OpenTelemetry classes only when they are there. */
  private static final class Telemetry {
    static void open(KvmqRuntime runtime) {
      KvmqTelemetry t = KvmqTelemetry.open(runtime.beans);
      if (t != null) {
        runtime.tracing = t;
        if (runtime.metrics == null) {
          runtime.metrics = t.meters();
        }
        LOG.log(
            System.Logger.Level.INFO,
            "kvmq: jobs are traced with the server's OpenTelemetry"
                + (runtime.metrics instanceof KvmqMetrics
                    ? "; metrics in MicroProfile Metrics"
                    : "; metrics on its meter"));
      }
    }
  }

  /**
   * Runs each handler call in a CDI request context of its own, activated for the call and
   * destroyed after it (its {@code @RequestScoped} beans with it), so that a {@code @RequestScoped}
   * handler, or a handler that calls a {@code @RequestScoped} bean, works, with fresh instances at
   * each attempt. The handler's reference is resolved once per worker: a {@code @RequestScoped}
   * handler is a client proxy, which finds its instance in the context active at the call. Where a
   * request context is already active on the thread, the call runs in that one and leaves it
   * active.
   */
  private <S> JobHandler<S> inRequestContext(JobHandler<S> handler) {
    Instance<RequestContextController> controllers = requestContexts();
    return (job, context) -> inRequestContext(controllers, () -> handler.handle(job, context));
  }

  /** Where each call gets its {@code @Dependent} controller; resolved once. */
  private Instance<RequestContextController> requestContexts() {
    Instance<RequestContextController> c = requestContexts;
    if (c == null) {
      c = beans.createInstance().select(RequestContextController.class);
      requestContexts = c; // racing threads resolve the same instance: either is right
    }
    return c;
  }

  /** Work that may throw, run in a request context. */
  @FunctionalInterface
  private interface Work {
    void run() throws Exception;
  }

  /**
   * Runs {@code work} in a CDI request context of its own, or in the one already active on this
   * thread (left active).
   */
  private static void inRequestContext(Instance<RequestContextController> controllers, Work work)
      throws Exception {
    RequestContextController controller = controllers.get(); // @Dependent: one per call
    boolean activated = false;
    try {
      activated = controller.activate();
      work.run();
    } finally {
      try {
        if (activated) {
          controller.deactivate();
        }
      } finally {
        controllers.destroy(controller);
      }
    }
  }

  /** Measures each handler call, whatever its outcome, for the activity and the metrics. */
  private <S> JobHandler<S> timed(String queue, JobHandler<S> handler) {
    QueueActivity a = activity(queue);
    return (job, context) -> {
      long start = System.nanoTime();
      try {
        handler.handle(job, context);
      } finally {
        long took = System.nanoTime() - start;
        a.handled(took);
        QueueMetrics m = metrics;
        if (m != null) {
          m.handled(queue, took);
        }
      }
    };
  }

  /**
   * Makes the pools of the queues that name a thread factory of their own, all or none: every name
   * that is not a {@link ManagedThreadFactory} in JNDI is reported, in one exception.
   *
   * @throws NotBound if names are not bound (yet: an application's own definition is bound after
   *     CDI has started), naming each queue, its setting and the name
   * @throws IllegalStateException if a name is bound to something else, or can't be looked up
   */
  private void openQueuePools() {
    List<String> problems = new ArrayList<>();
    List<String> unbound = new ArrayList<>();
    Map<HandlerSpec, ManagedThreadFactory> factories = new java.util.LinkedHashMap<>();
    for (HandlerSpec spec : extension.handlers()) {
      Optional<QueueThreads> threads = spec.settings().threads();
      if (threads.isEmpty() || queuePools.containsKey(spec.queue())) {
        continue;
      }
      try {
        factories.put(
            spec, threads.get().lookUp(spec.queue(), name -> new InitialContext().lookup(name)));
      } catch (NotBound e) {
        problems.add(e.getMessage());
        unbound.add(e.check());
      } catch (IllegalStateException e) {
        problems.add(e.getMessage());
      }
    }
    if (!problems.isEmpty()) {
      if (unbound.size() == problems.size()) {
        throw new NotBound(String.join("; ", problems), String.join(", ", unbound), null);
      }
      throw new IllegalStateException("kvmq: " + String.join("; ", problems));
    }
    factories.forEach(
        (spec, factory) ->
            queuePools.put(
                spec.queue(),
                spec.settings()
                    .threads()
                    .orElseThrow()
                    .pool(
                        spec.queue(),
                        factory,
                        spec.options().concurrency(),
                        line -> LOG.log(System.Logger.Level.INFO, line))));
  }

  private void closeQueuePools() {
    for (ScheduledThreadPoolExecutor pool : queuePools.values()) {
      pool.shutdownNow();
    }
    queuePools.clear();
  }

  private ScheduledExecutorService openExecutor() {
    Optional<String> name = config.get("kvmq.executor");
    if (name.isPresent()) {
      try {
        return (ManagedScheduledExecutorService) new InitialContext().lookup(name.get());
      } catch (NamingException | ClassCastException e) {
        throw new IllegalStateException(
            "kvmq.executor \""
                + name.get()
                + "\" is not a ManagedScheduledExecutorService in JNDI: "
                + e,
            e);
      }
    }
    // One thread per handler call that may run at once, and two for passes, renewals,
    // recording outcomes and the admin API's event streams (short tasks).
    int size =
        2
            + extension.handlers().stream()
                .filter(h -> h.settings().threads().isEmpty()) // those have pools of their own
                .mapToInt(h -> h.options().concurrency())
                .sum();
    ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(size, threads);
    pool.setRemoveOnCancelPolicy(true);
    ownPool = pool;
    LOG.log(
        System.Logger.Level.INFO,
        "kvmq: workers run on "
            + size
            + " threads of java:comp/DefaultManagedThreadFactory (set kvmq.executor to use a ManagedScheduledExecutorService)");
    return pool;
  }

  /**
   * The queue of this name with a JSON-B codec for {@code type}; one per name.
   *
   * @throws IllegalArgumentException if the queue's configuration is bad
   */
  synchronized Queue<?> queue(String name, Type type) {
    KvStore s = store();
    QueueEntry e = queues.get(name);
    if (e == null) {
      QueueSettings settings = extension.settings(name, config);
      Queue<Object> q = build(s, name, type, settings);
      JsonbCodec<Object> input =
          new JsonbCodec<>(settings.ignoreUnknownProperties() ? lenientJsonb : jsonb, type);
      activity(name);
      if (metrics != null) {
        metrics.register(q);
      }
      e = new QueueEntry(new AdminQueue<>(q, input), type, settings);
      queues.put(name, e);
      unopened.remove(name);
      if (!extension.handles(name)) {
        try {
          if (q.counts().queued() > 0) {
            warnUnhandled(name);
          }
        } catch (RuntimeException ex) {
          LOG.log(System.Logger.Level.DEBUG, "kvmq: could not count queue " + name, ex);
        }
      }
    }
    if (!e.type().equals(type)) {
      throw new IllegalStateException(
          "queue \"" + name + "\" holds " + e.type().getTypeName() + ", not " + type.getTypeName());
    }
    return e.queue();
  }

  <S> JobQueue<S> jobQueue(String name, Type type) {
    @SuppressWarnings("unchecked")
    Queue<S> q = (Queue<S>) queue(name, type);
    Runnable pushed = extension.handles(name) ? () -> {} : () -> warnUnhandled(name);
    TransactionPush mode = TransactionPush.of(name, config);
    return new JobQueue<>(
        q,
        transactions,
        queues.get(name).settings().jobDefaults(),
        pushed,
        mode == TransactionPush.AFTER_COMMIT
            ? null
            : inTransaction != null ? inTransaction : HeldInTransaction.INSTANCE);
  }

  /**
   * Logs once per queue that it has jobs but no handler in this application: they wait until a
   * handler for it runs, here or on another node of the same store.
   */
  private void warnUnhandled(String queue) {
    if (warnedUnhandled.add(queue)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "kvmq: queue \""
              + queue
              + "\" has jobs but no @QueueHandler for it "
              + "runs in this application; they wait until one runs (here, or on another server of"
              + " the same store). A handler removed or a queue renamed leaves its jobs so; the"
              + " admin API lists the queue (\"opened\": false), where its jobs can be read and"
              + " deleted");
    }
  }

  /**
   * The queues of the store that have waiting or delayed jobs but no handler in this application,
   * for the readiness check (a detail, not a failure: another node may handle them): those opened
   * here, and those nothing here opens (a handler removed, a queue renamed: {@link Queue#names}).
   * Logs each once.
   *
   * @return their names, sorted
   */
  List<String> unhandledQueues() {
    List<String> names = new ArrayList<>();
    for (String name : Queue.names(store())) {
      if (extension.handles(name)) {
        continue;
      }
      QueueEntry e = queues.get(name);
      // counting reads no state: a queue nothing here opens is counted without its type
      Queue<?> q =
          e != null ? e.queue() : Queue.builder(store(), name, dev.kvmq.Codecs.utf8()).build();
      if (q.counts().queued() > 0) {
        names.add(name);
        warnUnhandled(name);
      }
    }
    return names;
  }

  /**
   * A queue as this application configures it ({@code kvmq.queue.NAME.*}), with a JSON-B codec for
   * {@code type}. Stored jobs are read leniently: a job pushed before a field left its state type
   * still runs. Input (a push over the admin API) is read strictly unless the queue opted out.
   */
  private Queue<Object> build(KvStore s, String name, Type type, QueueSettings settings) {
    return FlowLimits.of(name, config)
        .applyTo(Queue.builder(s, name, new JsonbCodec<Object>(lenientJsonb, type)))
        .tracing(observation())
        .heldTimeout(TransactionPush.heldTimeout(name, config))
        .defaultTimeout(settings.control().timeout().orElse(null))
        .nonRetryable(settings.control().nonRetryable())
        .retention(settings.control().retention())
        .build();
  }

  /** The queues opened so far (by handlers and injections). */
  Collection<Queue<?>> queues() {
    return queues.values().stream().<Queue<?>>map(QueueEntry::queue).toList();
  }

  /**
   * The queues of the store that nothing in this application opens (a handler removed, a queue
   * renamed, a queue of another application on the same store), for the admin API: their jobs can
   * be read, retried, cancelled and deleted there. Their state type is not known here, so their
   * states are read as JSON values ({@link JsonValue}); a state that is not JSON is shown as stored
   * ({@code undecodedState}). The admin API pushes to none of them ({@link AdminQueue#opened()}).
   *
   * @return one per such queue, in name order
   */
  List<AdminQueue<?>> unopenedQueues() {
    List<AdminQueue<?>> found = new ArrayList<>();
    for (String name : Queue.names(store())) {
      if (!queues.containsKey(name)) {
        found.add(unopened(name));
      }
    }
    return found;
  }

  private synchronized AdminQueue<?> unopened(String name) {
    QueueEntry e = queues.get(name);
    if (e != null) {
      return e.admin(); // opened meanwhile
    }
    return unopened.computeIfAbsent(
        name,
        n -> {
          Queue<Object> q = build(store(), n, JsonValue.class, extension.settings(n, config));
          return new AdminQueue<>(q, new JsonbCodec<Object>(lenientJsonb, JsonValue.class), false);
        });
  }

  Optional<Queue<?>> queue(String name) {
    return Optional.ofNullable(queues.get(name)).map(QueueEntry::queue);
  }

  /**
   * The queue of this name with the JSON-B codec it was made with, for the admin REST API; for a
   * queue of the store that nothing here opens, the one {@link #unopenedQueues()} gives.
   */
  Optional<AdminQueue<?>> adminQueue(String name) {
    QueueEntry e = queues.get(name);
    if (e != null) {
      return Optional.of(e.admin());
    }
    AdminQueue<?> known = unopened.get(name);
    if (known != null) {
      return Optional.of(known);
    }
    return Queue.names(store()).contains(name) ? Optional.of(unopened(name)) : Optional.empty();
  }

  /** What this application's workers did on the queue of this name since it started. */
  QueueActivity activity(String name) {
    return activity.computeIfAbsent(name, QueueActivity::new);
  }

  ScheduledExecutorService executor() {
    return executor;
  }

  Jsonb jsonb() {
    store();
    return jsonb;
  }

  private void fire(JobEvent<?> e) {
    String queue = e.job().queue();
    count(e, activity(queue), metrics);
    Object event = cdiEvent(e);
    Event<Object> selected = events.select(new OnQueue.Literal(queue));
    Instance<RequestContextController> contexts = requestContexts();
    EventLane lane;
    synchronized (lanes) {
      if (lanesClosed) {
        LOG.log(
            System.Logger.Level.DEBUG,
            "kvmq: an event of queue " + queue + " came after its observers stopped; not fired");
        return;
      }
      lane = lanes.computeIfAbsent(queue, q -> new EventLane(q, threads));
    }
    // not on this thread, which commits the worker's outcomes: a slow observer would hold them up
    lane.fire(
        () -> {
          try {
            // as a handler call, in a request context of its own
            inRequestContext(contexts, () -> selected.fire(event));
          } catch (Exception x) {
            LOG.log(
                System.Logger.Level.ERROR,
                "a job listener of queue " + queue + " failed on job " + e.job().id() + "; ignored",
                x);
          } finally {
            // an @Observes observer that throws must not cost the @ObservesAsync observers
            // their event
            selected.fireAsync(event);
          }
        });
  }

  /**
   * Fires the events the workers reported, waiting until {@code deadline} (nanoTime) and at least
   * {@link #LAST_EVENTS} for each queue.
   */
  private void closeLanes(long deadline) {
    Map<String, EventLane> open;
    synchronized (lanes) {
      lanesClosed = true;
      open = new HashMap<>(lanes);
      lanes.clear();
    }
    for (Map.Entry<String, EventLane> lane : open.entrySet()) {
      try {
        Duration left = Duration.ofNanos(deadline - System.nanoTime());
        int dropped = lane.getValue().close(left.compareTo(LAST_EVENTS) > 0 ? left : LAST_EVENTS);
        if (dropped > 0) {
          LOG.log(
              System.Logger.Level.WARNING,
              "kvmq: "
                  + dropped
                  + " events of queue "
                  + lane.getKey()
                  + " were not fired: their observers were still busy when the application"
                  + " stopped");
        }
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Counts a worker's event in its queue's activity and, when there are metrics ({@code m} not
   * null), in them: a lease lost to an operator's cancel counts as cancelled, not as lease lost.
   */
  static void count(JobEvent<?> e, QueueActivity a, QueueMetrics m) {
    String queue = e.job().queue();
    if (e instanceof JobEvent.Completed<?>) {
      a.completed(System.currentTimeMillis());
      if (m != null) {
        m.completed(queue);
      }
    } else if (e instanceof JobEvent.Failed<?> f) {
      a.failed(f.dead(), System.currentTimeMillis());
      if (m != null) {
        m.failed(queue, f.dead());
      }
    } else if (e instanceof JobEvent.LeaseLost<?> l && l.cancelled()) {
      a.cancelled();
      if (m != null) {
        m.cancelled(queue);
      }
    } else if (e instanceof JobEvent.LeaseLost<?>) {
      a.leaseLost();
      if (m != null) {
        m.leaseLost(queue);
      }
    }
  }

  /**
   * The CDI event of a worker's event: {@link JobCompleted}, {@link JobFailed}, {@link JobSnoozed}
   * or {@link JobLeaseLost}.
   */
  static Object cdiEvent(JobEvent<?> e) {
    String queue = e.job().queue();
    if (e instanceof JobEvent.Completed<?> c) {
      return new JobCompleted(queue, c.job(), c.next().map(j -> j));
    } else if (e instanceof JobEvent.Failed<?> f) {
      return new JobFailed(queue, f.job(), f.error(), f.dead());
    } else if (e instanceof JobEvent.Snoozed<?> z) {
      return new JobSnoozed(queue, z.job(), z.runsAt());
    }
    JobEvent.LeaseLost<?> l = (JobEvent.LeaseLost<?>) e;
    return new JobLeaseLost(queue, l.job(), l.refusedOutcome().word(), l.cancelled());
  }

  /**
   * An event stream of the admin API opened: it is closed when the application stops.
   *
   * @return false if the application is stopping (the caller closes the stream itself)
   */
  boolean streamOpened(AutoCloseable stream) {
    streams.add(stream);
    if (closed) {
      streams.remove(stream);
      return false;
    }
    return true;
  }

  /** An event stream of the admin API ended. */
  void streamClosed(AutoCloseable stream) {
    streams.remove(stream);
  }

  @PreDestroy
  synchronized void shutdown() {
    closed = true;
    for (AutoCloseable stream : streams) {
      try {
        stream.close();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.DEBUG, "closing an event stream failed", e);
      }
    }
    streams.clear();
    Duration timeout = config != null ? config.shutdownTimeout() : Duration.ofSeconds(30);
    long deadline = System.nanoTime() + timeout.toNanos();
    List<CompletableFuture<Void>> stopping = new ArrayList<>();
    for (Worker<?> w : workers) {
      stopping.add(w.stop());
    }
    try {
      CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new))
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "kvmq: handlers still running after "
              + timeout
              + "; their jobs run again when their leases expire");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      LOG.log(System.Logger.Level.ERROR, "kvmq: stopping a worker failed", e);
    }
    workers.clear();
    closeLanes(deadline); // the workers reported their last events: fire them
    if (metrics != null) {
      metrics.close();
      metrics = null;
    }
    if (store != null) {
      store.close();
      store = null;
    }
    if (ownPool != null) {
      // After the store is closed: a handler cut off by the timeout records nothing, and its
      // job runs again after its lease, as with any crash.
      ownPool.shutdownNow();
      ownPool = null;
    }
    closeQueuePools();
    executor = null;
    for (Jsonb j : new Jsonb[] {jsonb, lenientJsonb}) {
      if (j != null) {
        try {
          j.close();
        } catch (Exception e) {
          LOG.log(System.Logger.Level.DEBUG, "closing JSON-B failed", e);
        }
      }
    }
    queues.clear();
    unopened.clear();
  }

  /** Touches the PostgreSQL store's classes only when it is configured. */
  static final class Postgres {
    static final String VACUUM_EVERY = "kvmq.postgres.vacuum-every";

    private Postgres() {}

    /**
     * The value of {@value #VACUUM_EVERY}: keys written between two vacuums of the store's table, 0
     * for none (see {@code PostgresKvStore.Builder.vacuumEvery}).
     *
     * @throws IllegalStateException naming the key if it is not 0 or a whole number of at least
     *     1,000
     */
    static int vacuumEvery(String value) {
      int min = dev.kvmq.store.postgres.PostgresKvStore.Builder.MIN_VACUUM_EVERY;
      String problem =
          VACUUM_EVERY
              + " must be 0 (no vacuums of kvmq's own) or a whole number of keys written of at"
              + " least "
              + min
              + ", not \""
              + value
              + "\"";
      int n;
      try {
        n = Integer.parseInt(value.strip());
      } catch (NumberFormatException e) {
        throw new IllegalStateException(problem, e);
      }
      if (n != 0 && n < min) {
        throw new IllegalStateException(problem);
      }
      return n;
    }

    static KvStore open(KvmqConfig config, java.util.concurrent.ThreadFactory threads) {
      String name =
          config
              .get("kvmq.postgres.datasource")
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "kvmq.store=postgres needs kvmq.postgres.datasource: the JNDI name of the application's DataSource"));
      javax.sql.DataSource ds;
      try {
        ds = (javax.sql.DataSource) new InitialContext().lookup(name);
      } catch (NamingException e) {
        if (e instanceof javax.naming.NameNotFoundException
            || e.getRootCause() instanceof javax.naming.NameNotFoundException) {
          throw new DataSourceNotBound(
              "kvmq.postgres.datasource \"" + name + "\" is not bound in JNDI", e);
        }
        throw new IllegalStateException(
            "kvmq.postgres.datasource \"" + name + "\" is not a DataSource in JNDI: " + e, e);
      } catch (ClassCastException e) {
        throw new IllegalStateException(
            "kvmq.postgres.datasource \"" + name + "\" is not a DataSource in JNDI: " + e, e);
      }
      try {
        Class.forName(
            "dev.kvmq.store.postgres.PostgresKvStore", false, KvmqRuntime.class.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(
            "kvmq.store=postgres needs dev.kvmq:kvmq-store-postgres in the application", e);
      }
      var b = dev.kvmq.store.postgres.PostgresKvStore.builder(ds);
      config.get("kvmq.postgres.schema").ifPresent(b::schema);
      config.get(VACUUM_EVERY).ifPresent(v -> b.vacuumEvery(vacuumEvery(v)));
      if (threads != null) {
        b.threadFactory(threads);
      }
      return b.build();
    }

    /** Pushes in JTA transactions if {@code kvmq.postgres.jta-datasource} is set, else null. */
    static InTransactionPush inTransaction(KvmqConfig config, KvStore store) {
      return config
          .get(PostgresInTransaction.KEY)
          .map(
              name ->
                  (InTransactionPush)
                      new PostgresInTransaction(
                          (dev.kvmq.store.postgres.PostgresKvStore) store, name))
          .orElse(null);
    }
  }

  private static TransactionSynchronizationRegistry lookupTransactions() {
    try {
      return (TransactionSynchronizationRegistry)
          new InitialContext().lookup("java:comp/TransactionSynchronizationRegistry");
    } catch (NamingException | RuntimeException e) {
      LOG.log(
          System.Logger.Level.INFO, "kvmq: no JTA transaction registry; pushes are never deferred");
      return null;
    }
  }
}
