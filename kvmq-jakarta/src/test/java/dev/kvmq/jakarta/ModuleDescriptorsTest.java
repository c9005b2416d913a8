package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.FindException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolutionException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kvmq's four module descriptors on a real module path, built from the jars Maven resolves for this
 * module (compile and provided scopes, listed by maven-dependency-plugin into {@code
 * target/module-path.txt}) and this module's classes. The other tests run on the class path, as a
 * WAR deploys kvmq; this one proves that the descriptors resolve, export exactly the API, need what
 * they say, and that EclipseStore stores and reads back kvmq's pages there.
 *
 * <p>{@code jakarta.jakartaee-api} and {@code jakarta.jakartaee-web-api} are left out of the module
 * path: each is one jar of every API with no module name, whose automatic module would split the
 * packages of the API jars they bring along (jakarta.cdi, jakarta.ws.rs, ...), which are the
 * modules a modular application uses.
 */
class ModuleDescriptorsTest {

  /** Every kvmq module and the packages it exports, to everyone: its API and nothing else. */
  private static final Map<String, Set<String>> API =
      Map.of(
          "dev.kvmq", Set.of("dev.kvmq", "dev.kvmq.store", "dev.kvmq.testkit"),
          "dev.kvmq.store.eclipsestore", Set.of("dev.kvmq.store.eclipsestore"),
          "dev.kvmq.store.postgres", Set.of("dev.kvmq.store.postgres"),
          "dev.kvmq.jakarta", Set.of("dev.kvmq.jakarta"));

  private static List<Path> modulePath;
  private static ModuleLayer layer;

  @BeforeAll
  static void buildTheLayer() throws IOException {
    String listFile = System.getProperty("kvmq.module-path.file");
    String self = System.getProperty("kvmq.module-path.self");
    assertThat(listFile)
        .as("surefire passes kvmq.module-path.file (kvmq-jakarta/pom.xml)")
        .isNotNull();
    assertThat(self).as("surefire passes kvmq.module-path.self (kvmq-jakarta/pom.xml)").isNotNull();
    String listed = Files.readString(Path.of(listFile), StandardCharsets.UTF_8).strip();
    modulePath = new ArrayList<>();
    modulePath.add(Path.of(self));
    Arrays.stream(listed.split(File.pathSeparator))
        .filter(s -> !s.isBlank())
        .map(Path::of)
        .filter(p -> !p.getFileName().toString().startsWith("jakarta.jakartaee-"))
        .forEach(modulePath::add);
    Configuration cf = resolve(p -> true, API.keySet());
    layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
  }

  private static Configuration resolve(Predicate<Path> keep, Set<String> roots) {
    ModuleFinder finder = ModuleFinder.of(modulePath.stream().filter(keep).toArray(Path[]::new));
    return ModuleLayer.boot().configuration().resolve(finder, ModuleFinder.of(), roots);
  }

  private static ModuleDescriptor descriptor(String module) {
    return layer.findModule(module).orElseThrow().getDescriptor();
  }

  @Test
  void everyKvmqModuleIsAnExplicitModuleInTheLayer() {
    for (String name : API.keySet()) {
      Optional<Module> module = layer.findModule(name);
      assertThat(module).as(name).isPresent();
      assertThat(module.get().getDescriptor().isAutomatic()).as(name + " is automatic").isFalse();
    }
  }

  @Test
  void eachModuleExportsExactlyItsApiToEveryone() {
    for (Map.Entry<String, Set<String>> api : API.entrySet()) {
      ModuleDescriptor d = descriptor(api.getKey());
      assertThat(d.exports())
          .as(api.getKey() + ": qualified exports")
          .allMatch(e -> !e.isQualified());
      assertThat(
              d.exports().stream()
                  .map(ModuleDescriptor.Exports::source)
                  .collect(Collectors.toSet()))
          .as(api.getKey() + " exports")
          .isEqualTo(api.getValue());
    }
  }

