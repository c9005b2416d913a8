package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.naming.NameNotFoundException;
import javax.naming.NamingException;
import org.junit.jupiter.api.Test;

/**
 * A queue's own thread factory ({@code @QueueHandler(threadFactory)}, {@code
 * kvmq.queue.NAME.thread-factory}): how the setting is read and checked, how a bad JNDI name is
 * reported, and the pool made from it.
 */
class QueueThreadsTest {

  public record Fetch(String url) {}

  @QueueHandler(value = "fetches", concurrency = 3, threadFactory = "java:app/concurrent/virtual")
  static class VirtualHandler implements JobHandler<Fetch> {
    @Override
    public void handle(Job<Fetch> job, JobContext<Fetch> context) {}
  }

  @QueueHandler(value = "plain")
  static class PlainHandler implements JobHandler<Fetch> {
    @Override
    public void handle(Job<Fetch> job, JobContext<Fetch> context) {}
  }

  static QueueHandler annotation(Class<?> c) {
    return c.getAnnotation(QueueHandler.class);
  }

  // ---- the setting

  @Test
  void aQueueWithoutTheSettingRunsOnKvmqsPool() {
    assertThat(
            QueueSettings.of("plain", annotation(PlainHandler.class), config(Map.of())).threads())
        .isEmpty();
    assertThat(QueueSettings.DEFAULTS.threads()).isEmpty();
    assertThat(
            QueueSettings.of(
                    "plain",
                    annotation(PlainHandler.class),
                    config(Map.of("kvmq.queue.plain.thread-factory", "  ")))
                .threads())
        .as("an empty value is no thread factory")
        .isEmpty();
  }

  @Test
  void theAnnotationNamesTheFactoryAndConfigurationOverridesIt() {
    QueueSettings annotated =
        QueueSettings.of("fetches", annotation(VirtualHandler.class), config(Map.of()));
    assertThat(annotated.threads())
        .contains(new QueueThreads("java:app/concurrent/virtual", "@QueueHandler(threadFactory)"));

    QueueSettings configured =
        QueueSettings.of(
            "fetches",
            annotation(VirtualHandler.class),
            config(Map.of("kvmq.queue.fetches.thread-factory", " concurrent/admins-factory ")));
    assertThat(configured.threads())
        .contains(
            new QueueThreads("concurrent/admins-factory", "kvmq.queue.fetches.thread-factory"));

    QueueSettings off =
        QueueSettings.of(
            "fetches",
            annotation(VirtualHandler.class),
            config(Map.of("kvmq.queue.fetches.thread-factory", "")));
    assertThat(off.threads()).as("configuration can turn it off").isEmpty();
  }

  @Test
  void aNameWithWhiteSpaceIsABadSettingNamedByItsSource() {
    assertThatThrownBy(
            () ->
                QueueSettings.of(
                    "fetches",
                    annotation(VirtualHandler.class),
                    config(Map.of("kvmq.queue.fetches.thread-factory", "java:app/my factory"))))
        .isInstanceOf(QueueSettings.BadSettings.class)
        .hasMessage(
            "kvmq.queue.fetches.thread-factory \"java:app/my factory\" is not a JNDI name (it has"
                + " white space or control characters)");
  }

  @Test
  void theExtensionAcceptsTheKeyAndReportsABadValueAsKvmq004() {
    KvmqExtension extension = new KvmqExtension();
    KvmqConfig config =
        new KvmqConfig(
            key ->
                Optional.ofNullable(
                    Map.of(
                            "kvmq.queue.fetches.thread-factory",
                            "java:app/concurrent/virtual",
                            "kvmq.queue.other.thread-factory",
                            "a\tb")
                        .get(key)),
            () ->
                java.util.Set.of(
                    "kvmq.queue.fetches.thread-factory", "kvmq.queue.other.thread-factory"));
    List<String> problems = extension.check(List.of(VirtualHandler.class), null, config);
    assertThat(problems).isEmpty();
    assertThat(extension.checkQueueKeys(config))
        .singleElement()
        .asString()
        .startsWith("KVMQ-004: queue \"other\" has bad settings: kvmq.queue.other.thread-factory")
        .contains("is not a JNDI name");
  }

  // ---- the look-up

  @Test
  void aNameBoundToNothingFailsNamingTheQueueTheSettingAndTheName() {
    QueueThreads threads = new QueueThreads("java:app/nope", "@QueueHandler(threadFactory)");
    assertThatThrownBy(
            () ->
                threads.lookUp(
                    "fetches",
                    name -> {
                      throw new NameNotFoundException(name);
                    }))
        .isInstanceOfSatisfying(
            NotBound.class, e -> assertThat(e.check()).isEqualTo("@QueueHandler(threadFactory)"))
        .hasMessage(
            "queue \"fetches\": @QueueHandler(threadFactory) \"java:app/nope\" is not bound in"
                + " JNDI");

    NamingException wrapped = new NamingException("lookup failed");
    wrapped.setRootCause(new NameNotFoundException("nope"));
    assertThatThrownBy(
            () ->
                threads.lookUp(
                    "fetches",
                    name -> {
                      throw wrapped;
                    }))
        .isInstanceOf(NotBound.class)
        .hasMessageEndingWith("\"java:app/nope\" is not bound in JNDI");
  }

