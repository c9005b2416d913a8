package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The cross-origin rule of the admin API's state changes ({@link KvmqRequestFilter#crossOrigin}).
 */
class KvmqRequestFilterTest {

  private static final String HOST = "admin.example:8080";

  @Test
  void aBrowserThatSaysSameOriginOrNoneMayChangeState() {
    assertThat(KvmqRequestFilter.crossOrigin("same-origin", "http://admin.example:8080", HOST))
        .isNull();
    assertThat(KvmqRequestFilter.crossOrigin("Same-Origin", null, HOST)).isNull();
    assertThat(KvmqRequestFilter.crossOrigin("none", null, HOST)).isNull();
  }

  @Test
  void aBrowserThatSaysAnotherSiteIsRefusedWhateverItsOrigin() {
    for (String site : new String[] {"cross-site", "same-site", "something-new"}) {
      assertThat(KvmqRequestFilter.crossOrigin(site, "http://admin.example:8080", HOST))
          .as(site)
          .contains("cross-origin request refused", "Sec-Fetch-Site: " + site);
    }
  }

  @Test
  void withoutFetchMetadataTheOriginMustBeTheRequestsHost() {
    assertThat(KvmqRequestFilter.crossOrigin(null, "http://admin.example:8080", HOST)).isNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "https://ADMIN.example:8080", HOST))
        .as("host names ignore case")
        .isNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "http://evil.example", HOST))
        .contains("Origin http://evil.example is not this server (admin.example:8080)");
    assertThat(KvmqRequestFilter.crossOrigin(null, "http://admin.example:9090", HOST))
        .as("another port")
        .isNotNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "http://admin.example", HOST))
        .as("the default port")
        .isNotNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "null", HOST))
        .as("an opaque origin")
        .isNotNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "%%", HOST)).as("not a URI").isNotNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, "http://evil.example", null))
        .as("no Host")
        .isNotNull();
  }

  @Test
  void aClientThatIsNotABrowserSendsNeitherAndPasses() {
    assertThat(KvmqRequestFilter.crossOrigin(null, null, HOST)).isNull();
    assertThat(KvmqRequestFilter.crossOrigin(null, null, null)).isNull();
  }
}
