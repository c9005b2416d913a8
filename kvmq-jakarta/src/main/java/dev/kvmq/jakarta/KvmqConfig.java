package dev.kvmq.jakarta;

import dev.kvmq.store.eclipsestore.Durability;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * kvmq's configuration. Keys are read from MicroProfile Config where the server has it (which
 * covers system properties, environment variables and {@code
 * META-INF/microprofile-config.properties}); otherwise from system properties, then environment
 * variables ({@code kvmq.data-dir} as {@code KVMQ_DATA_DIR}).
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>kvmq.store</td><td>eclipsestore</td><td>{@code eclipsestore}, {@code memory} or {@code postgres}</td></tr>
 *   <tr><td>kvmq.postgres.datasource</td><td>none</td><td>JNDI name of the DataSource, for {@code postgres}</td></tr>
 *   <tr><td>kvmq.postgres.jta-datasource</td><td>none</td><td>JNDI name of a transactional
 *       DataSource on the same database, for pushes inside JTA transactions (see {@link JobQueue})</td></tr>
 *   <tr><td>kvmq.postgres.schema</td><td>the connection's</td><td>schema of kvmq's tables</td></tr>
 *   <tr><td>kvmq.data-dir</td><td>see {@link #dataDir()}</td><td>the EclipseStore directory</td></tr>
 *   <tr><td>kvmq.durability</td><td>fsync</td><td>{@code fsync} or {@code process-crash-safe}</td></tr>
 *   <tr><td>kvmq.rest.enabled</td><td>true</td><td>serve the admin REST API where web.xml maps
 *       {@link KvmqRestApplication} ({@code false}: 404 there); nothing is served unmapped</td></tr>
 *   <tr><td>kvmq.shutdown-timeout</td><td>PT30S</td><td>how long undeploy waits for running handlers</td></tr>
 *   <tr><td>kvmq.executor</td><td>none: a pool of {@code java:comp/DefaultManagedThreadFactory}
 *       threads sized to the handlers</td><td>the JNDI name of a ManagedScheduledExecutorService
 *       to run the workers on instead</td></tr>
 *   <tr><td>kvmq.queue.NAME.concurrency, .prefetch, .lease, .renew-every, .poll-every</td><td>the handler's
 *       annotation</td><td>per-queue overrides of the worker's options</td></tr>
 *   <tr><td>kvmq.queue.NAME.priority, .retries, .retry-delay, .retry-multiplier, .retry-max-delay,
 *       .retry-jitter</td><td>the handler's annotation, else none</td><td>the queue's default job
 *       options (see {@link QueueSettings})</td></tr>
 *   <tr><td>kvmq.queue.NAME.transaction-push</td><td>{@code in-transaction} with
 *       kvmq.postgres.jta-datasource, else {@code after-commit}</td><td>how a push inside a JTA
 *       transaction is stored (see {@link JobQueue})</td></tr>
 *   <tr><td>kvmq.queue.NAME.ignore-unknown-properties</td><td>the handler's annotation, else
 *       false</td><td>whether the queue's JSON-B drops unknown properties</td></tr>
 *   <tr><td>kvmq.queue.NAME.thread-factory</td><td>the handler's annotation, else none</td><td>the
 *       JNDI name of a ManagedThreadFactory whose threads run the queue's worker (see {@link
 *       QueueThreads})</td></tr>
 *   <tr><td>kvmq.queue.NAME.schedule.SCHEDULE.cron, .every, .anchor, .zone, .state, .missed,
 *       .missed-limit, .overlap, .lateness, .enabled</td><td>the {@link QueueSchedule}'s</td>
 *       <td>a recurring schedule of the queue (see {@link ScheduleDeclarations})</td></tr>
 * </table>
 */
final class KvmqConfig {

  private final Function<String, Optional<String>> source;
  private final Supplier<Set<String>> names;

  KvmqConfig(Function<String, Optional<String>> source) {
    this(source, Set::of);
  }

  /**
   * A configuration whose keys can also be listed.
   *
   * @param source reads a key
   * @param names lists the keys that are set (environment variables, whose names can't be mapped
   *     back to keys, need not be listed)
   */
  KvmqConfig(Function<String, Optional<String>> source, Supplier<Set<String>> names) {
    this.source = source;
    this.names = names;
  }