  @Test
  void aServerResourceThatIsNotBoundFailsAtOnce() {
    QueueThreads threads =
        new QueueThreads("concurrent/virtual", "kvmq.queue.fetches.thread-factory");
    assertThatThrownBy(
            () ->
                threads.lookUp(
                    "fetches",
                    name -> {
                      throw new NameNotFoundException(name);
                    }))
        .as("only the application's own java: names are bound late; a server's are there first")
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage(
            "queue \"fetches\": kvmq.queue.fetches.thread-factory \"concurrent/virtual\" is not"
                + " bound in JNDI");
  }

  @Test
  void aLookUpThatFailsOtherwiseIsNotTakenForANameNotBoundYet() {
    QueueThreads threads = new QueueThreads("java:app/f", "@QueueHandler(threadFactory)");
    assertThatThrownBy(
            () ->
                threads.lookUp(
                    "q",
                    name -> {
                      throw new NamingException("the naming service is down");
                    }))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "queue \"q\": @QueueHandler(threadFactory) \"java:app/f\" can't be looked up: ")
        .hasMessageContaining("the naming service is down");
  }

  @Test
  void anObjectThatIsNotAManagedThreadFactoryIsRefused() {
    QueueThreads threads =
        new QueueThreads("java:comp/DefaultManagedExecutorService", "kvmq.queue.q.thread-factory");
    assertThatThrownBy(() -> threads.lookUp("q", name -> "an executor"))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage(
            "queue \"q\": kvmq.queue.q.thread-factory"
                + " \"java:comp/DefaultManagedExecutorService\" is a java.lang.String, not a"
                + " jakarta.enterprise.concurrent.ManagedThreadFactory");
  }

  @Test
  void aManagedThreadFactoryIsReturned() throws Exception {
    ManagedThreadFactory factory = new CountingFactory();
    QueueThreads threads = new QueueThreads("java:app/f", "@QueueHandler(threadFactory)");
    List<String> asked = new CopyOnWriteArrayList<>();
    assertThat(
            threads.lookUp(
                "q",
                name -> {
                  asked.add(name);
                  return factory;
                }))
        .isSameAs(factory);
    assertThat(asked).containsExactly("java:app/f");
  }

  // ---- the pool

  @Test
  void thePoolHasAThreadPerHandlerAndOneMoreAndReportsOnceWhatThreadsItGot() throws Exception {
    CountingFactory factory = new CountingFactory();
    List<String> lines = new CopyOnWriteArrayList<>();
    QueueThreads threads = new QueueThreads("java:app/f", "@QueueHandler(threadFactory)");
    ScheduledThreadPoolExecutor pool = threads.pool("fetches", factory, 3, lines::add);
    try {
      assertThat(pool.getCorePoolSize()).isEqualTo(4);
      assertThat(factory.made.get()).as("one thread at once, for the report").isEqualTo(1);
      for (int i = 0; i < 8; i++) {
        pool.execute(() -> {});
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(factory.made.get()).isBetween(2, 4);
      assertThat(lines)
          .singleElement()
          .asString()
          .startsWith("kvmq: queue \"fetches\" runs its handlers on up to 4 platform threads (")
          .endsWith(" of java:app/f (@QueueHandler(threadFactory))");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theReportSaysWhetherTheThreadsAreVirtual() {
    QueueThreads threads = new QueueThreads("java:app/v", "kvmq.queue.q.thread-factory");
    assertThat(threads.describe("q", 11, Optional.of(true)))
        .isEqualTo(
            "kvmq: queue \"q\" runs its handlers on up to 11 virtual threads of java:app/v"
                + " (kvmq.queue.q.thread-factory)");
    assertThat(threads.describe("q", 11, Optional.of(false)))
        .contains("11 platform threads (the factory made no virtual thread; see docs/jakarta.md)");
    assertThat(threads.describe("q", 11, Optional.empty()))
        .contains("11 platform threads (this JVM has no virtual threads)");
  }

  @Test
  void isVirtualIsAskedWhereTheJvmHasIt() {
    Optional<Boolean> v = QueueThreads.isVirtual(Thread.currentThread());
    if (Runtime.version().feature() >= 21) {
      assertThat(v).contains(false);
    } else {
      assertThat(v).isEmpty();
    }
  }

  private static KvmqConfig config(Map<String, String> values) {
    return new KvmqConfig(key -> Optional.ofNullable(values.get(key)));
  }

  /** A managed thread factory that makes plain platform threads and counts them. */
  static final class CountingFactory implements ManagedThreadFactory {
    final AtomicInteger made = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      made.incrementAndGet();
      Thread t = new Thread(r, "counting-" + made.get());
      t.setDaemon(true);
      return t;
    }

    @Override
    public ForkJoinWorkerThread newThread(ForkJoinPool pool) {
      throw new UnsupportedOperationException();
    }
  }
}
