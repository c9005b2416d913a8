package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.eclipsestore.Durability;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Configuration defaults, parsing and clear errors. */
class KvmqConfigTest {

  static KvmqConfig of(Map<String, String> values) {
    return new KvmqConfig(key -> Optional.ofNullable(values.get(key)));
  }

  @Test
  void defaultsNeedNoConfiguration() {
    KvmqConfig c = of(Map.of());
    assertThat(c.store()).isEqualTo("eclipsestore");
    assertThat(c.durability()).isEqualTo(Durability.FSYNC);
    assertThat(c.restEnabled()).isFalse();
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.dataDir()).isAbsolute();
  }

  @Test
  void valuesAreParsed() {
    KvmqConfig c = of(Map.of("kvmq.store", "MEMORY", "kvmq.durability", "process-crash-safe",
        "kvmq.rest.enabled", "true", "kvmq.data-dir", "/srv/kvmq", "kvmq.shutdown-timeout", "PT5S"));
    assertThat(c.store()).isEqualTo("memory");
    assertThat(c.durability()).isEqualTo(Durability.PROCESS_CRASH_SAFE);
    assertThat(c.restEnabled()).isTrue();
    assertThat(c.dataDir()).isEqualTo(Path.of("/srv/kvmq"));
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> of(Map.of("kvmq.durability", "maybe")).durability())
        .hasMessageContaining("kvmq.durability").hasMessageContaining("fsync or process-crash-safe");
    assertThatThrownBy(() -> of(Map.of("kvmq.shutdown-timeout", "30s")).shutdownTimeout())
        .hasMessageContaining("kvmq.shutdown-timeout").hasMessageContaining("ISO-8601");
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
