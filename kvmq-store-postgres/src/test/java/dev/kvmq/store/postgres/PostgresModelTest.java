package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import dev.kvmq.testing.Seeds;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The commit function against the in-memory store as a model: seeded random batches of operations
 * (checks that pass and fail, sets and deletes of overlapping keys, read-only operations, several
 * operations on one key in one batch) give exactly the same results, versionstamps included, and
 * leave exactly the same entries.
 */
@PostgresTest
class PostgresModelTest {

  @Test
  void commitAllBehavesLikeTheInMemoryModel(TestSchema fresh) {
    TestDatabase db = fresh.db();
    String schema = fresh.name();
    AtomicInteger applied = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    Seeds.forEach(
        "commitAll against the model",
        25,
        1000,
        random -> {
          String prefix = "m" + Math.abs(random.nextInt(1_000_000));
          try (KvStore model = new InMemoryKvStore();
              KvStore store =
                  PostgresKvStore.builder(db.pool()).schema(schema).tablePrefix(prefix).build()) {
            for (int step = 0; step < 25; step++) {
              List<AtomicOperation> batch = new ArrayList<>();
              int size = 1 + random.nextInt(5);
              for (int i = 0; i < size; i++) {
                batch.add(randomOperation(random, model));
              }
              List<CommitResult> expected = model.commitAll(batch);
              List<CommitResult> actual = store.commitAll(batch);
              assertThat(actual).as("step %d: %s", step, batch).isEqualTo(expected);
              actual.forEach(r -> (r.ok() ? applied : refused).incrementAndGet());
              assertSameEntries(model, store);
            }
            KeyRange all = KeyRange.prefix(Key.of("m"));
            assertThat(keys(store.list(all, 3, true))).isEqualTo(keys(model.list(all, 3, true)));
            assertThat(store.count(all)).isEqualTo(model.count(all));
          }
        });
    assertThat(applied.get()).as("operations applied").isGreaterThan(100);
    assertThat(refused.get()).as("operations refused by a check").isGreaterThan(100);
  }

  private static AtomicOperation randomOperation(SplittableRandom random, KvStore model) {
    AtomicOperation.Builder op = AtomicOperation.builder();
    Set<Key> checked = new HashSet<>();
    for (int c = random.nextInt(3); c > 0; c--) {
      Key k = randomKey(random);
      if (!checked.add(k)) {
        continue;
      }
      Optional<KvEntry> current = model.get(k);
      switch (random.nextInt(4)) {
        case 0 -> op.checkAbsent(k);
        case 1 -> op.check(k, 1 + random.nextInt(40));
        default -> op.check(k, current.map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT));
      }
    }
    Set<Key> written = new HashSet<>();
    for (int m = random.nextInt(4); m > 0; m--) {
      Key k = randomKey(random);
      if (!written.add(k)) {
        continue;
      }
      if (random.nextInt(3) == 0) {
        op.delete(k);
      } else {
        byte[] value = new byte[random.nextInt(6)];
        random.nextBytes(value);
        op.set(k, value);
      }
    }
    return op.build();
  }

  private static Key randomKey(SplittableRandom random) {
    long i = random.nextInt(6);
    return switch (random.nextInt(3)) {
      case 0 -> Key.of("m", i);
      case 1 -> Key.of("m", i, "x");
      default -> Key.of("m", "s" + i, new byte[] {(byte) i, 0});
    };
  }

  private static void assertSameEntries(KvStore model, KvStore store) {
    List<KvEntry> expected = model.list(KeyRange.all());
    List<KvEntry> actual = store.list(KeyRange.all());
    assertThat(keys(actual)).isEqualTo(keys(expected));
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i).versionstamp())
          .as("versionstamp of %s", expected.get(i).key())
          .isEqualTo(expected.get(i).versionstamp());
      assertThat(actual.get(i).value())
          .as("value of %s", expected.get(i).key())
          .isEqualTo(expected.get(i).value());
    }
  }

  private static List<Key> keys(List<KvEntry> entries) {
    return entries.stream().map(KvEntry::key).toList();
  }
}
