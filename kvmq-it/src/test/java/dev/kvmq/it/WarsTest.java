package dev.kvmq.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import org.junit.jupiter.api.Test;

/** The root of a deployed WAR, from the URL Arquillian injects, with or without its path. */
class WarsTest {

  @Test
  void theInjectedPathIsKept() throws Exception {
    URL base = new URL("http://10.0.0.5:8961/kvmq-it/");
    assertThat(Wars.contextPath(base, "kvmq-it.war")).isEqualTo("/kvmq-it/");
    assertThat(Wars.root(base, "kvmq-it.war")).hasToString("http://10.0.0.5:8961/kvmq-it/");
  }

  @Test
  void aUrlWithNoPathGetsTheWarsName() throws Exception {
    // as injected once on Payara Micro 7: host and port, no context root
    assertThat(Wars.root(new URL("http://10.0.0.5:8961"), "kvmq-escaping.war"))
        .hasToString("http://10.0.0.5:8961/kvmq-escaping/");
    assertThat(Wars.contextPath(new URL("http://10.0.0.5:8961/"), "kvmq-escaping.war"))
        .isEqualTo("/kvmq-escaping/");
  }

  @Test
  void aPathWithoutItsTrailingSlashGetsOne() throws Exception {
    assertThat(Wars.contextPath(new URL("http://h:1/kvmq-flow"), "kvmq-flow.war"))
        .isEqualTo("/kvmq-flow/");
  }

  @Test
  void aNameThatIsNoWarIsRefused() {
    assertThatThrownBy(() -> Wars.contextPath(new URL("http://h:1"), "kvmq-flow"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvmq-flow");
  }
}
