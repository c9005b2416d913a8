package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.eclipsestore.Durability;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration defaults, parsing and clear errors. */
class KvmqConfigTest {

  static KvmqConfig of(Map<String, String> values) {
    return new KvmqConfig(key -> Optional.ofNullable(values.get(key)));
  }

  @Test
  void postgresVacuumEveryIsZeroOrAtLeastAThousandKeysAndABadValueNamesTheKey() {
    assertThat(KvmqRuntime.Postgres.vacuumEvery("0")).isZero();
    assertThat(KvmqRuntime.Postgres.vacuumEvery(" 250000 ")).isEqualTo(250_000);
    assertThatThrownBy(() -> KvmqRuntime.Postgres.vacuumEvery("999"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("kvmq.postgres.vacuum-every")
        .hasMessageContaining("at least 1000")
        .hasMessageContaining("\"999\"");
    assertThatThrownBy(() -> KvmqRuntime.Postgres.vacuumEvery("lots"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("kvmq.postgres.vacuum-every")
        .hasMessageContaining("\"lots\"");
  }

  @Test
  void defaultsNeedNoConfiguration() {
    KvmqConfig c = of(Map.of());
    assertThat(c.store()).isEqualTo("eclipsestore");
    assertThat(c.durability()).isEqualTo(Durability.FSYNC);
    assertThat(c.restEnabled()).as("served where the application maps it").isTrue();
    assertThat(c.restEnabledExplicitly()).isFalse();
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.dataDir()).isAbsolute();
  }

  @Test
  void valuesAreParsed() {
    KvmqConfig c =
        of(
            Map.of(
                "kvmq.store",
                "MEMORY",
                "kvmq.durability",
                "process-crash-safe",
                "kvmq.rest.enabled",
                "true",
                "kvmq.data-dir",
                "/srv/kvmq",
                "kvmq.shutdown-timeout",
                "PT5S"));
    assertThat(c.store()).isEqualTo("memory");
    assertThat(c.durability()).isEqualTo(Durability.PROCESS_CRASH_SAFE);
    assertThat(c.restEnabled()).isTrue();
    assertThat(c.dataDir()).isEqualTo(Path.of("/srv/kvmq"));
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void theAdminApiIsOnUnlessSetToFalseAndABadValueNamesTheKey() {
    assertThat(of(Map.of("kvmq.rest.enabled", "FALSE")).restEnabled()).isFalse();
    assertThat(of(Map.of("kvmq.rest.enabled", " true ")).restEnabled()).isTrue();
    assertThat(of(Map.of("kvmq.rest.enabled", "true")).restEnabledExplicitly()).isTrue();
    assertThat(of(Map.of("kvmq.rest.enabled", "false")).restEnabledExplicitly()).isFalse();
    assertThatThrownBy(() -> of(Map.of("kvmq.rest.enabled", "yes")).restEnabled())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kvmq.rest.enabled is \"yes\"; use true or false");
  }

  /**
   * An application that asks for the admin API by the property alone (as before 2026-12-06) is told
   * it is not served, and how to map it; one that mapped it, or did not ask, is told nothing.
   */
  @Test
  void askingForTheApiWithoutMappingItIsWarnedOf() {
    KvmqConfig asked = of(Map.of("kvmq.rest.enabled", "true"));
    assertThat(KvmqPathCheck.unmappedApi(asked, java.util.List.of()))
        .hasValueSatisfying(
            m ->
                assertThat(m)
                    .contains(
                        "kvmq.rest.enabled=true",
                        "mapped nowhere",
                        "<servlet-mapping>",
                        "dev.kvmq.jakarta.KvmqRestApplication",
                        "/kvmq/*"));
    assertThat(KvmqPathCheck.unmappedApi(asked, java.util.List.of("/kvmq/*"))).isEmpty();
    assertThat(KvmqPathCheck.unmappedApi(of(Map.of()), java.util.List.of())).isEmpty();
    assertThat(
            KvmqPathCheck.unmappedApi(
                of(Map.of("kvmq.rest.enabled", "false")), java.util.List.of()))
        .isEmpty();
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> of(Map.of("kvmq.durability", "maybe")).durability())
        .hasMessageContaining("kvmq.durability")
        .hasMessageContaining("fsync or process-crash-safe");
    assertThatThrownBy(() -> of(Map.of("kvmq.shutdown-timeout", "30s")).shutdownTimeout())
        .hasMessageContaining("kvmq.shutdown-timeout")
        .hasMessageContaining("ISO-8601");
  }

  @Test
  void aDefaultDataDirectoryUnderTheTemporaryDirectoryIsRefused(@TempDir Path tmp)
      throws Exception {
    // Payara Micro without --rootdir: its instance directory is a new directory under
    // java.io.tmpdir.
    Path instance = Files.createDirectories(tmp.resolve("payaramicro-rt123tmp"));
    Map<String, String> jvm =
        Map.of("java.io.tmpdir", tmp.toString(), "com.sun.aas.instanceRoot", instance.toString());
    assertThat(of(Map.of()).temporaryDataDir(jvm::get))
        .hasValueSatisfying(
            m ->
                assertThat(m)
                    .startsWith("KVMQ-006: ")
                    .contains(
                        instance.resolve("kvmq").toString(),
                        "java.io.tmpdir",
                        "kvmq.data-dir",
                        "--rootdir"));
    // An explicit choice is the user's, even under the temporary directory: a warning, not a
    // refusal.
    KvmqConfig chosen = of(Map.of("kvmq.data-dir", instance.resolve("kvmq").toString()));
    assertThat(chosen.temporaryDataDir(jvm::get)).isEmpty();
    assertThat(chosen.chosenTemporaryDataDir(jvm::get))
        .hasValueSatisfying(w -> assertThat(w).contains("kvmq.data-dir", "java.io.tmpdir"));
    assertThat(of(Map.of()).chosenTemporaryDataDir(jvm::get)).isEmpty();
    // Stores without a data directory.
    assertThat(of(Map.of("kvmq.store", "memory")).temporaryDataDir(jvm::get)).isEmpty();
    // Payara Micro with --rootdir elsewhere, WildFly's data directory elsewhere.
    Path elsewhere = Files.createDirectories(tmp.resolveSibling(tmp.getFileName() + "-root"));
    try {
      assertThat(
              of(Map.of())
                  .temporaryDataDir(
                      Map.of(
                              "java.io.tmpdir",
                              tmp.toString(),
                              "com.sun.aas.instanceRoot",
                              elsewhere.toString())
                          ::get))
          .isEmpty();
      assertThat(
              of(Map.of())
                  .temporaryDataDir(
                      Map.of(
                              "java.io.tmpdir",
                              tmp.toString(),
                              "jboss.server.data.dir",
                              elsewhere.toString())
                          ::get))
          .isEmpty();
    } finally {
      Files.delete(elsewhere);
    }
  }

  @Test
  void realPathsAreCompared(@TempDir Path dir) throws Exception {
    // java.io.tmpdir reached through a symbolic link, the instance directory by its real path
    // (and not created yet).
    Path real = Files.createDirectories(dir.resolve("real-tmp"));
    Path link = Files.createSymbolicLink(dir.resolve("tmp-link"), real);
    Map<String, String> jvm =
        Map.of(
            "java.io.tmpdir",
            link.toString(),
            "com.sun.aas.instanceRoot",
            real.resolve("payaramicro-rt1tmp").toString());
    assertThat(of(Map.of()).temporaryDataDir(jvm::get))
        .hasValueSatisfying(m -> assertThat(m).startsWith("KVMQ-006"));
    Map<String, String> reversed =
        Map.of(
            "java.io.tmpdir",
            real.toString(),
            "com.sun.aas.instanceRoot",
            link.resolve("x").toString());
    assertThat(of(Map.of()).temporaryDataDir(reversed::get)).isPresent();
    // A sibling whose name starts like the temporary directory is not under it.
    Map<String, String> sibling =
        Map.of(
            "java.io.tmpdir",
            real.toString(),
            "com.sun.aas.instanceRoot",
            dir.resolve("real-tmp-2").toString());
    assertThat(of(Map.of()).temporaryDataDir(sibling::get)).isEmpty();
  }

  @Test
  void systemPropertiesThenEnvironment() {
    System.setProperty("kvmq.test.only-key", " value ");
    try {
      assertThat(KvmqConfig.systemOrEnv("kvmq.test.only-key")).contains("value");
    } finally {
      System.clearProperty("kvmq.test.only-key");
    }
    assertThat(KvmqConfig.systemOrEnv("kvmq.test.absent-key")).isEmpty();
  }
}
