package dev.kvmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.testing.Seeds;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Which listeners a commit calls: exactly those whose prefix one of its written keys starts with,
 * for prefixes and keys that share most of their bytes, as a queue's do, and differ anywhere.
 */
class SubscriberRegistryTest {

  private static final String[] NAMES = {"", "q", "qq", "ready", "readz", "leased", "jobs"};

  private static Key randomKey(SplittableRandom r, int maxParts) {
    int n = 1 + r.nextInt(maxParts);
    Object[] parts = new Object[n];
    for (int i = 0; i < n; i++) {
      parts[i] = r.nextInt(6) == 0 ? (Object) (long) r.nextInt(3) : NAMES[r.nextInt(NAMES.length)];
    }
    return Key.of(parts);
  }

  @Test
  void aCommitCallsExactlyTheListenersWhosePrefixAWrittenKeyStartsWith() {
    Seeds.forEach(
        "aCommitCallsExactlyTheListenersWhosePrefixAWrittenKeyStartsWith",
        2_000,
        1,
        r -> {
          SubscriberRegistry registry = new SubscriberRegistry(System.getLogger("test"));
          List<Key> prefixes = new ArrayList<>();
          List<AtomicInteger> calls = new ArrayList<>();
          for (int i = 1 + r.nextInt(6); i > 0; i--) {
            Key prefix = randomKey(r, 3);
            AtomicInteger count = new AtomicInteger();
            registry.subscribe(prefix, count::incrementAndGet);
            prefixes.add(prefix);
            calls.add(count);
          }
          List<AtomicOperation> applied = new ArrayList<>();
          List<Key> written = new ArrayList<>();
          for (int i = 1 + r.nextInt(3); i > 0; i--) {
            AtomicOperation.Builder op = AtomicOperation.builder();
            Set<Key> inOp = new HashSet<>();
            for (int j = r.nextInt(4); j > 0; j--) {
              Key key = randomKey(r, 4);
              if (!inOp.add(key)) {
                continue; // an operation writes a key once
              }
              if (r.nextBoolean()) {
                op.set(key, new byte[] {1});
              } else {
                op.delete(key);
              }
              written.add(key);
            }
            applied.add(op.build());
          }
          registry.notifyCommitted(applied);
          for (int i = 0; i < prefixes.size(); i++) {
            Key prefix = prefixes.get(i);
            boolean touched = written.stream().anyMatch(k -> k.startsWith(prefix));
            assertThat(calls.get(i).get())
                .as("listener of %s after writes of %s", prefix, written)
                .isEqualTo(touched ? 1 : 0);
          }
        });
  }
}