  /** The server's MicroProfile Config if present, else system properties and the environment. */
  static KvmqConfig load() {
    Function<String, Optional<String>> fallback = KvmqConfig::systemOrEnv;
    try {
      Class.forName(
          "org.eclipse.microprofile.config.ConfigProvider",
          false,
          KvmqConfig.class.getClassLoader());
      Function<String, Optional<String>> mp = MicroProfile.source();
      Supplier<Set<String>> mpNames = MicroProfile.names();
      return new KvmqConfig(
          key -> mp.apply(key).or(() -> fallback.apply(key)),
          () -> {
            Set<String> all = new TreeSet<>(mpNames.get());
            all.addAll(System.getProperties().stringPropertyNames());
            return all;
          });
    } catch (ClassNotFoundException | LinkageError | IllegalStateException e) {
      return new KvmqConfig(
          fallback, () -> new TreeSet<>(System.getProperties().stringPropertyNames()));
    }
  }

  /**
   * The keys that are set and start with {@code prefix}: from MicroProfile Config and the system
   * properties (not from environment variables).
   *
   * @param prefix the start of the keys
   * @return the keys, sorted
   */
  Set<String> keysStartingWith(String prefix) {
    Set<String> found = new TreeSet<>();
    try {
      for (String k : names.get()) {
        if (k.startsWith(prefix)) {
          found.add(k);
        }
      }
    } catch (RuntimeException e) {
      return found; // a config source that can't list its names: nothing to check
    }
    return found;
  }

