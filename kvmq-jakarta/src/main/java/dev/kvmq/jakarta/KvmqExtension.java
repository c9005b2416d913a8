package dev.kvmq.jakarta;

import dev.kvmq.JobHandler;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.BeforeBeanDiscovery;
import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.ProcessManagedBean;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.json.bind.annotation.JsonbCreator;
import java.lang.reflect.Constructor;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The CDI portable extension that finds {@link QueueHandler} beans (only types with that
 * annotation, via {@link WithAnnotations}), checks them, and hands them to the runtime.
 *
 * <p>Every problem is reported at deployment, all at once, each with a code:
 *
 * <ul>
 *   <li>KVMQ-001: two handlers for one queue;
 *   <li>KVMQ-002: a handler that does not implement {@code JobHandler<S>} with a concrete S;
 *   <li>KVMQ-003: a payload type JSON-B can't handle (not public, abstract, an inner class, or no
 *       usable constructor);
 *   <li>KVMQ-004: bad settings (name, concurrency, prefetch, durations, renew not shorter than
 *       lease, the default job options), each named by its source (the annotation's attribute or
 *       the configuration key); a {@code kvmq.queue.*} key that names no setting;
 *   <li>KVMQ-005: a handler class that is not a CDI bean (add a scope such as
 *       {@code @ApplicationScoped});
 *   <li>KVMQ-006: the EclipseStore data directory was not chosen and kvmq's default lies under the
 *       JVM's temporary directory, so the jobs would not survive a restart (set {@code
 *       kvmq.data-dir}; Payara Micro's {@code --rootdir} also lasts, but with {@code --deploy} it
 *       deploys the previous copy of the WAR first at every start).
 *   <li>KVMQ-010: a bad {@link QueueSchedule} or {@code kvmq.queue.NAME.schedule.*} key: neither or
 *       both of cron and every, a cron expression the kernel can't read, an unknown zone, a bad
 *       duration, anchor or policy, a key that names no property of a schedule;
 *   <li>KVMQ-011: a schedule's state JSON that does not decode to the handler's state type;
 *   <li>KVMQ-012: two schedules of one name on one handler;
 *   <li>KVMQ-013: a schedule on a queue without a handler: {@link QueueSchedule} on a class that is
 *       not a {@link QueueHandler}, or {@code kvmq.queue.NAME.schedule.*} keys of a queue that has
 *       no handler in this application;
 *   <li>KVMQ-017: a bad timeout ({@link QueueHandler#timeout()}, {@code kvmq.queue.NAME.timeout}):
 *       not an ISO-8601 duration, under 1 ms or over the longest;
 *   <li>KVMQ-018: a non-retryable exception type that can't be used ({@code
 *       kvmq.queue.NAME.non-retryable}): a class the application can't load, or not a {@code
 *       Throwable}, or an empty entry;
 *   <li>KVMQ-019: a bad retention ({@link QueueHandler#keepCompleted()}, {@code keepCancelled},
 *       {@code keepDead}, {@code kvmq.queue.NAME.keep-completed}, {@code .keep-cancelled}, {@code
 *       .keep-dead}): not {@code none}, {@code unlimited}, an ISO-8601 age, a count, or an age and
 *       a count;
 *   <li>KVMQ-020: a bad group limit ({@code kvmq.queue.NAME.group-limit} or {@code
 *       kvmq.queue.NAME.group.GROUP.limit}): not a whole number from 0 or {@code unlimited}, a
 *       group name the kernel refuses, a group key that names no property;
 *   <li>KVMQ-021: a bad rate limit ({@code kvmq.queue.NAME.rate-limit}, {@code
 *       kvmq.queue.NAME.group-rate-limit} or {@code kvmq.queue.NAME.group.GROUP.rate-limit}): not
 *       {@code STARTS/PERIOD} with 1 to 100,000 starts and an ISO-8601 period of 1 ms to 100 years.
 * </ul>
 */
public class KvmqExtension implements Extension {

  private static final System.Logger LOG = System.getLogger(KvmqExtension.class.getName());

  private final List<Class<?>> found = new ArrayList<>();
  private final List<HandlerSpec> handlers = new ArrayList<>();
  private final Set<String> handlerQueues = new HashSet<>(); // checked, good or not

  /** Made by the container through {@code META-INF/services}. */
  public KvmqExtension() {}

  void addOptionalBeans(@Observes BeforeBeanDiscovery bbd, BeanManager beans) {
    if (KvmqMetrics.available()) {
      bbd.addAnnotatedType(KvmqMetrics.class, KvmqMetrics.class.getName()); // @Dependent
    }
    try {
      Class.forName(
          "org.eclipse.microprofile.health.HealthCheck",
          false,
          KvmqExtension.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return; // no MicroProfile Health on this server: no readiness check
    }
    Health.register(bbd);
  }

  /** Touches MicroProfile Health classes only when they are there. */
  private static final class Health {
    static void register(BeforeBeanDiscovery bbd) {
      bbd.addAnnotatedType(KvmqReadinessCheck.class, KvmqReadinessCheck.class.getName())
          .add(jakarta.enterprise.context.ApplicationScoped.Literal.INSTANCE)
          .add(org.eclipse.microprofile.health.Readiness.Literal.INSTANCE);
    }
  }

  /**
   * The beans of the handler classes, recorded as the container makes them: the extension's own
   * BeanManager (kvmq-jakarta's jar in WEB-INF/lib) can't look up the application's classes on
   * every server (Payara can't), so lookups by class are not used.
   */
  private final Map<Class<?>, Bean<?>> handlerBeans = new ConcurrentHashMap<>();

  <T> void bean(@Observes ProcessManagedBean<T> pb) {
    Class<?> c = pb.getAnnotatedBeanClass().getJavaClass();
    if (c.isAnnotationPresent(QueueHandler.class)) {
      handlerBeans.put(c, pb.getBean());
    }
  }

  /** The runtime, once started; the readiness check reads it (it can't inject it everywhere). */
  private volatile KvmqRuntime runtime;

  void runtime(KvmqRuntime r) {
    runtime = r;
  }

  KvmqRuntime runtime() {
    return runtime;
  }

  Bean<?> handlerBean(Class<?> c) {
    return handlerBeans.get(c);
  }

  <T> void find(
      @Observes
          @WithAnnotations({QueueHandler.class, QueueSchedule.class, QueueSchedule.List.class})
          ProcessAnnotatedType<T> pat) {
    AnnotatedType<T> type = pat.getAnnotatedType();
    if (type.isAnnotationPresent(QueueHandler.class)) {
      found.add(type.getJavaClass());
    } else if (type.getJavaClass().getAnnotationsByType(QueueSchedule.class).length > 0) {
      scheduledElsewhere.add(type.getJavaClass());
    }
  }

  void validate(@Observes AfterDeploymentValidation adv, BeanManager beans) {
    KvmqConfig config = KvmqConfig.load();
    List<String> problems = check(found, beans, config);
    problems.addAll(checkSchedules(config));
    config.temporaryDataDir(System::getProperty).ifPresent(problems::add);
    problems.addAll(checkQueueKeys(config));
    problems.addAll(FlowLimits.check(config));
    try {
      config.restEnabled();
    } catch (IllegalArgumentException e) {
      problems.add("KVMQ-004: " + e.getMessage());
    }
    for (String key : unknownKeys(config)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "configuration key "
              + key
              + " names no kvmq setting and is ignored; the settings are "
              + String.join(", ", SETTINGS)
              + " and kvmq.queue.NAME.*");
    }
    for (String p : problems) {
      adv.addDeploymentProblem(new DeploymentException(p));
    }
  }

  /**
   * The handlers found and checked at deployment.
   *
   * @return an unmodifiable list
   */
  List<HandlerSpec> handlers() {
    return Collections.unmodifiableList(handlers);
  }

  /**
   * Checks the handler classes; fills {@link #handlers} with the good ones; returns every problem.
   */
  List<String> check(List<Class<?>> classes, BeanManager beans, KvmqConfig config) {
    List<String> problems = new ArrayList<>();
    Map<String, Class<?>> byQueue = new HashMap<>();
    for (Class<?> c : classes) {
      QueueHandler a = c.getAnnotation(QueueHandler.class);
      String queue = a.value();
      handlerQueues.add(queue);
      int before = problems.size();
      Class<?> other = byQueue.putIfAbsent(queue, c);
      if (other != null) {
        problems.add(
            "KVMQ-001: queue \""
                + queue
                + "\" has two handlers, "
                + other.getName()
                + " and "
                + c.getName()
                + "; a queue has one handler per application");
      }
      if (queue.isEmpty() || queue.length() > 200) {
        problems.add(
            "KVMQ-004: handler "
                + c.getName()
                + " names a queue of "
                + queue.length()
                + " characters; a queue name has 1 to 200");
      }
      Type payload = payloadType(c);
      if (payload == null) {
        problems.add(
            "KVMQ-002: "
                + c.getName()
                + " is annotated @QueueHandler but does not implement "
                + "JobHandler<S> with a concrete state type S");
      } else {
        String why = jsonbProblem(payload);
        if (why != null) {
          problems.add(
              "KVMQ-003: the state type "
                  + payload.getTypeName()
                  + " of handler "
                  + c.getName()
                  + " can't be read by JSON-B: "
                  + why);
        }
      }
      QueueSettings settings = null;
      try {
        settings = QueueSettings.of(queue, a, config);
      } catch (QueueSettings.BadSettings e) {
        report(e, "handler " + c.getName() + " of queue \"" + queue + "\"", problems);
      } catch (IllegalArgumentException e) {
        problems.add(
            "KVMQ-004: handler "
                + c.getName()
                + " of queue \""
                + queue
                + "\" has bad settings: "
                + e.getMessage());
      }
      if (beans != null
          && !handlerBeans.containsKey(c)
          && beans.getBeans(c, Any.Literal.INSTANCE).isEmpty()) {
        problems.add(
            "KVMQ-005: handler "
                + c.getName()
                + " is not a CDI bean; give it a scope such as "
                + "@ApplicationScoped");
      }
      if (problems.size() == before) {
        @SuppressWarnings("unchecked")
        Class<? extends JobHandler<?>> handlerClass = (Class<? extends JobHandler<?>>) c;
        handlers.add(new HandlerSpec(queue, handlerClass, payload, settings));
      }
    }
    return problems;
  }

  /**
   * Checks the {@code kvmq.queue.*} keys that are set: each must end with a known setting (a
   * misspelt {@code retires} would otherwise be ignored), and the settings of a queue without a
   * handler here must be good (a handler's are checked with it). Call after {@link #check}.
   *
   * @return KVMQ-004 problems
   */
  /** The settings outside {@code kvmq.queue.*} (docs/jakarta.md, "Configuration"). */
  static final List<String> SETTINGS =
      List.of(
          "kvmq.store",
          "kvmq.postgres.datasource",
          "kvmq.postgres.jta-datasource",
          "kvmq.postgres.schema",
          "kvmq.postgres.vacuum-every",
          "kvmq.data-dir",
          "kvmq.durability",
          "kvmq.rest.enabled",
          "kvmq.shutdown-timeout",
          "kvmq.executor");

  /**
   * The keys where kvmq's settings live, outside {@code kvmq.queue.*}, that name no setting: a
   * {@code kvmq.X} key, or one under {@code kvmq.postgres.} or {@code kvmq.rest.} (a misspelt
   * {@code kvmq.postgres.jta-datasorce} would otherwise leave its setting off without a word).
   * Other namespaces under {@code kvmq.} (an application's {@code kvmq.demo.journal}) are left
   * alone. Warned of, not refused.
   *
   * @return the keys, in order
   */
  List<String> unknownKeys(KvmqConfig config) {
    List<String> unknown = new ArrayList<>();
    for (String key : config.keysStartingWith("kvmq.")) {
      String rest = key.substring("kvmq.".length());
      boolean ours =
          !rest.contains(".") || rest.startsWith("postgres.") || rest.startsWith("rest.");
      if (ours && !SETTINGS.contains(key)) {
        unknown.add(key);
      }
    }
    return unknown;
  }

  List<String> checkQueueKeys(KvmqConfig config) {
    List<String> problems = new ArrayList<>();
    Set<String> queues = new TreeSet<>();
    for (String key : config.keysStartingWith("kvmq.queue.")) {
      String rest = key.substring("kvmq.queue.".length());
      if (rest.contains(FlowLimits.GROUP_INFIX)) {
        continue; // a group's key: FlowLimits.check
      }
      String setting =
          QueueSettings.KEYS.stream().filter(k -> rest.endsWith("." + k)).findFirst().orElse(null);
      if (setting == null && rest.contains(ScheduleDeclarations.INFIX)) {
        continue; // a schedule's key: checkSchedules
      }
      if (setting == null) {
        problems.add(
            "KVMQ-004: configuration key "
                + key
                + " names no setting of a queue; they are "
                + "kvmq.queue.NAME."
                + String.join(", .", QueueSettings.KEYS));
      } else {
        queues.add(rest.substring(0, rest.length() - setting.length() - 1));
      }
    }
    for (String queue : queues) {
      if (!handlerQueues.contains(queue)) {
        try {
          QueueSettings.of(queue, null, config);
        } catch (QueueSettings.BadSettings e) {
          report(e, "queue \"" + queue + "\"", problems);
        } catch (IllegalArgumentException e) {
          problems.add("KVMQ-004: queue \"" + queue + "\" has bad settings: " + e.getMessage());
        }
      }
    }
    return problems;
  }

  /**
   * Adds the problems of bad settings: one KVMQ-004 line for the worker's and the default job
   * options', one line per problem with a code of its own (KVMQ-017 to KVMQ-019).
   */
  private static void report(QueueSettings.BadSettings e, String who, List<String> problems) {
    if (!e.problems.isEmpty()) {
      problems.add("KVMQ-004: " + who + " has bad settings: " + String.join("; ", e.problems));
    }
    for (QueueControl.Coded c : e.coded) {
      problems.add(c.code() + ": " + who + ": " + c.text());
    }
  }

  /**
   * The settings of the queue of this name: its handler's here, else from configuration only (a
   * queue this application pushes to but does not handle).
   *
   * @throws IllegalArgumentException if its configuration is bad
   */
  QueueSettings settings(String queue, KvmqConfig config) {
    for (HandlerSpec h : handlers) {
      if (h.queue().equals(queue)) {
        return h.settings();
      }
    }
    return QueueSettings.of(queue, null, config);
  }

  /**
   * True if this application has a handler for the queue of this name.
   *
   * @param queue the queue's name
   * @return whether a worker runs for it here
   */
  boolean handles(String queue) {
    return handlers.stream().anyMatch(h -> h.queue().equals(queue));
  }

  // ---- recurring schedules (QueueSchedule, kvmq.queue.NAME.schedule.*)

  /** Classes with {@link QueueSchedule} but without {@link QueueHandler}. */
  final List<Class<?>> scheduledElsewhere = new ArrayList<>();

  /** The checked schedules of each handler's queue, by queue. */
  private final Map<String, ScheduleDeclarations.Declared> schedules = new ConcurrentHashMap<>();

  /**
   * Checks the schedules of the good handlers ({@link #check} first) and the schedule keys of the
   * configuration; keeps the good ones for {@link #schedules()}.
   *
   * @return KVMQ-010 to KVMQ-013 problems
   */
  List<String> checkSchedules(KvmqConfig config) {
    List<String> problems = new ArrayList<>();
    for (Class<?> c : scheduledElsewhere) {
      for (QueueSchedule s : c.getAnnotationsByType(QueueSchedule.class)) {
        problems.add(
            "KVMQ-013: "
                + c.getName()
                + " declares schedule \""
                + s.name()
                + "\" but is not a @QueueHandler; a schedule goes on the handler of its queue");
      }
    }
    boolean declares =
        handlers.stream()
                .anyMatch(
                    h ->
                        h.beanClass().isAnnotationPresent(QueueSchedule.class)
                            || h.beanClass().isAnnotationPresent(QueueSchedule.List.class))
            || config.keysStartingWith("kvmq.queue.").stream()
                .anyMatch(k -> k.contains(ScheduleDeclarations.INFIX));
    if (!declares) {
      return problems;
    }
    jakarta.json.bind.Jsonb strict = jakarta.json.bind.JsonbBuilder.create(JsonbCodec.config());
    jakarta.json.bind.Jsonb lenient = jakarta.json.bind.JsonbBuilder.create();
    try {
      for (HandlerSpec h : handlers) {
        ScheduleDeclarations.Declared d =
            ScheduleDeclarations.read(
                h.queue(),
                h.beanClass(),
                h.payloadType(),
                h.settings().ignoreUnknownProperties() ? lenient : strict,
                h.settings().jobDefaults(),
                config,
                problems);
        schedules.put(h.queue(), d);
      }
    } finally {
      close(strict);
      close(lenient);
    }
    for (String key : config.keysStartingWith("kvmq.queue.")) {
      String rest = key.substring("kvmq.queue.".length());
      int at = rest.indexOf(ScheduleDeclarations.INFIX);
      if (at < 0 || QueueSettings.KEYS.stream().anyMatch(k -> rest.endsWith("." + k))) {
        continue;
      }
      boolean ours =
          handlerQueues.stream().anyMatch(q -> rest.startsWith(q + ScheduleDeclarations.INFIX));
      if (!ours) {
        problems.add(
            "KVMQ-013: configuration key "
                + key
                + " declares a schedule of queue \""
                + rest.substring(0, at)
                + "\", which has no @QueueHandler in this application; a schedule is declared"
                + " with its queue's handler");
      }
    }
    return problems;
  }

  private static void close(jakarta.json.bind.Jsonb jsonb) {
    try {
      jsonb.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // nothing to keep: JSON-B holds no resource that outlives the deployment check
    }
  }

  /**
   * The checked schedules of each queue this application handles.
   *
   * @return by queue; a queue whose handler declares none has an empty declaration
   */
  Map<String, ScheduleDeclarations.Declared> schedules() {
    return Collections.unmodifiableMap(schedules);
  }

  /** The S of {@code JobHandler<S>} as {@code c} implements it, or null if not concrete. */
  static Type payloadType(Class<?> c) {
    Type t = resolve(c, new HashMap<>());
    return t != null && isConcrete(t) ? t : null;
  }

  /**
   * Finds JobHandler's argument in {@code type}'s hierarchy, substituting type variables as it
   * goes.
   */
  private static Type resolve(Type type, Map<TypeVariable<?>, Type> bindings) {
    Class<?> raw;
    if (type instanceof ParameterizedType p) {
      raw = (Class<?>) p.getRawType();
      TypeVariable<?>[] vars = raw.getTypeParameters();
      Type[] args = p.getActualTypeArguments();
      Map<TypeVariable<?>, Type> inner = new HashMap<>();
      for (int i = 0; i < vars.length; i++) {
        inner.put(vars[i], substitute(args[i], bindings));
      }
      bindings = inner;
    } else if (type instanceof Class<?> k) {
      raw = k;
    } else {
      return null;
    }
    if (raw == JobHandler.class) {
      return bindings.get(JobHandler.class.getTypeParameters()[0]);
    }
    List<Type> supers = new ArrayList<>(List.of(raw.getGenericInterfaces()));
    if (raw.getGenericSuperclass() != null) {
      supers.add(raw.getGenericSuperclass());
    }
    for (Type s : supers) {
      Type found = resolve(s, bindings);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  private static Type substitute(Type t, Map<TypeVariable<?>, Type> bindings) {
    return t instanceof TypeVariable<?> v && bindings.containsKey(v) ? bindings.get(v) : t;
  }

  private static boolean isConcrete(Type t) {
    if (t instanceof Class<?>) {
      return true;
    }
    if (t instanceof ParameterizedType p) {
      for (Type a : p.getActualTypeArguments()) {
        if (!isConcrete(a)) {
          return false;
        }
      }
      return true;
    }
    if (t instanceof GenericArrayType g) {
      return isConcrete(g.getGenericComponentType());
    }
    return !(t instanceof TypeVariable<?> || t instanceof WildcardType);
  }

  /** Why JSON-B can't make instances of {@code t}, or null if it can. */
  static String jsonbProblem(Type t) {
    Class<?> raw =
        t instanceof ParameterizedType p
            ? (Class<?>) p.getRawType()
            : t instanceof Class<?> c ? c : Object[].class;
    if (raw.isPrimitive() || raw.isArray() || raw.getName().startsWith("java.")) {
      return null;
    }
    if (!Modifier.isPublic(raw.getModifiers())) {
      return "it is not public; JSON-B reads and writes public types only";
    }
    if (raw.isEnum() || raw.isRecord()) {
      return null;
    }
    if (Collection.class.isAssignableFrom(raw) || Map.class.isAssignableFrom(raw)) {
      return null;
    }
    if (raw.isInterface() || Modifier.isAbstract(raw.getModifiers())) {
      return "it is "
          + (raw.isInterface() ? "an interface" : "abstract")
          + "; use a concrete class or a record";
    }
    if (raw.getEnclosingClass() != null && !Modifier.isStatic(raw.getModifiers())) {
      return "it is an inner class; make it static or a top-level class";
    }
    for (Constructor<?> k : raw.getDeclaredConstructors()) {
      if (k.isAnnotationPresent(JsonbCreator.class)
          || (k.getParameterCount() == 0
              && (Modifier.isPublic(k.getModifiers()) || Modifier.isProtected(k.getModifiers())))) {
        return null;
      }
    }
    for (Method m : raw.getDeclaredMethods()) {
      if (m.isAnnotationPresent(JsonbCreator.class) && Modifier.isStatic(m.getModifiers())) {
        return null;
      }
    }
    return "it has no public or protected no-argument constructor and no @JsonbCreator";
  }
}
