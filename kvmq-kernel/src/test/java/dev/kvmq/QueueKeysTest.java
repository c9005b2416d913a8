package dev.kvmq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /**
   * The claim passes the keys it read to its move, which uses each only when it is the key it would
   * build: isJob and isReadyIndexOf must say yes exactly for that key, over keys that differ from
   * it in one part, in length, in type or in queue, and over records in every state.
   */
  @Test
  void aKeyReadIsTakenForTheKeyAMoveBuildsExactlyWhenItIsThatKey() {
    Random random = new Random(7);
    QueueKeys keys = new QueueKeys("q");
    QueueKeys other = new QueueKeys("q2");
    int matched = 0;
    int refused = 0;
    for (int i = 0; i < 2_000; i++) {
      JobRecord.Draft d = new JobRecord.Draft();
      d.state = JobRecord.State.values()[random.nextInt(JobRecord.State.values().length)];
      // a held job's index key holds its id's time: its id is a ULID, as every pushed job's
      boolean ulid = d.state == JobRecord.State.HELD || random.nextBoolean();
      d.id = ulid ? new Ulid(random).next(1_700_000_000_000L) : randomId(random);
      d.priority = List.of(0.0, -0.0, 1.5, -7.0, Double.NaN).get(random.nextInt(5));
      d.leaseUntil = random.nextInt(3);
      d.delayUntil = random.nextInt(3);
      if (random.nextInt(4) == 0) {
        d.group = "g";
        d.parked = d.state == JobRecord.State.READY && random.nextBoolean();
      }
      JobRecord r = d.build();
      String otherId = randomId(random);
      long rank = QueueKeys.rank(r.priority);
      List<Key> candidates =
          List.of(
              keys.indexOf(r),
              keys.readyIndex().append(rank, r.id),
              keys.readyIndex().append(rank + 1, r.id),
              keys.readyIndex().append(rank, otherId),
              keys.readyIndex().append(String.valueOf(rank), r.id),
              keys.readyIndex()
                  .append(rank, r.id.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
              keys.readyIndex().append(rank, r.id, 0L),
              keys.delayedIndex().append(rank, r.id),
              other.readyIndex().append(rank, r.id),
              keys.job(r.id),
              keys.job(otherId),
              other.job(r.id),
              keys.job(r.id).append(1L));
      boolean readyNotParked = r.state == JobRecord.State.READY && !r.parked;
      for (Key candidate : candidates) {
        boolean isIndex = keys.isReadyIndexOf(candidate, r);
        assertEquals(
            readyNotParked && candidate.equals(keys.indexOf(r)),
            isIndex,
            () -> candidate + " as the index key of " + r.state + " " + r.id);
        boolean isJob = keys.isJob(candidate, r.id);
        assertEquals(candidate.equals(keys.job(r.id)), isJob, () -> candidate + " as job " + r.id);
        if (isIndex || isJob) {
          matched++;
        } else {
          refused++;
        }
      }
    }
    String counted = matched + " matched, " + refused + " refused";
    assertTrue(matched > 2_000 && refused > 2_000, counted);
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
