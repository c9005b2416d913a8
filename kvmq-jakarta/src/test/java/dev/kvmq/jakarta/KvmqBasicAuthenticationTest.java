package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Reading the Basic credential: whatever the header holds, a credential or null, never an
 * exception.
 */
class KvmqBasicAuthenticationTest {

  private static String b64(byte[] bytes) {
    return " " + Base64.getEncoder().encodeToString(bytes);
  }

  private static String b64(String s) {
    return b64(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aWellFormedCredentialIsRead() {
    UsernamePasswordCredential c = KvmqBasicAuthentication.decode(b64("admin:pa:ss wörd"));
    assertThat(c.getCaller()).isEqualTo("admin");
    assertThat(c.getPasswordAsString())
        .as("everything after the first colon")
        .isEqualTo("pa:ss wörd");
    assertThat(KvmqBasicAuthentication.decode(b64("admin:")).getPasswordAsString()).isEmpty();
    assertThat(
            KvmqBasicAuthentication.decode(
                    "   "
                        + Base64.getEncoder().encodeToString("a:b".getBytes(StandardCharsets.UTF_8))
                        + "  ")
                .getCaller())
        .as("spaces around the value")
        .isEqualTo("a");
  }

  @Test
  void aMalformedValueIsNoCredential() {
    for (String value :
        new String[] {
          "",
          " ",
          " %%%",
          " ====",
          " a b c",
          "Zm9vOmJhcg==",
          b64("no-colon"),
          b64(":no-user"),
          b64(new byte[] {(byte) 0xff, ':', 'x'})
        }) {
      assertThat(KvmqBasicAuthentication.decode(value)).as("\"%s\"", value).isNull();
    }
  }

  @Test
  void aRealmWithAQuoteIsRefused() {
    assertThatThrownBy(() -> new KvmqBasicAuthentication("a\"b"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new KvmqBasicAuthentication("a\nb"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
