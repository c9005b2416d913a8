package dev.kvmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The builder's rules at every size: small operations scan for a repeated key, big ones hash. */
class AtomicOperationTest {

  @Test
  void aKeyWrittenTwiceIsRefusedAndRepeatedChecksMustAgreeAtEverySize() {
    for (int n = 1; n <= 40; n++) {
      AtomicOperation.Builder b = AtomicOperation.builder();
      List<Key> keys = new ArrayList<>();
      for (long i = 0; i < n; i++) {
        Key k = Key.of("k", i);
        keys.add(k);
        b.check(k, i + 1).set(k, new byte[] {(byte) i});
      }
      for (Key k : keys) {
        long vs = k.getLong(1) + 1;
        b.check(k, vs); // the same check again: kept once
        assertThatThrownBy(() -> b.check(k, vs + 1))
            .as("size %s", keys.size())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("checked twice");
        assertThatThrownBy(() -> b.delete(k))
            .as("size %s", keys.size())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("written twice");
      }
      AtomicOperation op = b.build();
      assertThat(op.checks())
          .extracting(AtomicOperation.Check::key)
          .containsExactlyElementsOf(keys);
      assertThat(op.mutations())
          .extracting(AtomicOperation.Mutation::key)
          .containsExactlyElementsOf(keys);
      b.delete(Key.of("other"));
      assertThat(op.mutations()).as("a built operation does not change").hasSize(n);
      assertThat(b.build().mutations()).hasSize(n + 1);
    }
  }
}
