package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.CommitResult;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The commit function's two ways to apply a batch (schema-v5.sql): a statement per check and per
 * write, one operation after the other, and, for a batch in which no operation writes a key another
 * one checks or writes, one statement per kind. Random batches over a few keys go to PostgreSQL and
 * to the kernel's in-memory store, the reference; each operation's outcome and the contents after
 * every batch must agree, and both ways must have been taken many times.
 */
@PostgresTest
class PostgresCommitPathsTest {

  private static final int KEYS = 20;
  private static final int BATCHES = 1_000;

  private TestDatabase db;
  private PostgresKvStore postgres;
  private InMemoryKvStore reference;

  @BeforeEach
  void open(TestSchema fresh) {
    db = fresh.db();
    postgres = fresh.store().build();
    reference = new InMemoryKvStore();
  }

  @AfterEach
  void close() {
    postgres.close();
    reference.close();
  }

  /** What an operation of a random batch does, independent of the stores' versionstamps. */
  private record Step(List<int[]> checks, List<int[]> writes) {}

  @Test
  void batchesGiveWhatTheReferenceGivesOperationByOperation() {
    Random random = new Random(4);
    int batchStatements = 0;
    int oneByOne = 0;
    int failedChecks = 0;
    for (int b = 0; b < BATCHES; b++) {
      List<Step> steps = randomBatch(random);
      List<AtomicOperation> onPostgres = operations(steps, postgres);
      List<AtomicOperation> onReference = operations(steps, reference);
      if (usesBatchStatements(onPostgres)) {
        batchStatements++;
      } else {
        oneByOne++;
      }

      List<CommitResult> got = postgres.commitAll(onPostgres);
      List<CommitResult> expected = reference.commitAll(onReference);

      assertThat(got)
          .extracting(CommitResult::ok)
          .as("batch %d: %s", b, steps)
          .isEqualTo(expected.stream().map(CommitResult::ok).toList());
      assertThat(contents(postgres)).as("batch %d: %s", b, steps).isEqualTo(contents(reference));
      long previous = 0;
      for (int i = 0; i < got.size(); i++) {
        if (!got.get(i).ok()) {
          failedChecks++;
          continue;
        }
        long vs = got.get(i).versionstamp();
        if (onPostgres.get(i).isReadOnly()) {
          assertThat(vs).as("a read-only operation: the latest versionstamp").isGreaterThan(0);
        } else {
          assertThat(vs)
              .as("writes take increasing versionstamps in batch order")
              .isGreaterThan(previous);
          previous = vs;
          for (AtomicOperation.Mutation m : onPostgres.get(i).mutations()) {
            Optional<KvEntry> e = postgres.get(m.key());
            if (e.isPresent()) {
              assertThat(e.get().versionstamp()).isGreaterThanOrEqualTo(vs);
            }
          }
        }
      }
    }
    assertThat(batchStatements)
        .as("batches applied with one statement per kind")
        .isGreaterThan(100);
    assertThat(oneByOne).as("batches applied one operation after the other").isGreaterThan(100);
    assertThat(failedChecks).as("operations refused by a check").isGreaterThan(100);
  }

  /**
   * 1 to 6 operations, each with up to 2 checks (0: the key as it is before the batch, 1: absent,
   * 2: a versionstamp it never had) and up to 3 writes (a set or a delete) of distinct keys.
   */
  private static List<Step> randomBatch(Random random) {
    List<Step> steps = new ArrayList<>();
    int ops = 1 + random.nextInt(6);
    for (int o = 0; o < ops; o++) {
      List<int[]> checks = new ArrayList<>();
      List<int[]> writes = new ArrayList<>();
      List<Integer> checked = new ArrayList<>();
      for (int c = random.nextInt(3); c > 0; c--) {
        int k = random.nextInt(KEYS);
        if (!checked.contains(k)) {
          checked.add(k);
          int kind = random.nextInt(10) < 7 ? 0 : 1 + random.nextInt(2);
          checks.add(new int[] {k, kind});
        }
      }
      List<Integer> written = new ArrayList<>();
      for (int w = random.nextInt(4); w > 0; w--) {
        int k = random.nextInt(KEYS);
        if (!written.contains(k)) {
          written.add(k);
          int value = random.nextInt(4) == 0 ? -1 : random.nextInt(100); // -1: delete
          writes.add(new int[] {k, value});
        }
      }
      steps.add(new Step(checks, writes));
    }
    return steps;
  }

  /** The batch's operations for {@code store}, its checks against its own versionstamps. */
  private static List<AtomicOperation> operations(List<Step> steps, KvStore store) {
    List<AtomicOperation> ops = new ArrayList<>();
    for (Step step : steps) {
      AtomicOperation.Builder op = AtomicOperation.builder();
      for (int[] check : step.checks()) {
        Key key = key(check[0]);
        long now = store.get(key).map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT);
        long expected =
            switch (check[1]) {
              case 0 -> now;
              case 1 -> AtomicOperation.ABSENT;
              default -> now + 1_000_000;
            };
        op.check(key, expected);
      }
      for (int[] write : step.writes()) {
        if (write[1] < 0) {
          op.delete(key(write[0]));
        } else {
          op.set(key(write[0]), new byte[] {(byte) write[1]});
        }
      }
      ops.add(op.build());
    }
    return ops;
  }

  /** Whether the store applies {@code ops} with one statement per kind. */
  private static boolean usesBatchStatements(List<AtomicOperation> ops) {
    List<Integer> checkOp = new ArrayList<>();
    List<byte[]> checkKey = new ArrayList<>();
    List<Integer> mutOp = new ArrayList<>();
    List<byte[]> mutKey = new ArrayList<>();
    for (int i = 0; i < ops.size(); i++) {
      for (AtomicOperation.Check c : ops.get(i).checks()) {
        checkOp.add(i + 1);
        checkKey.add(c.key().encoded());
      }
      for (AtomicOperation.Mutation m : ops.get(i).mutations()) {
        mutOp.add(i + 1);
        mutKey.add(m.key().encoded());
      }
    }
    return Transactions.batchStatements(
        checkOp.stream().mapToInt(Integer::intValue).toArray(),
        checkKey.toArray(new byte[0][]),
        mutOp.stream().mapToInt(Integer::intValue).toArray(),
        mutKey.toArray(new byte[0][]));
  }

  private static Key key(int k) {
    return Key.of("kvmq", "q", "k", (long) k);
  }

  private static Map<Key, Integer> contents(KvStore store) {
    Map<Key, Integer> m = new LinkedHashMap<>();
    for (KvEntry e : store.list(KeyRange.prefix(Key.of("kvmq")))) {
      m.put(e.key(), (int) e.value()[0]);
    }
    return m;
  }
}
