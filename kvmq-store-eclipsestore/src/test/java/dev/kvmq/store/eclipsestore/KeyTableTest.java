package dev.kvmq.store.eclipsestore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The point-lookup table of the key index against a {@link HashMap} of the same keys. */
class KeyTableTest {

  /**
   * Keys like the queue's: a long shared prefix and a short distinct tail, some of them prefixes of
   * others, some of every length from 0 to 20 bytes.
   */
  private static byte[] key(SplittableRandom r) {
    int kind = r.nextInt(3);
    if (kind == 0) {
      byte[] k = new byte[r.nextInt(21)];
      for (int i = 0; i < k.length; i++) {
        k[i] = (byte) r.nextInt(4);
      }
      return k;
    }
    byte[] prefix = "\u0002kvmq\u0000\u0002jobs\u0000\u0002ready\u0000".getBytes();
    int n = r.nextInt(kind == 1 ? 300 : 100_000);
    byte[] tail = Integer.toString(n).getBytes();
    byte[] k = new byte[prefix.length + tail.length];
    System.arraycopy(prefix, 0, k, 0, prefix.length);
    System.arraycopy(tail, 0, k, prefix.length, tail.length);
    return k;
  }

  /** An entry as the page map makes them: packed, sometimes at an offset in a larger array. */
  private static Entry entry(byte[] key, SplittableRandom r) {
    byte[] packed = Entry.pack(key, new byte[r.nextInt(5)], r.nextLong(1, Long.MAX_VALUE));
    int off = r.nextInt(3) * 7;
    byte[] buf = new byte[off + packed.length + r.nextInt(9)];
    System.arraycopy(packed, 0, buf, off, packed.length);
    return new Entry(buf, off);
  }

  @Test
  void findsExactlyTheKeysAddedAndNotRemovedThroughGrowthAndShrinking() {
    for (long seed = 1; seed <= 20; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      KeyTable table = new KeyTable();
      Map<ByteBuffer, Entry> model = new HashMap<>();
      int steps = 20_000;
      for (int step = 0; step < steps; step++) {
        byte[] k = key(r);
        ByteBuffer b = ByteBuffer.wrap(k);
        // grow for the first half, shrink for the second: removals run more often then
        boolean removing = r.nextInt(100) < (step < steps / 2 ? 30 : 75);
        Entry there = model.get(b);
        if (removing && there != null) {
          table.remove(there, KeyTable.hash(k));
          model.remove(b);
        } else if (!removing && there == null) {
          Entry e = entry(k, r);
          table.add(e, KeyTable.hash(k));
          model.put(b, e);
        }
        assertSame(model.get(b), table.find(k), "seed " + seed + " step " + step);
        if (step % 997 == 0) {
          assertTrue(table.consistent(), "seed " + seed + " step " + step);
          for (Map.Entry<ByteBuffer, Entry> m : model.entrySet()) {
            assertSame(m.getValue(), table.find(m.getKey().array()));
          }
        }
      }
      assertEquals(model.size(), table.size());
      assertTrue(table.consistent());
      assertTrue(
          table.capacity() <= Math.max(KeyTable.MIN_CAPACITY, 8 * Math.max(1, model.size())),
          "shrinks as keys go: " + table.capacity() + " slots for " + model.size() + " keys");
    }
  }

  @Test
  void aTableBuiltFromEntriesFindsEachAndNoOther() {
    SplittableRandom r = new SplittableRandom(7);
    Map<ByteBuffer, Entry> model = new HashMap<>();
    while (model.size() < 5_000) {
      byte[] k = key(r);
      model.computeIfAbsent(ByteBuffer.wrap(k), b -> entry(k, r));
    }
    KeyTable table = KeyTable.of(new ArrayList<>(model.values()));
    assertEquals(KeyTable.capacityFor(5_000), table.capacity());
    assertTrue(table.consistent());
    for (Map.Entry<ByteBuffer, Entry> m : model.entrySet()) {
      assertSame(m.getValue(), table.find(m.getKey().array()));
    }
    for (int i = 0; i < 5_000; i++) {
      byte[] k = key(r);
      assertSame(model.get(ByteBuffer.wrap(k)), table.find(k));
    }
  }

  @Test
  void removingAnEntryThatIsNotThereIsABugAndSaysSo() {
    SplittableRandom r = new SplittableRandom(3);
    KeyTable table = new KeyTable();
    Entry in = entry(new byte[] {1, 2, 3}, r);
    table.add(in, KeyTable.hash(new byte[] {1, 2, 3}));
    Entry twin = entry(new byte[] {1, 2, 3}, r); // same key, another object
    assertThrows(
        IllegalStateException.class, () -> table.remove(twin, KeyTable.hash(new byte[] {1, 2, 3})));
    assertThrows(
        IllegalStateException.class,
        () -> table.remove(entry(new byte[] {9}, r), KeyTable.hash(new byte[] {9})));
    assertSame(in, table.find(new byte[] {1, 2, 3}));
    assertNull(table.find(new byte[] {1, 2}));
  }

  @Test
  void theHashReadsOnlyItsRangeAndSpreadsKeysThatDifferInTheirLastByte() {
    byte[] a = {9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9};
    byte[] b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assertEquals(KeyTable.hash(b, 0, b.length), KeyTable.hash(a, 2, 12));
    List<Integer> homes = new ArrayList<>();
    byte[] k = "\u0002kvmq\u0000\u0002jobs\u0000\u0002000000".getBytes();
    for (int i = 0; i < 64; i++) {
      k[k.length - 1] = (byte) i;
      homes.add(KeyTable.hash(k, 0, k.length) & 127);
    }
    // 64 keys into 128 slots: a hash that ignored the last byte would put them all in one
    assertTrue(homes.stream().distinct().count() > 32, "distinct home slots: " + homes);
  }
}