  static Optional<String> systemOrEnv(String key) {
    String v = System.getProperty(key);
    if (v == null) {
      v = System.getenv(key.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_"));
    }
    return Optional.ofNullable(v).map(String::trim).filter(s -> !s.isEmpty());
  }

  Optional<String> get(String key) {
    return source.apply(key);
  }

  String store() {
    return get("kvmq.store").orElse("eclipsestore").toLowerCase(Locale.ROOT);
  }

  /**
   * {@code kvmq.data-dir}, else {@code kvmq} under the server's instance directory: Payara and
   * GlassFish {@code ${com.sun.aas.instanceRoot}/kvmq}, WildFly {@code
   * ${jboss.server.data.dir}/kvmq}; else {@code kvmq-data} in the working directory. The extension
   * refuses a default under the temporary directory ({@link #temporaryDataDir}).
   */
  Path dataDir() {
    Optional<String> configured = get("kvmq.data-dir");
    if (configured.isPresent()) {
      return Path.of(configured.get());
    }
    return defaultDataDir(System::getProperty);
  }

  /** The data directory kvmq picks when {@code kvmq.data-dir} is not set. */
  static Path defaultDataDir(Function<String, String> systemProperties) {
    for (String root : new String[] {"com.sun.aas.instanceRoot", "jboss.server.data.dir"}) {
      String dir = systemProperties.apply(root);
      if (dir != null) {
        return Path.of(dir, "kvmq");
      }
    }
    return Path.of("kvmq-data").toAbsolutePath();
  }

  /**
   * Why the EclipseStore data directory is not durable, or empty if it is: the directory was not
   * chosen ({@code kvmq.data-dir} unset) and kvmq's default lies under the JVM's temporary
   * directory ({@code java.io.tmpdir}), as Payara Micro's instance directory does when it is
   * started without {@code --rootdir} (a new temporary directory at every start). Real paths are
   * compared (symbolic links resolved), also for a directory that does not exist yet. Only for the
   * {@code eclipsestore} store.
   *
   * @param systemProperties the JVM's system properties
   * @return the problem, with the fix, as a KVMQ-006 message
   */
  Optional<String> temporaryDataDir(Function<String, String> systemProperties) {
    if (!store().equals("eclipsestore") || get("kvmq.data-dir").isPresent()) {
      return Optional.empty();
    }
    Path dir = defaultDataDir(systemProperties);
    Optional<Path> realTmp = temporaryDirectoryHolding(dir, systemProperties);
    if (realTmp.isEmpty()) {
      return Optional.empty();
    }
    boolean payara = systemProperties.apply("com.sun.aas.instanceRoot") != null;
    return Optional.of(
        "KVMQ-006: kvmq's default data directory "
            + dir
            + " is under the temporary directory "
            + realTmp.get()
            + " (java.io.tmpdir), so the jobs would not survive a restart; set kvmq.data-dir to a "
            + "directory that lasts"
            + (payara
                ? " (Payara Micro's instance directory is a new temporary directory at every"
                    + " start without --rootdir DIR; don't combine --rootdir with --deploy, which"
                    + " then deploys the previous copy of the WAR first at every start: see"
                    + " kvmq's docs/getting-started.md)"
                : ""));
  }

  /**
   * A warning for a data directory chosen explicitly ({@code kvmq.data-dir}) under the JVM's
   * temporary directory: the user's choice, so not refused, but worth one line at start (a
   * temporary directory may be emptied at a reboot).
   *
   * @param systemProperties the JVM's system properties
   * @return the warning, or empty
   */
  Optional<String> chosenTemporaryDataDir(Function<String, String> systemProperties) {
    if (!store().equals("eclipsestore") || get("kvmq.data-dir").isEmpty()) {
      return Optional.empty();
    }
    Path dir = dataDir();
    return temporaryDirectoryHolding(dir, systemProperties)
        .map(
            tmp ->
                "kvmq: kvmq.data-dir "
                    + dir
                    + " is under the temporary directory "
                    + tmp
                    + " (java.io.tmpdir); jobs are lost if it is emptied");
  }

  /** The real path of java.io.tmpdir if {@code dir} lies under it. */
  private static Optional<Path> temporaryDirectoryHolding(
      Path dir, Function<String, String> systemProperties) {
    String tmp = systemProperties.apply("java.io.tmpdir");
    if (tmp == null || tmp.isBlank()) {
      return Optional.empty();
    }
    Path realTmp = realPath(Path.of(tmp));
    return realPath(dir).startsWith(realTmp) ? Optional.of(realTmp) : Optional.empty();
  }

  /** The real path of {@code p}: of its nearest existing ancestor, with the rest appended. */
  private static Path realPath(Path p) {
    Path abs = p.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return abs;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(abs));
    } catch (IOException e) {
      return abs;
    }
  }

  Durability durability() {
    String v = get("kvmq.durability").orElse("fsync").toLowerCase(Locale.ROOT);
    return switch (v) {
      case "fsync" -> Durability.FSYNC;
      case "process-crash-safe" -> Durability.PROCESS_CRASH_SAFE;
      default ->
          throw new IllegalArgumentException(
              "kvmq.durability is \"" + v + "\"; use fsync or process-crash-safe");
    };
  }

  /**
   * Whether the admin API answers where the application mapped it: {@code kvmq.rest.enabled}, true
   * unless set to false (case ignored).
   *
   * @throws IllegalArgumentException if the value is neither true nor false
   */
  boolean restEnabled() {
    String v = get("kvmq.rest.enabled").orElse("true").strip();
    if (v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException("kvmq.rest.enabled is \"" + v + "\"; use true or false");
  }

  /** Whether {@code kvmq.rest.enabled} is set to true, not just left at its default. */
  boolean restEnabledExplicitly() {
    return get("kvmq.rest.enabled").map(String::strip).orElse("").equalsIgnoreCase("true");
  }

  Duration shutdownTimeout() {
    return duration("kvmq.shutdown-timeout", "PT30S");
  }

  Duration duration(String key, String otherwise) {
    String v = get(key).orElse(otherwise);
    try {
      Duration d = Duration.parse(v);
      if (d.isNegative()) {
        throw new IllegalArgumentException(key + " must not be negative: " + v);
      }
      return d;
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          key + " is \"" + v + "\", not an ISO-8601 duration such as PT30S", e);
    }
  }

  /** Keeps MicroProfile Config classes out of reach unless the server has them. */
  private static final class MicroProfile {
    static Function<String, Optional<String>> source() {
      org.eclipse.microprofile.config.Config config =
          org.eclipse.microprofile.config.ConfigProvider.getConfig();
      return key -> config.getOptionalValue(key, String.class);
    }

    static Supplier<Set<String>> names() {
      org.eclipse.microprofile.config.Config config =
          org.eclipse.microprofile.config.ConfigProvider.getConfig();
      return () -> {
        Set<String> all = new TreeSet<>();
        config.getPropertyNames().forEach(all::add);
        return all;
      };
    }
  }
}
