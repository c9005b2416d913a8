package dev.kvmq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvmq.store.Key;
import dev.kvmq.store.KvStore.ClaimPlanner.RecordKeyRule;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class QueueKeysTest {

  /**
   * What a store does with the rule: the prefix's bytes, then the index key's bytes less the
   * dropped ones.
   */
  private static byte[] apply(RecordKeyRule rule, Key indexKey) {
    byte[] prefix = rule.prefix().encoded();
    byte[] index = indexKey.encoded();
    byte[] out = Arrays.copyOf(prefix, prefix.length + index.length - rule.dropped());
    System.arraycopy(index, rule.dropped(), out, prefix.length, index.length - rule.dropped());
    return out;
  }

  @Test
  void theReadyToJobRuleGivesTheJobKeyOfEveryReadyEntry() {
    Random random = new Random(42);
    List<String> queues = List.of("q", "", "émails", "a\u0000b", "x".repeat(300));
    List<Double> priorities =
        List.of(
            0.0,
            -0.0,
            1.5,
            -7.0,
            Double.MAX_VALUE,
            -Double.MAX_VALUE,
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY,
            Double.MIN_VALUE);
    int checked = 0;
    for (String queue : queues) {
      QueueKeys keys = new QueueKeys(queue);
      RecordKeyRule rule = keys.readyToJob();
      for (double priority : priorities) {
        for (int i = 0; i < 50; i++) {
          String id = i == 0 ? new Ulid(random).next(1_700_000_000_000L) : randomId(random);
          JobRecord.Draft d = new JobRecord.Draft();
          d.id = id;
          d.priority = priority;
          Key index = keys.indexOf(d.build());
          assertArrayEquals(
              keys.job(id).encoded(),
              apply(rule, index),
              () -> "queue '" + queue + "', id '" + id + "', priority " + priority);
          checked++;
        }
      }
    }
    assertEquals(queues.size() * priorities.size() * 50, checked);
  }

  private static String randomId(Random random) {
    StringBuilder sb = new StringBuilder();
    int n = random.nextInt(40);
    for (int i = 0; i < n; i++) {
      int kind = random.nextInt(4);
      sb.append(
          switch (kind) {
            case 0 -> (char) 0;
            case 1 -> (char) ('a' + random.nextInt(26));
            case 2 -> (char) (0x80 + random.nextInt(0x700));
            default -> "😀";
          });
    }
    return sb.toString();
  }
}