  @Test
  void onlyKvmqJakartaOpensItsPackageForCdiJaxRsAndJsonb() {
    assertThat(descriptor("dev.kvmq.jakarta").opens())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.source()).isEqualTo("dev.kvmq.jakarta");
              assertThat(o.isQualified()).isFalse();
            });
    assertThat(descriptor("dev.kvmq").opens()).isEmpty();
    assertThat(descriptor("dev.kvmq.store.postgres").opens()).isEmpty();
    // EclipseStore needs no open package: eclipseStoreStoresAndReadsBackKvmqPagesInTheLayer.
    assertThat(descriptor("dev.kvmq.store.eclipsestore").opens()).isEmpty();
  }

  @Test
  void theKernelReadsJavaBaseOnly() {
    assertThat(descriptor("dev.kvmq").requires().stream().map(ModuleDescriptor.Requires::name))
        .containsExactly("java.base");
  }

  @Test
  void kvmqJakartaResolvesWithoutItsOptionalModules() {
    // No PostgreSQL store or driver, no MicroProfile API: what a server without them has.
    Predicate<Path> withoutOptionals =
        p -> {
          String f = p.getFileName().toString();
          return !f.startsWith("microprofile-")
              && !f.startsWith("postgresql-")
              && !p.toString().contains("kvmq-store-postgres");
        };
    Configuration cf = resolve(withoutOptionals, Set.of("dev.kvmq.jakarta"));
    assertThat(cf.findModule("dev.kvmq.jakarta")).isPresent();
    assertThat(cf.findModule("dev.kvmq.store.postgres")).isEmpty();
    assertThat(cf.findModule("dev.kvmq.store.eclipsestore")).isPresent();
  }

  @Test
  void theStoresNeedWhatTheyRequire() {
    // Without EclipseStore, its store does not resolve: the descriptor says what it needs.
    Predicate<Path> withoutEclipseStore = p -> !p.toString().contains("org/eclipse/store/");
    assertThatThrownBy(() -> resolve(withoutEclipseStore, Set.of("dev.kvmq.store.eclipsestore")))
        .isInstanceOfAny(FindException.class, ResolutionException.class)
        .hasMessageContaining("org.eclipse.store");
    Predicate<Path> withoutDriver = p -> !p.getFileName().toString().startsWith("postgresql-");
    assertThatThrownBy(() -> resolve(withoutDriver, Set.of("dev.kvmq.store.postgres")))
        .isInstanceOfAny(FindException.class, ResolutionException.class)
        .hasMessageContaining("org.postgresql.jdbc");
  }

  @Test
  void theCdiExtensionIsAServiceOfTheModule() throws Exception {
    Class<?> extension =
        layer.findLoader("jakarta.cdi").loadClass("jakarta.enterprise.inject.spi.Extension");
    List<String> providers =
        ServiceLoader.load(layer, extension).stream()
            .map(p -> p.type().getName())
            .collect(Collectors.toList());
    assertThat(providers).containsExactly(KvmqExtension.class.getName());
  }

  @Test
  void thePostgresStoreLinksInTheLayer() throws Exception {
    Class<?> store =
        Class.forName(
            "dev.kvmq.store.postgres.PostgresKvStore",
            true,
            layer.findLoader("dev.kvmq.store.postgres"));
    assertThat(store.getModule().getName()).isEqualTo("dev.kvmq.store.postgres");
  }

  @Test
  void eclipseStoreStoresAndReadsBackKvmqPagesInTheLayer(@TempDir Path dir) throws Exception {
    ClassLoader loader = layer.findLoader("dev.kvmq.store.eclipsestore");
    Class<?> storeClass = loader.loadClass("dev.kvmq.store.eclipsestore.EclipseStoreKvStore");
    assertThat(storeClass.getModule().getName()).isEqualTo("dev.kvmq.store.eclipsestore");
    Class<?> keyClass = loader.loadClass("dev.kvmq.store.Key");
    Class<?> opClass = loader.loadClass("dev.kvmq.store.AtomicOperation");
    Object key =
        keyClass
            .getMethod("of", Object[].class)
            .invoke(null, (Object) new Object[] {"module-path", 1L});
    Object builder = opClass.getMethod("builder").invoke(null);
    builder
        .getClass()
        .getMethod("set", keyClass, byte[].class)
        .invoke(builder, key, new byte[] {4, 2});
    Object op = builder.getClass().getMethod("build").invoke(builder);

    Method open = storeClass.getMethod("open", Path.class);
    try (AutoCloseable store = (AutoCloseable) open.invoke(null, dir)) {
      storeClass.getMethod("commit", opClass).invoke(store, op);
    }
    // Reopened, EclipseStore rebuilds kvmq's pages and entries from the files.
    try (AutoCloseable store = (AutoCloseable) open.invoke(null, dir)) {
      Optional<?> entry = (Optional<?>) storeClass.getMethod("get", keyClass).invoke(store, key);
      assertThat(entry).isPresent();
      Object value = entry.get().getClass().getMethod("value").invoke(entry.get());
      assertThat((byte[]) value).containsExactly(4, 2);
    }
  }
}
